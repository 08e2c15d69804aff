"""verify-conformance: the hardware-conformance gate (codes CAKE-H001..H022).

A kernel must use only what its target has and stay inside the target's limits. Every fact
comes from the one SKU table, targets/sku.py (the table `cakec targets` prints): instruction
families (TMEM and tcgen05, TMA, wgmma or mma.sync, FP8 forms, setmaxnreg), shared memory and
threads per block, the TMEM allocation, MMA shapes per instruction and dtype, TMA boxes,
warpgroup alignment and the lane quarter each warp may read from TMEM.

Derived attributes (docs/ir.md) are read where a derive pass left them; without one a check
falls back to what the declarations say, or is skipped. Layout errors that a derive pass
already reports (view alignment and swizzle spans: derive-smem; TMEM capacity and region
shape: derive-tmem) are not repeated here. docs/diagnostics/hardware.md lists every code
with a failing and a fixed example.

The kernel index and the naming helpers at the top are shared with verify-consistency.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FileLineColLoc, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from cakec.diagnostics import DiagnosticSink, Note, Span
from cakec.dialects import cake
from cakec.passes.base import sink_of, span_of, target_of
from cakec.passes.conformance_tiles import store_problems, tile_problems
from cakec.passes.derive_common import block_ops, overwaited, role_of, walk
from cakec.targets import sku as hw
from cakec.passes.conformance_cluster import cluster_problems
from cakec.targets.emit.emitter import blocks_per_sm, launch_regs
from cakec.targets.emit.tiles import SPLIT_FLAG_BYTES, column_scratch_bytes
from cakec.targets.sm80.tiling import warp_tiling

# ---- what both data gates read: one walk of a kernel ----------------------------------------


@dataclass
class KernelIndex:
    """A kernel's ops grouped by what the gates ask about, and the role each op runs in."""

    kernel: cake.KernelOp
    pools: list[cake.SmemOp] = field(default_factory=list)
    views: list[cake.ViewOp] = field(default_factory=list)
    tmems: list[cake.TmemOp] = field(default_factory=list)
    roles: list[cake.RoleOp] = field(default_factory=list)
    barriers: list[cake.BarrierOp] = field(default_factory=list)
    tma_loads: list[cake.TmaLoadOp] = field(default_factory=list)
    tma_stores: list[cake.TmaStoreOp] = field(default_factory=list)
    stage_stores: list[cake.StageStoreOp] = field(default_factory=list)
    stage_tma_stores: list[cake.TmaStoreStageOp] = field(default_factory=list)
    mmas: list[cake.MmaOp] = field(default_factory=list)
    tmem_reads: list[cake.ConvertOp] = field(default_factory=list)
    role_blocks: list[tuple[cake.RoleOp, cake.OnRoleOp]] = field(default_factory=list)
    role_of: dict[Operation, cake.RoleOp] = field(default_factory=dict)


_BUCKETS: dict[type[Operation], str] = {
    cake.SmemOp: "pools", cake.ViewOp: "views", cake.TmemOp: "tmems", cake.RoleOp: "roles",
    cake.BarrierOp: "barriers", cake.TmaLoadOp: "tma_loads", cake.CopyLoadOp: "tma_loads",
    cake.TmaStoreOp: "tma_stores", cake.StageStoreOp: "stage_stores",
    cake.TmaStoreStageOp: "stage_tma_stores",
    cake.MmaOp: "mmas",
}


def index_kernel(kernel: cake.KernelOp) -> KernelIndex:
    idx = KernelIndex(kernel)
    # An explicit stack instead of recursion: nesting depth is the author's, not ours.
    stack: list[tuple[Operation, cake.RoleOp | None]] = [
        (op, None) for op in reversed(block_ops(kernel.body.block))]
    while stack:
        op, role = stack.pop()
        bucket = _BUCKETS.get(type(op))
        if bucket is not None:
            getattr(idx, bucket).append(op)
        elif isinstance(op, cake.ConvertOp) and isinstance(op.source.type, cake.TmemType):
            idx.tmem_reads.append(op)
        if role is not None:
            idx.role_of[op] = role
        inner = role
        if isinstance(op, cake.OnRoleOp) and isinstance(op.role.owner, cake.RoleOp):
            inner = op.role.owner
            idx.role_blocks.append((inner, op))
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend((child, inner) for child in reversed(block_ops(block)))
    return idx


def index_of(ctx: object, kernel: cake.KernelOp) -> KernelIndex:
    """`index_kernel(kernel)`, once per compilation: verify-conformance and
    verify-consistency share it (no pass adds or moves ops; the index holds only ops)."""
    cache: dict[cake.KernelOp, KernelIndex] | None = getattr(ctx, "cake_index", None)
    if cache is None:
        cache = {}
        setattr(ctx, "cake_index", cache)
    if kernel not in cache:
        cache[kernel] = index_kernel(kernel)
    return cache[kernel]


def name_of(value: SSAValue) -> str:
    """The .cake name behind a value; a stage `v[s]` (or `v[s].T`) is named by its view `v`."""
    owner = cake.stage_source(value)[0].owner
    if isinstance(owner, cake.StageOp):
        return name_of(owner.view)
    if isinstance(owner, cake.ConvertOp):  # `p.to(lm.bf16)`, e.g. a register MMA operand
        return f"{name_of(owner.source)}.to(lm.{dtype_of(value.type)})"
    if isinstance(owner, Operation):
        sym = owner.properties.get("sym_name")
        if isinstance(sym, StringAttr) and sym.data:
            return sym.data
    return value.name_hint or "?"


