"""verify-consistency: the data-consistency gate (codes CAKE-D002..D009).

Traces every buffer from the instruction that fills it to the one that reads it and checks
that both agree on the data: the dtypes an MMA accepts and the accumulator it needs, the
M/N/K every MMA operand implies, a view's shape against the tensor its TMA box is cut from,
and the representation in shared memory (the layout a TMA copy writes is the one the MMA
reads; an MMA that reads SMEM through a descriptor needs K-major rows it can address;
generic-proxy writes reach the async proxy only through `lm.fence_proxy()`). CAKE-D001
(a tensor used with two dtypes) belongs to the frontend.

What depends on the target (the instruction an MMA becomes) is read from derive-descriptors'
`cake.instr` or, without it, from the SKU table; derived attributes that are missing make
their check stand down. docs/diagnostics/data.md lists every code with a failing and a
fixed example.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from cakec.diagnostics import DiagnosticSink, Note
from cakec.dialects import cake
from cakec.passes.base import sink_of, span_of, target_of
from cakec.passes.verify_conformance import (
    KernelIndex, at_line, decl_span, dims_of, dtype_of, elem_bytes, get_int, get_ints, get_str,
    index_of, mma_forms, name_of, or_list, view_of, view_swizzle,
)
from cakec.targets import sku as hw
from cakec.targets.descriptors import decode_fields

#: Every (A, B) dtype pair some MMA form takes, and the accumulators each pair allows.
_PAIRS: dict[tuple[str, str], set[str]] = {}
for _sku in hw.SKUS.values():
    for _form in _sku.mma_forms:
        for _pair in _form.ab_dtypes:
            _PAIRS.setdefault(_pair, set()).update(_form.acc_dtypes)
_OPERAND_DTYPES = sorted({d for pair in _PAIRS for d in pair}, key=list(cake.DTYPES).index)

#: Instructions that read SMEM operands through matrix descriptors (K-major core matrices or
#: swizzle atoms), as opposed to mma.sync, whose operands are loaded row by row (ldmatrix).
_DESCRIPTOR_INSTRUCTIONS = {"wgmma": "wgmma_smem", "tcgen05": "tcgen05_smem"}
#: Bytes per row of one core matrix, the only row width an unswizzled operand may have.
_CORE_ROW_BYTES = 16


@dataclass(frozen=True)
class VerifyConsistency(ModulePass):
    """Reports CAKE-D002..D009: producers and consumers that disagree about data."""

    name = "verify-consistency"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, cake.KernelOp):
                sku = hw.SKUS.get(target_of(kernel, ctx, self.target))
                _Consistency(ctx, sink_of(ctx), sku, index_of(ctx, kernel)).run()


@dataclass
class _Consistency:
    ctx: Context
    sink: DiagnosticSink
    sku: hw.Sku | None  # an unknown target is verify-conformance's to report
    idx: KernelIndex

    def run(self) -> None:
        for mma in self.idx.mmas:
            if self.check_dtypes(mma):
                self.check_shapes(mma)
        for load in self.idx.tma_loads:
            self.check_box(load, load.view, "view")
        for store in self.idx.tma_stores:
            self.check_box(store, store.value, "tile")
        for staged in self.idx.stage_tma_stores:
            self.check_box(staged, staged.source, "view")
        for store in self.idx.stage_stores:
            self.check_stage_store(store)
        self.check_aliased_layouts()
        self.check_descriptor_swizzles()
        self.check_unswizzled_operands()
        # Views some role reads through the async proxy: the readers of a hand-off (one map
        # for every role block: building it per block was quadratic in the kernel's length).
        async_read: dict[cake.ViewOp, Operation] = {}
        for op in [*self.idx.mmas, *self.idx.stage_tma_stores] if self.idx.role_blocks else []:
            for view in _async_reads(op):
                if isinstance(view, cake.ViewOp):
                    async_read.setdefault(cake.reuse_root(view), op)
        for role, on_role in self.idx.role_blocks:
            _FenceScan(self, len(role.warps.get_values()), async_read).run(on_role.body.block)

    def error(self, code: str, message: str, op: Operation, notes: Iterable[Note] = (),
              help: str | None = None) -> None:
        self.sink.error(f"CAKE-{code}", message, span_of(op, self.ctx), notes=list(notes),
                        help=help)

    def declared(self, value: SSAValue, what: str = "") -> Note:
        return Note(decl_span(value, self.ctx), f"`{name_of(value)}` is declared here{what}")

    # -- D002, D003: dtypes --

    def check_dtypes(self, mma: cake.MmaOp) -> bool:
        """Whether the dtypes are ones some MMA takes (so shapes are worth comparing)."""
        a, b, acc = dtype_of(mma.a.type), dtype_of(mma.b.type), dtype_of(mma.acc.type)
        if not (a and b and acc):
            return False
        if (a, b) not in _PAIRS:
            self.bad_operands(mma, a, b)
            return False
        if acc not in _PAIRS[(a, b)]:
            legal = sorted(_PAIRS[(a, b)])
            self.error("D003", f"an `lm.mma` on {_pair(a, b)} operands accumulates in "
                       f"{or_list(legal)}, but accumulator `{name_of(mma.acc)}` is {acc}", mma,
                       [self.declared(mma.acc, f" as {acc}")],
                       help=f"declare `{name_of(mma.acc)}` with `dtype=lm.{legal[0]}`")
        return True

    def bad_operands(self, mma: cake.MmaOp, a: str, b: str) -> None:
        wrong = [(v, d) for v, d in (("a", a), ("b", b)) if d not in _OPERAND_DTYPES]
        operands = {"a": mma.a, "b": mma.b}
        notes = [self.declared(operands[w], f" as {d}") for w, d in (("a", a), ("b", b))]
        if view_of(mma.a) is view_of(mma.b):
            notes = notes[:1]
        if wrong:
            which, dt = wrong[0]
            self.error("D002", f"`lm.mma` operand {_party(which, operands[which])} is {dt}, "
                       "which no MMA instruction multiplies", mma, notes,
                       help=f"MMA operands are {or_list(_OPERAND_DTYPES)}")
            return
        self.error("D002", f"`lm.mma` operands disagree: {_party('a', mma.a)} is {a} but "
                   f"{_party('b', mma.b)} is {b}", mma, notes,
                   help=f"convert the register tile to {b}, e.g. `.to(lm.{b})`"
                   if isinstance(mma.a.type, cake.TileType) else
                   "declare both views with the same dtype")

    # -- D004, D005: shapes --

    def check_shapes(self, mma: cake.MmaOp) -> None:
        acc, a, b = dims_of(mma.acc), dims_of(mma.a), dims_of(mma.b)
        parties = {"acc": mma.acc, "a": mma.a, "b": mma.b}
        for role, dims in (("acc", acc), ("a", a), ("b", b)):
            if len(dims) != 2:
                self.error("D004", f"`lm.mma` takes 2-D operands, but "
                           f"{_party(role, parties[role])} has shape {_shape(dims)}", mma,
                           [self.declared(parties[role])],
                           help="`acc` is [M, N], `a` is [M, K] and `b` is [N, K]")
                return
        (m, n), k = acc, a[1]
        if self.transposed(mma, "b", b, (n, k), "N") or \
                self.transposed(mma, "a", a, (m, b[1]), "M"):
            return
        for (x, xv), (y, yv), dim in ((("acc", m), ("a", a[0]), "M"),
                                      (("acc", n), ("b", b[0]), "N"),
                                      (("a", k), ("b", b[1]), "K")):
            if xv != yv:
                self.error("D004", f"{_party(x, parties[x])} has {dim}={xv} but "
                           f"{_party(y, parties[y])} has {dim}={yv}", mma,
                           [self.with_shape(parties[x]), self.with_shape(parties[y])],
                           help="`acc` is [M, N], `a` is [M, K] and `b` is [N, K]")

    def with_shape(self, value: SSAValue) -> Note:
        return self.declared(value, f" with shape {_shape(dims_of(value))}")

    def transposed(self, mma: cake.MmaOp, which: str, dims: tuple[int, ...],
                   expected: tuple[int, int], outer: str) -> bool:
        """An operand stored [K, M|N] (MN-major) where the MMA reads [M|N, K] (K-major)."""
        if dims == expected or dims != expected[::-1]:
            return False
        value = mma.a if which == "a" else mma.b
        self.error("D005", f"{_party(which, value)} is {_shape(dims)} = [K, {outer}], "
                   f"but `lm.mma` reads operands K-major: `{which}` must be [{outer}, K] = "
                   f"{_shape(expected)}", mma, [self.declared(value)],
                   help=f"read it transposed, `{name_of(value)}[s].T` (MN-major: 16-bit operands "
                   f"of wgmma and tcgen05.mma), or store it with K as its inner dimension, shape "
                   f"{_shape(expected)}")
        return True

    # -- D010: a register tile stored into a stage --

    def check_stage_store(self, store: cake.StageStoreOp) -> None:
        """The tile and the stage agree on shape and dtype: the bytes a later MMA or TMA store
        reads are exactly the tile's elements, converted by the author (`.to`)."""
        stage, tile = store.dest.type, store.value.type
        sd, td = dtype_of(stage), dtype_of(tile)
        name = name_of(store.dest)
        if len(stage.dims()) != 2:
            self.error("D010", f"`store` writes 2-D stages; `{name}` has shape "
                       f"{_shape(stage.dims())}", store, [self.declared(store.dest)])
        elif tile.dims() != stage.dims():
            self.error("D010", f"`store` writes a {_shape(tile.dims())} tile into `{name}`, "
                       f"whose stages are {_shape(stage.dims())}", store,
                       [self.declared(store.dest, f" with shape {_shape(stage.dims())}")],
                       help="store a tile of the stage's shape (a view of the tile's shape, "
                       "or an MMA accumulator of it)")
        elif sd != td:
            self.error("D010", f"`store` writes {_a(td)} {td} tile into `{name}`, whose elements are "
                       f"{sd}", store, [self.declared(store.dest, f" as {sd}")],
                       help=f"convert the tile first: `{name}[s].store(tile.to(lm.{sd}))`")

    # -- D006: TMA boxes --

    def check_box(self, op: Operation, value: SSAValue, what: str) -> None:
        tensor = op.tensor  # type: ignore[attr-defined]
        shape, rank = dims_of(value), len(dims_of(tensor))
        tname, vname = name_of(tensor), name_of(value)
        notes = [self.declared(value, f" with shape {_shape(shape)}"),
                 Note(decl_span(tensor, self.ctx), f"`{tname}` is declared here with rank {rank}")]
        if len(shape) > rank:
            self.error("D006", f"{what} `{vname}` is {len(shape)}-D but tensor `{tname}` has "
                       f"rank {rank}; a TMA box has one extent per tensor dimension", op, notes,
                       help=f"declare `{tname}` as `LM.tma{len(shape)}d`, or give `{vname}` at "
                       f"most {rank} dimensions")
            return
        box, copies = get_ints(op, "cake.box"), get_int(op, "cake.copies") or 1
        padded = (1,) * (rank - len(shape)) + shape
        if box is not None and (box[:-1] != padded[:-1] or box[-1] * copies != padded[-1]):
            self.error("D006", f"the TMA box {_shape(box)} of this copy does not tile {what} "
                       f"`{vname}` {_shape(shape)} padded to {_shape(padded)}", op, notes,
                       help="this is a compiler bug in derive-tma; please report it")

    # -- D007: the layout TMA writes is the layout the MMA reads --

    def check_aliased_layouts(self) -> None:
        written = {load.view.owner: load for load in self.idx.tma_loads}
        for mma in self.idx.mmas:
            for operand in (mma.a, mma.b):
                view = view_of(operand)
                if view is None or view in written:
                    continue  # read through the very view TMA fills: one layout by definition
                for other, load in written.items():
                    # a view reusing the bytes holds its own data (the safety gate orders
                    # its writes after the fill's reads: CAKE-S061), in its own layout
                    if isinstance(other, cake.ViewOp) and _overlap(view, other) \
                            and _layout(view) != _layout(other) \
                            and not cake.reuse_related(view, other):
                        self.layout_mismatch(mma, view, other, load)
                        break

    def layout_mismatch(self, mma: cake.MmaOp, read: cake.ViewOp, written: cake.ViewOp,
                        load: cake.TmaLoadOp) -> None:
        r, w = name_of(read.result), name_of(written.result)
        self.error("D007", f"`lm.mma` reads `{r}` as {_describe(read)}, but those bytes are "
                   f"written by TMA through `{w}` as {_describe(written)}", mma,
                   [Note(span_of(load, self.ctx), f"TMA writes `{w}` here"),
                    Note(span_of(read, self.ctx), f"`{r}` overlaps `{w}` in the pool")],
                   help=f"read the stage through `{w}` itself, or declare `{r}` with the same "
                   "shape, dtype and swizzle")

    def check_descriptor_swizzles(self) -> None:
        for mma in self.idx.mmas:
            layout = _DESCRIPTOR_INSTRUCTIONS.get((get_str(mma, "cake.instr") or "").split(".")[0])
            for key, operand in (("cake.a_desc", mma.a), ("cake.b_desc", mma.b)):
                view, bits = view_of(operand), get_int(mma, key)
                if layout is None or view is None or bits is None:
                    continue
                read = decode_fields(layout, bits & ((1 << 64) - 1))["swizzle"]
                stored = view_swizzle(view)
                if stored is not None and read != stored:
                    self.error("D007", f"`lm.mma` reads `{name_of(operand)}` with {read} "
                               f"swizzle, but TMA writes it with {stored} swizzle", mma,
                               [self.declared(operand)],
                               help="this is a compiler bug in derive-descriptors; please "
                               "report it")

    # -- D008: operands a descriptor can address --

    def check_unswizzled_operands(self) -> None:
        loaded = {load.view.owner for load in self.idx.tma_loads}
        reported: set[cake.ViewOp] = set()
        for mma in self.idx.mmas:
            instr = self.instruction(mma)
            for operand in (mma.a, mma.b):
                view = view_of(operand)
                if instr is None or view is None or view in reported or view not in loaded:
                    continue
                if view_swizzle(view) == "none" and _row_bytes(view) > _CORE_ROW_BYTES:
                    reported.add(view)
                    self.unswizzled(mma, view, instr)

    def unswizzled(self, mma: cake.MmaOp, view: cake.ViewOp, instr: str) -> None:
        name, rows = name_of(view.result), _row_bytes(view)
        why = (f"view `{name}` is declared `swizzle=None`, so TMA writes its {rows}-byte rows"
               if view.result.type.swizzle.data == "none" else
               f"no swizzle span divides the {rows}-byte rows of view `{name}`, so TMA writes "
               "them")
        self.error("D008", f"{why} unswizzled, but {instr} reads an unswizzled K-major operand "
                   f"only as {_CORE_ROW_BYTES}-byte core-matrix rows", view,
                   [Note(span_of(mma, self.ctx), f"{instr} reads `{name}` here")],
                   help="omit `swizzle=` (the compiler picks the widest span that divides the "
                   "rows) or choose one such as `swizzle=128b`; rows must be a multiple of 32 "
                   "bytes")

    def instruction(self, mma: cake.MmaOp) -> str | None:
        """The descriptor-based instruction this MMA becomes, or None (mma.sync, unknown)."""
        derived = get_str(mma, "cake.instr")
        if derived is not None:
            family = derived.split(".")[0]
        else:
            forms = mma_forms(self.sku, mma) if self.sku is not None else ()
            family = forms[0].instruction.split(".")[0] if forms else ""
        return {"wgmma": "wgmma", "tcgen05": "tcgen05.mma"}.get(family)