def decl_span(value: SSAValue, ctx: Context) -> Span | None:
    """Where a value was declared: its op, or for a kernel parameter the parameter itself."""
    owner = cake.stage_source(value)[0].owner
    if isinstance(owner, cake.StageOp):
        return decl_span(owner.view, ctx)
    if isinstance(owner, Operation):
        return span_of(owner, ctx)
    loc = value.location if isinstance(value, BlockArgument) else None
    if isinstance(loc, FileLineColLoc):
        return Span(loc.filename.data, loc.line.data, loc.column.data)
    return None


def dtype_of(type_: Attribute) -> str | None:
    """The .cake dtype name of a shaped type's elements (None for an unknown element type)."""
    try:
        return cake.dtype_name(type_.element_type)  # type: ignore[attr-defined]
    except (AttributeError, KeyError):
        return None


def elem_bytes(type_: Attribute) -> int:
    """Bytes per element of a shaped type (0 for an unknown element type)."""
    return cake.DTYPES.get(dtype_of(type_) or "", (None, 0))[1]


def dims_of(value: SSAValue) -> tuple[int, ...]:
    dims = getattr(value.type, "dims", None)
    return dims() if dims is not None else ()


def view_of(value: SSAValue) -> cake.ViewOp | None:
    """The view an MMA operand (a stage `v[s]`, or `v[s].T`) belongs to."""
    stage = cake.stage_source(value)[0].owner
    view = stage.view.owner if isinstance(stage, cake.StageOp) else None
    return view if isinstance(view, cake.ViewOp) else None


def get_int(op: Operation, key: str) -> int | None:
    attr = op.attributes.get(key)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def get_str(op: Operation, key: str) -> str | None:
    attr = op.attributes.get(key)
    return attr.data if isinstance(attr, StringAttr) else None


def get_ints(op: Operation, key: str) -> tuple[int, ...] | None:
    attr = op.attributes.get(key)
    return tuple(attr.get_values()) if isinstance(attr, DenseArrayBase) else None


def view_swizzle(view: cake.ViewOp) -> str | None:
    """The swizzle a view is stored with: derive-smem's choice, else the author's explicit
    tag; None while `auto` is unresolved."""
    resolved = get_str(view, "cake.swizzle")
    if resolved in hw.SWIZZLE_SPAN:
        return resolved
    tag = view.result.type.swizzle.data
    return tag if tag in hw.SWIZZLE_SPAN else None


def warps_of(role: cake.RoleOp) -> list[int]:
    return sorted(role.warps.get_values())


def whole_warpgroups(warps: Sequence[int]) -> bool:
    """Whether `warps` (sorted) split into aligned warpgroups of 4 consecutive warps."""
    n = hw.WARPGROUP_WARPS
    return bool(warps) and len(warps) % n == 0 and all(
        hw.is_warpgroup(warps[i:i + n]) for i in range(0, len(warps), n))


def mma_dtypes(mma: cake.MmaOp) -> tuple[str, str, str] | None:
    a, b, acc = dtype_of(mma.a.type), dtype_of(mma.b.type), dtype_of(mma.acc.type)
    return (a, b, acc) if a and b and acc else None


def mma_dims(mma: cake.MmaOp) -> tuple[int, int, int] | None:
    """(M, N, K) when acc [M,N], a [M,K] and b [N,K] agree; otherwise verify-consistency
    reports the disagreement and the shape checks here stand down."""
    acc, a, b = dims_of(mma.acc), dims_of(mma.a), dims_of(mma.b)
    if not (len(acc) == len(a) == len(b) == 2):
        return None
    (m, n), (am, k), (bn, bk) = acc, a, b
    return (m, n, k) if (am, bn, bk) == (m, n, k) else None


def acc_location(mma: cake.MmaOp) -> str:
    return "tmem" if isinstance(mma.acc.type, cake.TmemType) else "regs"


def mma_forms(sku: hw.Sku, mma: cake.MmaOp) -> tuple[hw.MmaForm, ...]:
    """The forms of the instruction the target uses for this MMA: one CTA, the accumulator
    where the author put it, the preferred instruction first (wgmma before mma.sync)."""
    dts = mma_dtypes(mma)
    if dts is None:
        return ()
    forms = [f for f in sku.mma_forms_for(*dts)
             if f.acc_location == acc_location(mma) and f.cta_group == 1]
    return tuple(f for f in forms if f.instruction == forms[0].instruction)


def dtypes_legal_somewhere(a: str, b: str, acc: str) -> bool:
    """Whether any target multiplies these dtypes; if none does, it is a data error
    (verify-consistency), not a property of the target."""
    return any(s.mma_forms_for(a, b, acc) for s in hw.SKUS.values())


def targets_with(family: str) -> list[str]:
    return [s.name for s in hw.SKUS.values() if family in s.families]


def or_list(names: Sequence[str], word: str = "or") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"


def and_list(names: Sequence[str]) -> str:
    return or_list(names, "and")


def line_of(op: Operation) -> int | None:
    loc = op.location
    return loc.line.data if isinstance(loc, FileLineColLoc) else None


def at_line(op: Operation) -> str:
    line = line_of(op)
    return f" at line {line}" if line else ""