# ---- D009, D011: generic-proxy SMEM writes around MMA and TMA accesses ----------------------

#: Ops that touch SMEM through the async proxy (they read or write views by TMA or MMA), and
#: ops that only name a view or only read it (`lm.sum_sq`). Any other op that takes a view or
#: a stage accesses SMEM with ordinary loads and stores: the generic proxy.
_ASYNC_ACCESS = (cake.TmaLoadOp, cake.MmaOp, cake.TmaStoreStageOp)
_NO_ACCESS = (cake.StageOp, cake.TransposeOp, cake.SumSqOp, cake.StageLoadOp)

#: What a role has done to a view since its last `lm.fence_proxy()`: (view, WRITE) → a generic
#: write nothing fenced yet; (view, READ) → an MMA of the role that other warps of the role
#: may still be reading the view with; (view, GREAD) → a read of the view by the role's threads
#: (`view[s].load()`, `lm.sum_sq`), which other warps may still be doing when one warp writes
#: bytes of it through another view (`reuses=`: the two lay the bytes out differently).
WRITE, READ, GREAD = "write", "read", "gread"
Pending = dict[tuple[cake.ViewOp, str], Operation]


class _FenceScan:
    """Per role, in program order: a generic-proxy SMEM write followed by an async-proxy
    access of the same view with no `lm.fence_proxy()` between them (D009), and a generic
    write into a view that an MMA of the role read, in a role whose warps read it with
    separate instructions, with no `lm.fence_proxy()` (which syncs the role) between (D011).

    Loops are summarised, not unrolled: a loop's head sees what reaches it from before the
    loop plus every unfenced access its body leaves behind (the next iteration's view), so
    trip counts never matter and the scan stays linear in the program size. Accesses are
    keyed by the bytes they touch: a view declared with `reuses=` by the view it reuses
    (`cake.reuse_root`), so a hand-off between the two needs the fence one view's would."""

    def __init__(self, gate: _Consistency, warps: int,
                 async_read: dict[cake.ViewOp, Operation]):
        self.gate = gate
        self.warps = warps
        #: wgmma: a role's MMA is one instruction per warpgroup (else mma.sync, one per warp)
        self.per_warpgroup = gate.sku is not None and gate.sku.has("wgmma")
        self.summaries: dict[Block, tuple[bool, Pending]] = {}
        self.reported: set[tuple[Operation, cake.ViewOp]] = set()
        #: Views some role reads through the async proxy: the readers of a hand-off.
        self.async_read = async_read

    def run(self, block: Block) -> None:
        self.scan(block, {})

    def scan(self, block: Block, pending: Pending) -> Pending:
        # Exact type tests throughout: this visits every op of every role.
        for op in block.ops:
            kind = type(op)
            if kind is cake.FenceProxyOp:
                pending = {}
            elif kind is cake.ForOp:
                pending = {**pending, **self.summary(op.body.block)[1]}
                self.scan(op.body.block, dict(pending))
            elif kind is cake.IfOp:
                then = self.scan(op.then_region.block, dict(pending))
                pending = {**self.scan(op.else_region.block, dict(pending)), **then}
            elif kind in _ASYNC_ACCESS:
                self.check_access(op, pending)
                pending.update(self.shared_reads(op))
            elif kind in _HAND_OFFS:
                self.check_hand_off(op, pending)
            else:
                writes = _generic_writes(op)
                self.check_overwrite(op, writes, pending)
                pending.update(((cake.reuse_root(view), WRITE), op) for view in writes)
                pending.update(self.thread_reads(op))
        return pending

    def summary(self, block: Block) -> tuple[bool, Pending]:
        """(whether a write before the block can survive it, the writes it leaves unfenced)."""
        if block in self.summaries:
            return self.summaries[block]
        survives, left = True, {}
        for op in block.ops:
            kind = type(op)
            if kind is cake.FenceProxyOp:
                survives, left = False, {}
            elif kind is cake.ForOp:
                left.update(self.summary(op.body.block)[1])  # may run zero times
            elif kind is cake.IfOp:
                (s1, then), (s2, other) = (self.summary(op.then_region.block),
                                           self.summary(op.else_region.block))
                left = {**(left if s1 or s2 else {}), **then, **other}
                survives = survives and (s1 or s2)
            elif kind in _ASYNC_ACCESS:
                left.update(self.shared_reads(op))
            else:
                left.update(((cake.reuse_root(view), WRITE), op) for view in _generic_writes(op))
                left.update(self.thread_reads(op))
        self.summaries[block] = (survives, left)
        return survives, left

    def check_hand_off(self, op: Operation, pending: Pending) -> None:
        """An arrival after a role's own `store` into a view that an MMA reads (in any role,
        through the async proxy): the fence must come before the arrival, since the waiting
        role's MMA follows the wait with nothing in between that could order the bytes."""
        for (view, kind), writer in pending.items():
            reader = self.async_read.get(view)
            if kind != WRITE or not isinstance(writer, cake.StageStoreOp) or reader is None \
                    or (op, view) in self.reported:
                continue
            self.reported.add((op, view))
            name = name_of((cake.written_view(writer) or view).result)
            verb = "`lm.arrive`" if isinstance(op, cake.ArriveOp) else "`lm.commit`"
            self.gate.error(
                "D009", f"{verb} hands `{name}` to the roles waiting on "
                f"`{name_of(op.barrier)}`, but `{name}` was written with ordinary stores"
                f"{at_line(writer)} and no `lm.fence_proxy()` orders that write before the "
                f"async-proxy read{at_line(reader)}", op,
                [Note(span_of(writer, self.gate.ctx), f"`{name}` is written here"),
                 Note(span_of(reader, self.gate.ctx),
                      f"`{'lm.mma' if isinstance(reader, cake.MmaOp) else 'tma_store'}` reads "
                      f"`{name}` here")],
                help=f"add `lm.fence_proxy()` after the write{at_line(writer)}, before the "
                "arrival")

    def check_access(self, op: Operation, pending: Pending) -> None:
        views = _async_reads(op) if not isinstance(op, cake.TmaLoadOp) else [op.view.owner]
        for view in views:
            writer = (pending.get((cake.reuse_root(view), WRITE))
                      if isinstance(view, cake.ViewOp) else None)
            if writer is None or (op, view) in self.reported:
                continue
            self.reported.add((op, view))
            name = name_of(view.result)
            written = name_of((cake.written_view(writer) or view).result)
            verb = "overwrites" if isinstance(op, cake.TmaLoadOp) else "reads"
            what = {cake.MmaOp: "`lm.mma`", cake.TmaLoadOp: "`tma_load`"}.get(
                type(op), "`tma_store`")
            how = ("through the async proxy" if not self.synchronous_mma(op) else
                   "with ldmatrix in every warp of the role")
            self.gate.error(
                "D009", f"{what} {verb} `{name}` {how}, but "
                + (f"`{name}` was" if written == name else f"its bytes were (as `{written}`)")
                + f" written with ordinary stores{at_line(writer)} and no `lm.fence_proxy()` "
                "orders that write first", op,
                [Note(span_of(writer, self.gate.ctx), f"`{written}` is written here")],
                help=f"add `lm.fence_proxy()` after the write{at_line(writer)}")

    def synchronous_mma(self, op: Operation) -> bool:
        """An mma.sync: it reads SMEM with ordinary loads (ldmatrix), so what it needs after
        another warp's store is the role's sync, not a proxy fence."""
        return (isinstance(op, cake.MmaOp) and not isinstance(op.acc.owner, cake.TmemOp)
                and self.gate.sku is not None and not self.per_warpgroup)

    def shared_reads(self, op: Operation) -> Pending:
        """The views an MMA of this role reads with one instruction per warp (mma.sync), or
        per warpgroup (wgmma, in a role of several warpgroups): the role's warps finish reading
        them at different times, so a later write by any of its threads races a lagging reader
        until the role syncs. A single-thread tcgen05 MMA into TMEM is retired through its
        mbarrier, which every thread waits on (CAKE-S041's to check)."""
        if not isinstance(op, cake.MmaOp) or isinstance(op.acc.owner, cake.TmemOp):
            return {}
        if self.warps <= (4 if self.per_warpgroup else 1):
            return {}
        reads = {(cake.reuse_root(view), READ): op for view in _async_reads(op)
                 if isinstance(view, cake.ViewOp)}
        a = view_of(op.a)
        if self.per_warpgroup and isinstance(a, cake.ViewOp) and not isinstance(
                op.a.owner, cake.TransposeOp) and a.result.type.dims()[-2] == 16 * self.warps:
            # wgmma splits M over the warpgroups: each reads (and stores, in the same
            # layout) only its own 64 rows of an A stage as tall as the role's tile.
            reads.pop((cake.reuse_root(a), READ), None)
        return reads

    def thread_reads(self, op: Operation) -> Pending:
        """A read of a stage by every thread of a role of several warps (`view[s].load()`,
        `lm.sum_sq`): keyed by the bytes, for a write through a view that reuses them."""
        if self.warps <= 1 or type(op) not in (cake.StageLoadOp, cake.SumSqOp):
            return {}
        view = view_of(op.source)
        return {(cake.reuse_root(view), GREAD): op} if isinstance(view, cake.ViewOp) else {}

    def check_overwrite(self, op: Operation, writes: list[cake.ViewOp], pending: Pending) -> None:
        for view in writes:
            self.check_thread_reads(op, view, pending)
            reader = pending.get((cake.reuse_root(view), READ))
            if reader is None or (op, view) in self.reported:
                continue
            self.reported.add((op, view))
            name = name_of(view.result)
            unit = "warpgroups" if self.per_warpgroup else "warps"
            what = "`store`" if isinstance(op, cake.StageStoreOp) else "`copy_load`"
            self.gate.error(
                "D011", f"{what} overwrites `{name}`, which the role's other {unit} may "
                f"still be reading with the MMA{at_line(reader)}: nothing syncs the role "
                "between that read and this write", op,
                [Note(span_of(reader, self.gate.ctx), f"the MMA reads `{name}` here, one "
                      f"instruction per {unit[:-1]}")],
                help=f"add `lm.fence_proxy()` (it syncs the role's threads) before the write, "
                "after the MMA's last read")


    def check_thread_reads(self, op: Operation, view: cake.ViewOp, pending: Pending) -> None:
        """D011 through reused bytes: a write into `view` after the role's threads read the
        bytes through another view, with no `lm.fence_proxy()` (the role's sync) between. The
        same view is laid out alike for both, so each thread reads and writes its own
        elements; another view maps the bytes to other threads."""
        reader = pending.get((cake.reuse_root(view), GREAD))
        read = view_of(reader.source) if reader is not None else None
        if read is None or read is view or (op, view) in self.reported:
            return
        self.reported.add((op, view))
        name, other = name_of(view.result), name_of(read.result)
        what = "`store`" if isinstance(op, cake.StageStoreOp) else "`copy_load`"
        self.gate.error(
            "D011", f"{what} overwrites `{name}`, whose bytes the role's other warps may still "
            f"be reading as `{other}`{at_line(reader)}: `{name}` reuses them in another layout, "
            "and nothing syncs the role between that read and this write", op,
            [Note(span_of(reader, self.gate.ctx), f"the role's threads read `{other}` here")],
            help=f"add `lm.fence_proxy()` (it syncs the role's threads) before the write, after "
            f"the last read of `{other}`")