# ---- the pass -------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyConformance(ModulePass):
    """Reports CAKE-H001..H025: constructs the target lacks and limits it imposes."""

    name = "verify-conformance"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = sink_of(ctx)
        for kernel in op.ops:
            if not isinstance(kernel, cake.KernelOp):
                continue
            name = target_of(kernel, ctx, self.target)
            sku = hw.SKUS.get(name)
            if sku is None:
                sink.error("CAKE-T009", f"unknown target `{name}`", span_of(kernel, ctx),
                           help="known targets: " + ", ".join(hw.SKUS))
                continue
            _Conformance(ctx, sink, sku, index_of(ctx, kernel)).run()


#: At most this many "also here" notes, so one root cause stays one readable error.
_MAX_NOTES = 3


@dataclass
class _Conformance:
    ctx: Context
    sink: DiagnosticSink
    sku: hw.Sku
    idx: KernelIndex
    #: role → the notes saying why it must be whole warpgroups (wgmma, setmaxnreg).
    warpgroup_needs: dict[cake.RoleOp, list[tuple[str, Operation]]] = field(default_factory=dict)

    def run(self) -> None:
        self.check_tmem()
        self.check_tma()
        self.check_registers()
        self.check_mmas()
        self.check_warpgroups()
        self.check_threads()
        self.check_smem()
        self.check_tmem_reads()
        self.check_barriers()
        self.check_tiles()
        self.check_cluster()

    # -- H020: register-tile forms the target's tile layout does not lower --

    # -- H023..H025: thread-block clusters --

    def check_cluster(self) -> None:
        for code, op, message, help in cluster_problems(self.idx.kernel, self.sku):
            self.error(code, message, op, help=help)

    def check_tiles(self) -> None:
        roles: dict[cake.RoleOp, list[Operation]] = {}
        for op, role in self.idx.role_of.items():
            roles.setdefault(role, []).append(op)
        for op, message, help in tile_problems(self.sku.codegen, roles):
            self.error("H020", f"{message} on {self.target}", op, help=help)
        for op, message, help in store_problems(self.idx.stage_stores):
            self.error("H021", f"{message} on {self.target}", op, help=help)

    # -- reporting --

    def error(self, code: str, message: str, where: Operation, notes: Iterable[Note] = (),
              help: str | None = None) -> None:
        self.sink.error(f"CAKE-{code}", message, span_of(where, self.ctx), notes=list(notes),
                        help=help)

    def note(self, op: Operation, message: str) -> Note:
        return Note(span_of(op, self.ctx), message)

    @property
    def target(self) -> str:
        return self.sku.name

    # -- H001, H011: Tensor Memory --

    def check_tmem(self) -> None:
        if self.sku.has("tmem") and self.sku.has("tcgen05"):
            self.check_tmem_alloc()
            return
        for region in self.idx.tmems:
            self.tmem_missing(region)

    def tmem_missing(self, region: cake.TmemOp) -> None:
        name = name_of(region.result)
        notes = []
        for use in sorted(region.result.uses, key=lambda u: line_of(u.operation) or 0):
            if isinstance(use.operation, cake.MmaOp):
                notes.append(self.note(use.operation, f"`{name}` is the accumulator of this "
                                       "`lm.mma`, which only tcgen05.mma can write"))
            elif isinstance(use.operation, cake.ConvertOp):
                notes.append(self.note(use.operation, f"`{name}` is read here (tcgen05.ld)"))
        self.error("H001", f"`lm.tmem` needs Tensor Memory, which {self.target} does not have",
                   region, notes[:_MAX_NOTES],
                   help=f"target {or_list(targets_with('tmem'))}, or accumulate in registers "
                   "with `lm.regs(...)`")

    def check_tmem_alloc(self) -> None:
        # derive-tmem sizes the allocation against this same table and reports demand it cannot
        # meet (CAKE-H050); this re-checks the number it recorded before anything emits it.
        columns = get_int(self.idx.kernel, "cake.tmem_alloc")
        if not columns or not self.idx.tmems:
            return
        if hw.is_valid_tmem_alloc(columns) and columns <= self.sku.tmem_columns:
            return
        widest = max(self.idx.tmems, key=lambda r: r.cols.value.data + r.width.value.data)
        self.error("H011", f"the kernel would allocate {columns} TMEM columns, but tcgen05.alloc "
                   f"on {self.target} takes a power of two from {hw.TMEM_ALLOC_MIN_COLUMNS} to "
                   f"{self.sku.tmem_columns}", widest,
                   help=f"keep every TMEM region within columns [0, {self.sku.tmem_columns})")

    # -- H002, H012..H014: TMA --

    def check_tma(self) -> None:
        # copy_load shares tma_load's data checks (verify-consistency) but is cp.async: every
        # target has it and no TMA box limit applies.
        # `tma_store` of a register tile is a bounds-checked st.global on every target.
        tma_loads = [op for op in self.idx.tma_loads if isinstance(op, cake.TmaLoadOp)]
        self.family_needed("tma", tma_loads, "tma_load")
        if self.sku.has("tma"):
            for load in tma_loads:
                view = load.view.owner
                if isinstance(view, cake.ViewOp):
                    self.check_box(load, load.view, view_swizzle(view), "tma_load")
        if self.sku.has("tma_store"):
            for store in self.idx.tma_stores:
                # The tile is staged unswizzled in compiler scratch (derive-smem).
                self.check_box(store, store.value, "none", "tma_store")
        # A staged view is copied out by TMA itself: the target needs TMA stores.
        staged = self.idx.stage_tma_stores
        self.family_needed("tma_store", staged, "tma_store")
        if self.sku.has("tma_store"):
            for store in staged:
                view = view_of(store.source)
                if view is not None:
                    self.check_box(store, store.source, view_swizzle(view), "tma_store")

    def family_needed(self, family: str, ops: Sequence[Operation], what: str) -> None:
        if not ops or self.sku.has(family):
            return
        notes = [self.note(op, f"`{what}` is also used here") for op in ops[1:1 + _MAX_NOTES]]
        self.error("H002", f"`{what}` needs the Tensor Memory Accelerator (TMA), which "
                   f"{self.target} does not have", ops[0], notes,
                   help=f"target {or_list(targets_with(family))}")

    def check_box(self, op: Operation, data: SSAValue, swizzle: str | None, what: str) -> None:
        """A copy between `data` (a view, or a tile for stores) and tensor `op.tensor`;
        `swizzle` is None while the view's `auto` is unresolved."""
        tensor = op.tensor  # type: ignore[attr-defined]
        rank, name, tname = len(dims_of(tensor)), name_of(data), name_of(tensor)
        declared = [Note(decl_span(data, self.ctx), f"`{name}` is declared here")]
        if not hw.TMA_RANK_MIN <= rank <= hw.TMA_RANK_MAX:
            self.error("H013", f"tensor `{tname}` has rank {rank}, but TMA copies tensors of "
                       f"rank {hw.TMA_RANK_MIN} to {hw.TMA_RANK_MAX}", op,
                       [Note(decl_span(tensor, self.ctx), f"`{tname}` is declared here")])
            return
        elem = elem_bytes(data.type)
        box = _copy_box(op, data, swizzle, rank)
        if box is None or not elem:
            return  # more dimensions than the tensor: verify-consistency reports it
        # While `auto` is unresolved, the inner extent of a copy is not known yet.
        checked = box if swizzle is not None or get_ints(op, "cake.box") else box[:-1]
        for axis, extent in enumerate(checked):
            if extent > hw.TMA_BOX_DIM_MAX:
                self.error("H012", f"this TMA copy of `{name}` has a box of {extent} elements "
                           f"along dimension {axis} of `{tname}` ({_axis_name(axis, rank)}); "
                           f"a TMA box has at most {hw.TMA_BOX_DIM_MAX} per dimension", op,
                           declared, help=f"split `{name}` into parts of at most "
                           f"{hw.TMA_BOX_DIM_MAX} along that dimension, each with its own "
                           f"`{what}`")
        inner = box[-1] * elem
        if swizzle is not None and not hw.tma_inner_box_fits(swizzle, inner):
            self.error("H014", f"the innermost extent of this TMA copy of `{name}` is {inner} "
                       f"bytes ({box[-1]} × {dtype_of(data.type)}); "
                       + _inner_rule(swizzle, inner), op, declared,
                       help=_inner_help(swizzle, elem, name))

    # -- H006..H008: register budgets (setmaxnreg) --

    def check_registers(self) -> None:
        budgeted: list[tuple[cake.RoleOp, int]] = []
        for role in self.idx.roles:
            if role.regs is None:
                continue
            regs, name = role.regs.value.data, name_of(role.result)
            if not self.sku.has("setmaxnreg"):
                self.error("H006", f"`regs=` on role `{name}` needs setmaxnreg, which "
                           f"{self.target} does not have", role, help="remove `regs=`, or "
                           f"target {or_list(targets_with('setmaxnreg'))}")
            elif not hw.is_valid_setmaxnreg(regs):
                self.error("H007", f"role `{name}` asks for {regs} registers per thread; "
                           f"setmaxnreg takes {hw.SETMAXNREG_MIN} to {hw.SETMAXNREG_MAX} in steps "
                           f"of {hw.SETMAXNREG_STEP}", role,
                           help=f"use `regs={_nearest_regs(regs)}`")
            else:
                needs = self.warpgroup_needs.setdefault(role, [])
                needs.append(("sets `regs=` (setmaxnreg)", role))
                budgeted.append((role, regs))
        self.check_register_budget(budgeted)

    def check_register_budget(self, budgeted: list[tuple[cake.RoleOp, int]]) -> None:
        """setmaxnreg.inc takes registers only from the block's own pool (what its other
        warpgroups released with .dec) and waits until enough are there: the budgets, with
        every thread of a role without `regs=` at the launch's count, must fit what the
        launch gives the block (__launch_bounds__(threads, blocks_per_sm): launch_regs per
        thread), not just the SM's register file. 4 warpgroups at 112 and one at 40 (62464 registers)
        fit 64 K but not the 640 × 96 = 61440 a 640-thread block holds: the .inc never
        returns."""
        if not budgeted:
            return
        block = self.block_threads()
        per_thread = launch_regs(block, blocks_per_sm(self.idx.kernel))
        threads = {role: hw.WARP_SIZE * len(warps_of(role)) for role, _ in budgeted}
        rest = max(block - sum(threads.values()), 0)
        total = sum(regs * threads[role] for role, regs in budgeted) + per_thread * rest
        if total <= per_thread * block:
            return
        parts = " + ".join(f"`{name_of(r.result)}` {regs} × {threads[r]}" for r, regs in budgeted)
        if rest:
            parts += f" + {per_thread} × {rest} without `regs=`"
        last = budgeted[-1][0]
        self.error("H008", f"the roles' `regs=` budgets add up to {total} registers ({parts} "
                   f"threads), more than the {per_thread * block} a block of {block} threads "
                   f"holds on {self.target} ({per_thread} per thread at launch; setmaxnreg.inc "
                   "only takes what the block's other warpgroups released, and waits for it)",
                   last,
                   [self.note(r, f"`{name_of(r.result)}` asks for {regs} per thread here")
                    for r, regs in budgeted[:-1]][:_MAX_NOTES],
                   help="lower `regs=` on some role so that the sum of regs × threads fits")

    # -- H003, H004: MMA instruction, dtypes and shapes --

    def check_mmas(self) -> None:
        for mma in self.idx.mmas:
            if acc_location(mma) == "tmem" and not self.sku.has("tcgen05"):
                continue  # H001 at the TMEM declaration is the root cause
            dts = mma_dtypes(mma)
            if dts is None or not dtypes_legal_somewhere(*dts):
                continue  # verify-consistency names the wrong dtype
            forms = mma_forms(self.sku, mma)
            if not forms:
                self.no_instruction(mma, dts)
            else:
                self.check_mma_shape(mma, forms)
                self.check_transposes(mma, forms[0].instruction)

    # -- H022: operands read MN-major (`view[s].T`) --

    def check_transposes(self, mma: cake.MmaOp, instruction: str) -> None:
        """wgmma reads an MN-major operand only for 16-bit types (imm-trans), and only in a
        swizzled layout; tcgen05.mma is held to the same forms; mma.sync would need
        ldmatrix.trans, which the sm_80 lowering does not emit."""
        for which, value in (("a", mma.a), ("b", mma.b)):
            if not cake.stage_source(value)[1]:
                continue
            view = view_of(value)
            name, dtype = name_of(value), dtype_of(value.type)
            swizzle = view_swizzle(view) if view is not None else None
            if instruction == "mma.sync":
                why = (f"mma.sync on {self.target} does not read a transposed operand "
                       "(ldmatrix.trans is not lowered)")
                help = f"store `{name}` K-major ([M|N, K]), or target sm_90a or sm_100a"
            elif dtype not in ("bf16", "f16"):
                why = (f"{instruction} reads a transposed (MN-major) operand only for bf16 or "
                       f"f16; `{name}` is {dtype}")
                help = f"store `{name}` K-major ([M|N, K]) and drop `.T`"
            elif swizzle == "none":
                why = (f"{instruction} reads a transposed (MN-major) operand only from a "
                       f"swizzled view; `{name}` is unswizzled")
                help = f"declare `{name}` with a swizzle (omit `swizzle=`, or `swizzle=128b`)"
            else:
                continue
            self.error("H022", f"`lm.mma` operand `{which}` (`{name}.T`): {why}", mma,
                       [Note(decl_span(value, self.ctx), f"`{name}` is declared here")],
                       help=help)

    def no_instruction(self, mma: cake.MmaOp, dts: tuple[str, str, str]) -> None:
        loc = acc_location(mma)
        where = "in TMEM" if loc == "tmem" else "in registers"
        having = [s.name for s in hw.SKUS.values()
                  if any(f.acc_location == loc for f in s.mma_forms_for(*dts))]
        a, b, acc = dts
        operands = a if a == b else f"{a} × {b}"
        help = (f"target {or_list(having)}" if having else
                "accumulate " + ("in registers with `lm.regs(...)`" if loc == "tmem"
                                 else "in TMEM with `lm.tmem(...)`"))
        operand_views = [mma.a] if view_of(mma.a) is view_of(mma.b) else [mma.a, mma.b]
        notes = [Note(decl_span(v, self.ctx), f"`{name_of(v)}` holds {dtype_of(v.type)}")
                 for v in operand_views]
        self.error("H003", f"{self.target} has no MMA instruction for {operands} operands "
                   f"accumulating into {acc} {where}", mma, notes, help=help)

    def check_mma_shape(self, mma: cake.MmaOp, forms: tuple[hw.MmaForm, ...]) -> None:
        dims = mma_dims(mma)
        if dims is None:
            return
        m, n, k = dims
        instr, acc = forms[0].instruction, name_of(mma.acc)
        on = f"{instr} on {self.target}"
        if instr == "wgmma":
            groups = self.wgmma_groups(mma)
            if groups is None:
                return
            problems = _wgmma_shape(on, forms[0], m, n, groups, acc)
        elif instr == "tcgen05.mma":
            problems = _tcgen05_shape(on, forms, m, n, acc)
        else:
            problems = _mma_sync_shape(on, forms[0], m, n, acc)
        if k % forms[0].k:
            problems.append((f"`lm.mma` reduces over K={k}, which is not a multiple of the "
                             f"{forms[0].k}-element K step of {on} for {dtype_of(mma.a.type)}",
                             f"make K a multiple of {forms[0].k}"))
        acc_note = Note(decl_span(mma.acc, self.ctx),
                        f"`{acc}` is declared here with shape ({m}, {n})")
        for message, help in problems:
            self.error("H004", message, mma, [acc_note], help=help)
        if isinstance(mma.a.type, cake.TileType):
            self.check_register_a(mma, on, instr)
        elif not problems and instr == "mma.sync":
            self.check_mma_sync_tiling(mma, on, m, n, acc_note)

    # -- H017: MMA forms the hardware has and the code generator does not lower --

    def check_mma_sync_tiling(self, mma: cake.MmaOp, on: str, m: int, n: int,
                              acc_note: Note) -> None:
        """Verify implies emit: a register accumulator the role's warps cannot split into
        mma.sync fragments (targets/sm80/tiling.py) is refused here, not by `cakec emit`.
        (wgmma of an unswizzled operand never gets this far: D008 refuses the rows TMA
        writes, H004 16-byte core-matrix rows, which hold less than one K step.)"""
        role = self.idx.role_of.get(mma)
        if role is None:
            return
        warps = warps_of(role)
        if warps == list(range(warps[0], warps[0] + len(warps))) and warp_tiling(
                m, n, len(warps)):
            return
        name = name_of(role.result)
        self.error("H017", f"{on} splits accumulator `{name_of(mma.acc)}` ({m}×{n}) over the "
                   f"warps of role `{name}` {warps}, each a block of whole 16×8 fragments, and "
                   "these warps do not split it", mma, [acc_note],
                   help=f"give `{name}` consecutive warps whose count divides M/16 × N/8 "
                   "into a grid, e.g. 1, 2 or 4 warps")


    def check_register_a(self, mma: cake.MmaOp, on: str, instr: str) -> None:
        """An A operand in registers is lowered for wgmma (its accumulator layout is the
        register-A fragment layout, register pairs packed to 16 bits), not for tcgen05.mma
        (A from SMEM or TMEM) nor mma.sync."""
        dtype = dtype_of(mma.a.type)
        if instr == "wgmma" and dtype in ("bf16", "f16"):
            return
        why = (f"a {dtype} register A (only bf16 and f16 tiles are packed into A fragments)"
               if instr == "wgmma" else "an A operand in registers")
        self.error("H017", f"{on} has no lowering for {why}", mma,
                   [Note(decl_span(mma.a, self.ctx), "the A operand is this register tile")],
                   help="stage A in SMEM (a view stage) or target sm_90a with a bf16/f16 tile, "
                   "e.g. `p.to(lm.bf16)`")

    def wgmma_groups(self, mma: cake.MmaOp) -> int | None:
        """The issuing role's warpgroups, recording that the role needs whole ones."""
        role = self.idx.role_of.get(mma)
        if role is None:
            return None
        self.warpgroup_needs.setdefault(role, []).append(("issues wgmma", mma))
        warps = warps_of(role)
        return len(warps) // hw.WARPGROUP_WARPS if whole_warpgroups(warps) else None

    # -- H005: warpgroup alignment --

    def check_warpgroups(self) -> None:
        for role, needs in self.warpgroup_needs.items():
            warps = warps_of(role)
            if whole_warpgroups(warps):
                continue
            reasons = list(dict.fromkeys(why for why, _ in needs))
            notes = [self.note(op, "wgmma is issued here") for why, op in needs
                     if why == "issues wgmma"][:_MAX_NOTES]
            name = name_of(role.result)
            self.error("H005", f"role `{name}` {' and '.join(reasons)}, which runs on whole "
                       f"warpgroups, but its warps {warps} are not groups of "
                       f"{hw.WARPGROUP_WARPS} consecutive warps starting at a multiple of "
                       f"{hw.WARPGROUP_WARPS}", role, notes,
                       help=f"give role `{name}` aligned warps, e.g. {_aligned_warps(warps)}")

    def block_threads(self) -> int:
        """Threads per block: cake.block_threads, else 32 × (the highest warp of a role + 1)."""
        warps = [w for r in self.idx.roles for w in warps_of(r)]
        return (get_int(self.idx.kernel, "cake.block_threads")
                or hw.WARP_SIZE * (max(warps) + 1 if warps else 0))

    # -- H010: threads per block --

    def check_threads(self) -> None:
        roles = [r for r in self.idx.roles if warps_of(r)]
        if not roles:
            return
        top = max(roles, key=lambda r: warps_of(r)[-1])
        warp = warps_of(top)[-1]
        threads = self.block_threads()
        limit = self.sku.max_threads_per_block
        if threads > limit:
            self.error("H010", f"role `{name_of(top.result)}` uses warp {warp}, so a block has "
                       f"{threads} threads; {self.target} allows at most {limit}", top,
                       help=f"use warps 0 to {limit // hw.WARP_SIZE - 1} only")

    # -- H009: shared memory per block --

    def check_smem(self) -> None:
        kernel = self.idx.kernel
        dynamic = get_int(kernel, "cake.dynamic_smem")
        if dynamic is None:
            dynamic = sum(p.bytes.value.data for p in self.idx.pools)
        # The prologue aligns the dynamic base itself, so the launch asks for the slack too.
        dynamic += get_int(kernel, "cake.smem_align_slack") or 0
        barriers = get_int(kernel, "cake.barrier_smem")
        if barriers is None:
            barriers = 8 * sum(b.count.value.data for b in self.idx.barriers)
        reserved = self.sku.reserved_smem_per_block
        # Column reductions (`axis=0`) combine their warps' partials in static scratch.
        reductions = [op for op in walk(kernel) if isinstance(op, cake.TileReduceOp)
                      and column_scratch_bytes(op, 1)]
        scratch = sum(column_scratch_bytes(op, len(warps_of(role)))
                      for op in reductions for role in [role_of(op)] if role is not None)
        # Each split_store's last-arrival flag is a static int.
        flags = SPLIT_FLAG_BYTES * sum(isinstance(op, cake.SplitStoreOp) for op in walk(kernel))
        total = dynamic + scratch + flags + barriers + reserved
        limit = self.sku.smem_per_block_optin
        if total <= limit:
            self.check_blocks_per_sm(total)
            return
        where = max(self.idx.pools, key=lambda p: p.bytes.value.data, default=kernel)
        biggest = max(self.idx.views, key=lambda v: v.result.type.num_bytes()
                      * v.result.type.stages.data, default=None)
        notes = [] if biggest is None else [self.note(biggest, (
            f"view `{name_of(biggest.result)}` takes {biggest.result.type.stages.data} × "
            f"{biggest.result.type.num_bytes()} bytes"))]
        notes += [self.note(op, "this column reduction combines its warps' partial sums in "
                            "SMEM scratch") for op in reductions[:_MAX_NOTES]]
        self.error("H009", f"this kernel needs {total} bytes of shared memory per block "
                   f"({dynamic} for pools and their alignment, "
                   + (f"{scratch} for column-reduction scratch, " if scratch else "")
                   + (f"{flags} for split_store flags, " if flags else "")
                   + f"{barriers} for mbarriers, "
                   f"{reserved} reserved by the system), more than the "
                   f"{limit} bytes {self.target} allows", where, notes,
                   help=f"shrink the pool (fewer stages or smaller tiles) by at least "
                   f"{total - limit} bytes")

    # -- H019: blocks per SM --

    def check_blocks_per_sm(self, smem: int) -> None:
        """`blocks_per_sm=N` asks ptxas for a register count that lets N blocks reside on one
        SM; their threads and shared memory (`smem` bytes each) must fit it as well."""
        kernel = self.idx.kernel
        n = blocks_per_sm(kernel)
        if n == 1:
            return
        threads = self.block_threads() or hw.WARP_SIZE
        over = []
        if n * threads > self.sku.max_threads_per_sm:
            over.append(f"{n} × {threads} threads, more than the {self.sku.max_threads_per_sm} "
                        "one SM holds")
        if n * smem > self.sku.smem_per_sm:
            over.append(f"{n} × {smem} bytes of shared memory (with the system's reservation), "
                        f"more than the {self.sku.smem_per_sm} of one SM")
        if not over:
            return
        fits = max(1, min(self.sku.max_threads_per_sm // threads, self.sku.smem_per_sm // smem))
        pools = [self.note(p, f"pool `{name_of(p.result)}` takes {p.bytes.value.data} bytes "
                           "per block") for p in self.idx.pools[:_MAX_NOTES]]
        self.error("H019", f"`blocks_per_sm={n}` needs " + " and ".join(over) + f" on "
                   f"{self.target}", kernel, pools,
                   help=f"use `blocks_per_sm={fits}` or less, or shrink the block")

    # -- H015: tcgen05.ld lane quarters --

    def check_tmem_reads(self) -> None:
        if not self.sku.has("tmem"):
            return  # H001 covers every use of TMEM
        for read in self.idx.tmem_reads:
            role = self.idx.role_of.get(read)
            if role is None:
                continue
            warps, rows = warps_of(role), dims_of(read.source)[:1]
            quarters = {w % hw.WARPGROUP_WARPS for w in warps}
            missing = [q for q in _quarters_needed(rows[0] if rows else 0) if q not in quarters]
            if not missing:
                continue
            lanes = and_list([f"{r.start}-{r.stop - 1}"
                              for r in map(hw.tmem_lanes_for_warp, missing)])
            name, region = name_of(role.result), name_of(read.source)
            self.error("H015", f"role `{name}` reads TMEM region `{region}` (tcgen05.ld), but a "
                       f"warp reads only the lane quarter of its index mod 4 and no warp of "
                       f"`{name}` reaches lanes {lanes}", read,
                       [self.note(role, f"`{name}` has warps {warps}")],
                       help=f"give role `{name}` {hw.WARPGROUP_WARPS} consecutive warps, one per "
                       "lane quarter")

    # -- H016: mbarrier counters --

    def check_barriers(self) -> None:
        for barrier in self.idx.barriers:
            name = name_of(barrier.result)
            events = barrier.init_count.value.data
            arrivals = get_int(barrier, "cake.arrivals") or events
            if arrivals > hw.MBARRIER_MAX_ARRIVALS:
                # derive-barriers may count several hardware arrivals per role event.
                what = (f"{arrivals} arrivals" if arrivals == events else
                        f"{events} events ({arrivals} hardware arrivals)")
                self.error("H016", f"barrier `{name}` expects {what} per phase; an mbarrier "
                           f"counts at most {hw.MBARRIER_MAX_ARRIVALS} arrivals", barrier,
                           help="lower `init_count` to the arrivals one phase receives")
            tx = get_int(barrier, "cake.tx_bytes") or 0
            if tx > hw.MBARRIER_MAX_TX_BYTES:
                self.error("H016", f"barrier `{name}` receives {tx} bytes from TMA per phase; an "
                           f"mbarrier's transaction count holds at most "
                           f"{hw.MBARRIER_MAX_TX_BYTES}", barrier,
                           help="complete the copies on more barrier phases or stages")
        self.check_waited_mbarriers()

    # -- H018: what the lowering can wait on --

    def check_waited_mbarriers(self) -> None:
        waits = overwaited(op for _, on in self.idx.role_blocks for op in walk(on))
        for barrier, ops in waits.items():
            name, count = name_of(barrier.result), barrier.count.value.data
            self.error("H018", f"barrier `{name}` has {count} mbarriers and is waited on; "
                       f"code generation tracks the wait parities of at most "
                       f"{hw.MAX_WAITED_MBARRIERS} mbarriers per barrier", barrier,
                       [self.note(op, f"`{name}` is waited on here") for op in ops[:_MAX_NOTES]],
                       help=f"give `{name}` at most {hw.MAX_WAITED_MBARRIERS} stages (`count=`); "
                       "a ring needs no more stages than it has buffers in flight")


# ---- rules, worded ---------------------------------------------------------------------------


def _copy_box(op: Operation, data: SSAValue, swizzle: str | None,
              rank: int) -> tuple[int, ...] | None:
    """One copy's box in numpy order: derive-tma's, else the data's shape padded with leading
    1s, its rows split into swizzle column blocks as derive-tma splits them."""
    derived = get_ints(op, "cake.box")
    if derived:
        return derived
    shape = dims_of(data)
    if not shape or len(shape) > rank:
        return None
    box = (1,) * (rank - len(shape)) + shape
    elem, span = elem_bytes(data.type), hw.SWIZZLE_SPAN.get(swizzle or "none", 0)
    if span and box[-1] * elem > span and box[-1] * elem % span == 0:
        box = box[:-1] + (span // elem,)
    return box


def _axis_name(axis: int, rank: int) -> str:
    return "innermost" if axis == rank - 1 else "outermost" if axis == 0 else "middle"


def _inner_rule(swizzle: str, inner: int) -> str:
    if inner % hw.TMA_INNER_BOX_BYTES_MULTIPLE:
        return f"TMA needs a multiple of {hw.TMA_INNER_BOX_BYTES_MULTIPLE} bytes"
    return f"with {swizzle} swizzle it must fit in one {hw.SWIZZLE_SPAN[swizzle]}-byte span"


def _inner_help(swizzle: str, elem: int, name: str) -> str:
    step = hw.TMA_INNER_BOX_BYTES_MULTIPLE // elem
    return (f"make the inner dimension of `{name}` a multiple of {step} elements"
            if swizzle == "none" else "use a wider swizzle or narrower rows")


def _nearest_regs(regs: int) -> int:
    step = hw.SETMAXNREG_STEP
    return min(max(regs // step * step, hw.SETMAXNREG_MIN), hw.SETMAXNREG_MAX)


def _aligned_warps(warps: Sequence[int]) -> list[int]:
    """As many whole warpgroups as `warps` needs, from the first aligned warp not below it."""
    n = hw.WARPGROUP_WARPS
    first = -(-warps[0] // n) * n
    return list(range(first, first + -(-len(warps) // n) * n))


def _quarters_needed(rows: int) -> range:
    # M=128 puts row m in lane m; M=64 puts rows in lanes 0-15 of every quarter
    # (PTX "Data path layout"); both span all four quarters.
    if rows >= 64:
        return range(hw.WARPGROUP_WARPS)
    return range(-(-rows // hw.WARP_SIZE))


def _n_set(form: hw.MmaForm) -> str:
    return " or ".join(f"{r.min}..{r.max} in steps of {r.step}" if r.min != r.max else str(r.min)
                       for r in form.n)


Problem = tuple[str, str]  # (message, help)


def _wgmma_shape(on: str, form: hw.MmaForm, m: int, n: int, groups: int,
                 acc: str) -> list[Problem]:
    slice_m = form.m[0]
    out: list[Problem] = []
    if m % (slice_m * groups):
        out.append((f"{on} computes M in slices of {slice_m} rows per warpgroup, and "
                    f"accumulator `{acc}` has M={m}, which does not split over the issuing "
                    f"role's {groups} warpgroup(s)",
                    f"make M a multiple of {slice_m * groups}"))
    if not any(n in r for r in form.n):
        out.append((f"{on} takes N = {_n_set(form)}, and accumulator `{acc}` has N={n}",
                    "split the accumulator along N"))
    return out


def _tcgen05_shape(on: str, forms: Sequence[hw.MmaForm], m: int, n: int,
                   acc: str) -> list[Problem]:
    with_m = [f for f in forms if m in f.m]
    if not with_m:
        ms = sorted({x for f in forms for x in f.m})
        return [(f"{on} takes M = {' or '.join(map(str, ms))} per CTA, and accumulator "
                 f"`{acc}` has M={m}", f"use an accumulator of {' or '.join(map(str, ms))} rows")]
    if not any(n in r for f in with_m for r in f.n):
        return [(f"{on} takes N = {_n_set(with_m[0])} with M={m}, and accumulator "
                 f"`{acc}` has N={n}", f"with M={m}, pick an N from that set")]
    return []


def _mma_sync_shape(on: str, form: hw.MmaForm, m: int, n: int, acc: str) -> list[Problem]:
    tile_n = form.n[0].min
    if m % form.m[0] or n % tile_n:
        return [(f"{on} computes {form.m[0]}×{tile_n} tiles, and accumulator `{acc}` is "
                 f"{m}×{n}", f"make M a multiple of {form.m[0]} and N a multiple of {tile_n}")]
    return []