def _async_reads(op: Operation) -> list[cake.ViewOp | None]:
    """The views an MMA (its stage operands) or a TMA store of a stage reads by async proxy."""
    if isinstance(op, cake.MmaOp):
        return [view_of(op.a), view_of(op.b)]
    return [view_of(op.source)]


#: Arrivals that hand what the role wrote to the roles waiting on the barrier.
_HAND_OFFS = (cake.ArriveOp, cake.CommitOp)


def _generic_writes(op: Operation) -> list[cake.ViewOp]:
    if type(op) in _NO_ACCESS:
        return []
    views = []
    for value in op.operands:
        kind = type(value.type)
        view = (value.owner if kind is cake.ViewType else
                view_of(value) if kind is cake.StageType else None)
        if type(view) is cake.ViewOp:
            views.append(view)
    return views


# ---- small helpers ---------------------------------------------------------------------------


def _shape(dims: Iterable[int]) -> str:
    dims = tuple(dims)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def _party(role: str, value: SSAValue) -> str:
    """`a` (`sa`): an MMA argument and the .cake name it holds (once when they coincide)."""
    name = name_of(value)
    return f"`{role}`" if name == role else f"`{role}` (`{name}`)"


def _a(dtype: str | None) -> str:
    """The article before a dtype name as it is read aloud (a bf16, an f32)."""
    return "a" if dtype in ("bf16", "tf32") else "an"


def _pair(a: str, b: str) -> str:
    return a if a == b else f"{a} × {b}"


def _row_bytes(view: cake.ViewOp) -> int:
    dims = view.result.type.dims()
    return dims[-1] * elem_bytes(view.result.type) if dims else 0


def _byte_range(view: cake.ViewOp) -> tuple[int, int]:
    vt = view.result.type
    stage = get_int(view, "cake.stage_bytes") or vt.num_bytes()
    start = view.offset.value.data
    return start, start + stage * vt.stages.data


def _overlap(x: cake.ViewOp, y: cake.ViewOp) -> bool:
    if x.pool != y.pool:
        return False
    (a0, a1), (b0, b1) = _byte_range(x), _byte_range(y)
    return a0 < b1 and b0 < a1


def _layout(view: cake.ViewOp) -> tuple[object, ...]:
    vt = view.result.type
    return vt.dims(), dtype_of(vt), view_swizzle(view) or vt.swizzle.data


def _describe(view: cake.ViewOp) -> str:
    vt = view.result.type
    swizzle = view_swizzle(view)
    how = f"{swizzle} swizzle" if swizzle else "an unresolved swizzle"
    return f"{'×'.join(map(str, vt.dims()))} {dtype_of(vt)} with {how}"
