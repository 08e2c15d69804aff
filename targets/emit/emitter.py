"""The shared CUDA C++ emitter: walks a derived, verified Cake kernel and writes one
self-contained translation unit (the device prelude, the target's support headers, then the
kernel) plus its launch metadata.

The emitter decides nothing the derivation passes own: addresses, swizzles, boxes,
transaction bytes, arrival counts, parities and descriptor bits are read from the `cake.*`
attributes of docs/ir.md. Missing ones are an internal error (CAKE-I002), never a guess.
What it does decide is how each construct becomes instructions; those choices are listed
in docs/codegen.md and implemented by one lowering function per op, taken from the target's
`Backend` (targets/sm80, targets/sm90, targets/sm100). An op without a lowering for the
target is reported (CAKE-H100) instead of being emitted wrongly.

Generated code reads top to bottom as the schedule: variables carry the .cake names and
every block starts with a `// file:line: source` comment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cakec.diagnostics import SourceFile, Span
from cakec.dialects.cake import (
    ArriveOp, BarrierOp, ClusterSyncOp, CommitOp, ConvertOp, CopyLoadOp, FenceProxyOp, ForOp,
    GridOp, KernelOp, MmaOp, OnRoleOp, PipelineOp, RegsOp, RoleOp, SmemOp, StageStoreOp, TmaLoadOp,
    TmaStoreOp, TmaStoreStageOp, TmemOp, SkipOp, ViewOp, WaitOp,
    dtype_name, runs_single_thread, views_overlap, written_view,
)
from cakec.passes.base import sink_of, span_of
from cakec.passes.derive_common import block_ops, walk, walk_block
from cakec.targets.cluster import (cluster_shape, fanout, group_size, member_offset,
                                    multicast_axes)
from cakec.targets.emit import metadata as meta
from cakec.targets.emit.cexpr import literal, paren, unparen
from cakec.targets.emit.unsupported import MISSING, NOT_LOWERED_HELP, UNSUPPORTED, Unsupported
from cakec.targets.emit.watchdog import Watchdog
from cakec.targets.sku import MAX_WAITED_MBARRIERS, SKUS, WARPGROUP_WARPS

#: Ops that only declare resources; the prologue and the metadata consume them.
_DECLARATIONS = (SmemOp, ViewOp, TmemOp, RegsOp, RoleOp, PipelineOp, BarrierOp, GridOp)

_CXX_RESERVED = frozenset("""
alignas alignof and asm auto bool break case catch char class const constexpr continue
default delete do double else enum explicit extern false float for friend goto if inline int
long mutable namespace new noexcept not nullptr operator or private protected public register
return short signed sizeof static struct switch template this throw true try typedef typeid
typename union unsigned using virtual void volatile while xor u16 u32 u64 i32 i64 min max
threadIdx blockIdx blockDim gridDim warpSize float2 make_float2 CakeTensor CakeTensorMap
""".split())


_TARGETS = Path(__file__).resolve().parents[1]  # targets/: support header paths are relative to it


class CudaUnit:
    """What `emit_cuda` produces for one kernel. Its source text and launch metadata are
    assembled when first read, from what the lowering left: verify-lowering, which lowers
    every verified kernel only to learn whether it lowers, reads neither (their assembly
    was a sixth of that dry run)."""

    def __init__(self, kernel: str, target: str, source: Callable[[], str],
                 metadata: Callable[[], dict[str, object]], watchdog: dict | None = None):
        self.kernel = kernel
        self.target = target
        self._source, self._metadata = source, metadata
        #: Watchdog builds: the wait sites and roles (targets/emit/watchdog.py), else None.
        self.watchdog = watchdog

    @cached_property
    def source(self) -> str:
        return self._source()

    @cached_property
    def metadata(self) -> dict[str, object]:
        return self._metadata()



# ---- names ------------------------------------------------------------------------------------


class _Cascade(Exception):
    """Raised where an op reads what an op refused before it defines: reported once, there."""


class _Names:
    """C identifiers: the .cake name where it is free, else name_1, name_2, ...; a name is
    taken while any enclosing C scope holds it (siblings may reuse it, nothing shadows)."""

    def __init__(self) -> None:
        self.scopes: list[set[str]] = [set()]

    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit() or base in _CXX_RESERVED or base.startswith("cake_"):
            base += "_"
        name, n = base, 0
        while any(name in s for s in self.scopes):
            n += 1
            name = f"{base}_{n}"
        self.scopes[-1].add(name)
        return name

    @contextmanager
    def scope(self) -> Iterator[None]:
        self.scopes.append(set())
        try:
            yield
        finally:
            self.scopes.pop()



# ---- per-role state ---------------------------------------------------------------------------


@dataclass
class AccState:
    """A register accumulator: `frags` MMA fragments of `n` columns per thread."""

    var: str
    frags: int
    n: int
    rows_per_wg: int


@dataclass
class RoleState:
    op: RoleOp
    name: str
    warps: list[int]
    single_thread: bool
    phase: dict[BarrierOp, str] = field(default_factory=dict)  # phase-bit register
    held: dict[CommitOp, str] = field(default_factory=dict)    # deferred release slot
    seen: dict[BarrierOp, str] = field(default_factory=dict)   # watchdog: waits passed
    accs: dict[SSAValue, AccState] = field(default_factory=dict)
    barrier_id: int = 1  # named barrier for role-wide sync (0 is __syncthreads)
    #: sm_90a: the epilogue store written a part at a time under the next wgmma groups
    #: (targets/sm90/lowering.py), inside its loop only.
    deferred_store: Any = None
    ops: list[Operation] = field(default_factory=list)  # the role's ops, in program order
    #: This role's `T.tma_store(view[s])`s: their copies read the stage asynchronously
    #: until the role next writes bytes of its view (drain_bulk_stores).
    bulk_stores: list[TmaStoreStageOp] = field(default_factory=list)
    #: a `view[s].store` among `ops` (each `lm.fence_proxy()` of the role asks)
    writes_stages: bool = False
    #: facts a target's lowerings derive once per role from the kernel, which does not
    #: change while it is emitted (sm100: whether the role issues tcgen05.mma)
    memo: dict[str, Any] = field(default_factory=dict)
    #: tile_heights(self), computed once for `ops` (the tile lowerings ask at every op)
    heights: tuple[list[Operation], frozenset[int]] | None = None

    @property
    def first(self) -> int:
        return self.warps[0]

    @property
    def warpgroups(self) -> int:
        return len({w // WARPGROUP_WARPS for w in self.warps})



Lowering = Callable[["KernelEmitter", Operation], None]


@dataclass(frozen=True)
class Backend:
    """What one target family (a package of targets/, named by `Sku.codegen`) gives the
    shared emitter: its lowering table, its device support headers and its hooks."""

    lowerings: Mapping[type[Operation], Lowering]
    #: Device support headers, paths relative to targets/, appended after the prelude in order.
    headers: tuple[str, ...]
    #: Code at kernel entry (after barrier init) and at kernel exit, e.g. TMEM alloc/dealloc.
    entry: Callable[[KernelEmitter], None] | None = None
    exit: Callable[[KernelEmitter], None] | None = None
    #: Declares, in a role's prologue, the `lm.regs` tiles its tile ops keep across the
    #: role's code (a running `lm.argmin`), in the target's tile layout.
    declare_tiles: Callable[[KernelEmitter, RoleState, list[Operation]], None] | None = None
    #: The current role's register-tile layout (targets/emit/tiles.py's `Layout`), for the
    #: shared tile lowerings.
    tile_layout: Callable[[KernelEmitter], Any] | None = None

    def support_source(self) -> str:
        return "\n".join(_support_file(h) for h in self.headers)


# ---- the emitter ------------------------------------------------------------------------------


class KernelEmitter:
    def __init__(self, kernel: KernelOp, ctx: Context, sources: Mapping[str, SourceFile],
                 backend: Backend | None, watchdog: Watchdog | None = None):
        self.kernel = kernel
        self.ctx = ctx
        self.sink = sink_of(ctx)
        self.sources = sources
        self.names = _Names()
        self.lines: list[str] = []
        self.depth = 0
        self.values: dict[SSAValue, str] = {}
        self.views: dict[ViewOp, str] = {}
        self.barriers: dict[BarrierOp, str] = {}
        self.role: RoleState | None = None
        self.used_tmaps: set[tuple[str, int]] = set()
        #: Running-argmin tiles whose quads are merged since their last update (tile lowering).
        self.merged: set[SSAValue] = set()
        #: The C condition an MMA is issued under, inside an `if` that predicates its wgmmas.
        self.mma_guard: str | None = None
        #: Device helpers generated for this kernel (name -> definition), e.g. one per wgmma
        #: form it issues; written after the support headers, in first-use order.
        self.helpers: dict[str, str] = {}
        self._barrier_events: dict[BarrierOp, list[Operation]] | None = None
        self._single_roles: dict[RoleOp, bool] = {}
        self._role_writes: dict[RoleOp, list[ViewOp]] | None = None
        #: Ops already reported (CAKE-H100, CAKE-I002): what reads them is not reported again.
        self.refused: set[Operation] = set()
        self.ok = True
        self.target = self.kernel_str("cake.target") or ""
        self.backend = backend
        self.lowerings = backend.lowerings if backend is not None else None
        self.watchdog = watchdog

    # ---- reporting ------------------------------------------------------------------------

    def span(self, op: Operation) -> Span | None:
        return span_of(op, self.ctx)

    def unsupported(self, op: Operation, what: str, help: str | None = None) -> None:
        self.ok = False
        if op in self.refused:
            return  # one diagnostic per op: its first problem
        self.refused.add(op)
        self.sink.error(UNSUPPORTED, f"{what} is not yet supported for {self.target} code "
                        "generation", self.span(op), help=help or NOT_LOWERED_HELP)

    def missing(self, op: Operation, attr: str) -> None:
        self.ok = False
        self.refused.add(op)
        self.sink.error(MISSING, f"derived attribute `{attr}` is missing on `{op.name}`; the "
                        "derivation passes must run before code generation", self.span(op),
                        help="this is a bug in cakec; please report it with the input file")

    # ---- derived attributes ---------------------------------------------------------------

    def attr_int(self, op: Operation, name: str) -> int:
        a = op.attributes.get(name)
        if not isinstance(a, IntegerAttr):
            self.missing(op, name)
            return 0
        return a.value.data

    def attr_u64(self, op: Operation, name: str) -> int:
        return self.attr_int(op, name) & ((1 << 64) - 1)

    def attr_ints(self, op: Operation, name: str) -> list[int]:
        a = op.attributes.get(name)
        if not isinstance(a, DenseArrayBase):
            self.missing(op, name)
            return [0]
        return list(a.get_values())

    def attr_str(self, op: Operation, name: str) -> str:
        a = op.attributes.get(name)
        data = getattr(a, "data", None)
        if not isinstance(data, str):
            self.missing(op, name)
            return ""
        return data

    def mma_instr(self, op: MmaOp) -> str:
        """The instruction derive-descriptors chose. It derives none when no encoder takes
        the form the SKU table lists: a form not lowered yet."""
        a = op.attributes.get("cake.instr")
        if not isinstance(getattr(a, "data", None), str):
            dts = "×".join(dtype_name(v.type.element_type) for v in (op.a, op.b))
            raise Unsupported(f"an MMA of {dts} operands into "
                              f"{dtype_name(op.acc.type.element_type)}")
        return a.data  # type: ignore[union-attr]

    def kernel_str(self, name: str) -> str | None:
        a = self.kernel.attributes.get(name)
        return getattr(a, "data", None) if a is not None else None

    # ---- text -----------------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        self.lines.append(("  " * self.depth + text) if text else "")

    @contextmanager
    def block(self, head: str = "") -> Iterator[None]:
        """`head {` … `}`: one C scope, which is also a naming scope."""
        self.line(f"{head} {{" if head else "{")
        self.depth += 1
        with self.names.scope():
            yield
        self.depth -= 1
        self.line("}")

    def source_comment(self, op: Operation) -> None:
        """`// file:line: the .cake source line`, the anchor of every emitted block."""
        span = self.span(op)
        if span is None:
            return
        src = self.sources.get(span.file)
        text = src.line(span.line).strip() if src is not None else ""
        name = _file_name(span.file)
        self.line(f"// {name}:{span.line}" + (f": {text}" if text else ""))

    def helper(self, name: str, definition: str) -> str:
        """Use the generated device helper `name` (defined once per translation unit)."""
        self.helpers.setdefault(name, definition)
        return name

    # ---- values ---------------------------------------------------------------------------

    def val(self, v: SSAValue) -> str:
        if v in self.values:
            return self.values[v]
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            return literal(owner.value)
        raise self.undefined(v, f"a value defined by `{getattr(owner, 'name', 'a block')}`")

    def undefined(self, v: SSAValue, what: str) -> Exception:
        """What to raise for a value with no C spelling: `what` is not lowered, unless its
        definer was refused already (then only that refusal is reported)."""
        return _Cascade() if v.owner in self.refused else Unsupported(what)

    def bind(self, op: Operation, text: str, ctype: str = "i32") -> None:
        """Give op's result a C spelling: a named `const` for values the author named,
        the inline expression otherwise."""
        result = op.results[0]
        if result.name_hint:
            var = self.names.fresh(result.name_hint)
            self.line(f"const {ctype} {var} = {unparen(text)};")
            self.values[result] = var
        else:
            self.values[result] = text

    # ---- driver ---------------------------------------------------------------------------

    def run(self) -> CudaUnit | None:
        if self.lowerings is None:
            self.sink.error(UNSUPPORTED, f"code generation for {self.target or 'this target'} "
                            "is not yet supported", self.span(self.kernel),
                            help="supported targets: " + ", ".join(SKUS))
            return None
        block_threads = self.attr_int(self.kernel, "cake.block_threads")
        dynamic_smem = self.attr_int(self.kernel, "cake.dynamic_smem")
        if not self.ok:
            return None
        try:
            grid = meta.grid(self.kernel)
        except meta.GridError as e:
            grid_op = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
            self.unsupported(grid_op, f"a grid dimension that depends on {e}",
                             help="grid dimensions are computed on the host from scalar "
                             "parameters, constants and lm.sm_count()")
            grid = []
        body = self.body(block_threads)
        if not self.ok:
            return None
        smem = dynamic_smem + self.attr_int(self.kernel, "cake.smem_align_slack") \
            if dynamic_smem else 0
        params = meta.params(self.kernel, self.used_tmaps, meta.tensor_maps(self.kernel))
        kernel, target, backend, watchdog = self.kernel, self.target, self.backend, \
            self.watchdog
        # What the text is joined from, not the emitter: the unit keeps only these.
        head, helpers = self.header(), list(self.helpers.values())
        signature = self.signature(params, block_threads)

        def document() -> dict[str, object]:
            return meta.metadata(kernel, target=target, block_threads=block_threads,
                                 dynamic_smem=smem, grid_dims=grid, param_list=params)

        def source() -> str:
            support = [backend.support_source()]
            if watchdog is not None:
                support.append(watchdog.source())
            return "\n".join([*head, prelude_source(), *support, *helpers, *signature, *body,
                              "}", ""])
        return CudaUnit(kernel.sym_name.data, target, source, document,
                        watchdog.table() if watchdog is not None else None)

    def header(self) -> list[str]:
        span = self.span(self.kernel)
        where = _file_name(span.file) if span else "a .cake file"
        return [f"// {self.kernel.sym_name.data}: generated by cakec from {where} for "
                f"{self.target}. Edit the .cake, not this file.",
                "// Launch metadata (grid, block, shared memory, tensor maps): "
                "cakec emit --emit metadata", ""]

    def signature(self, params: list[meta.Param], block_threads: int) -> list[str]:
        args: list[str] = []
        for p in params:
            if p.kind == "tensor":
                args += [f"const __grid_constant__ CakeTensorMap {m.param}" for m in p.tmaps]
                args.append(f"const CakeTensor<{p.rank}> {p.name}")
            else:
                args.append(f"const {'float' if p.dtype == 'f32' else 'i32'} {p.name}")
        span = self.span(self.kernel)
        shape = cluster_shape(self.kernel)
        dims = f" __cluster_dims__({shape[0]}, {shape[1]}, {shape[2]})" if shape else ""
        lines = [f"// {_file_name(span.file)}:{span.line}" if span else "",
                 f'extern "C" __global__ void __launch_bounds__({block_threads}, '
                 f'{blocks_per_sm(self.kernel)}){dims}',
                 f"{self.kernel.sym_name.data}("]
        lines += [f"    {a}," for a in args[:-1]] + [f"    {args[-1]}) {{" if args else ") {"]
        return [line for line in lines if line]

    def body(self, block_threads: int) -> list[str]:
        self.depth = 1
        for name_attr, arg in zip(self.kernel.param_names.data, self.kernel.body.block.args):
            self.values[arg] = self.names.fresh(name_attr.data)
        self.prologue()
        if self.ok:  # a broken barrier contract would only cascade into the roles
            if self.backend.entry is not None:
                self.backend.entry(self)
            self.kernel_scalars()
            self.dispatch(block_threads)
            if self.backend.exit is not None:
                self.backend.exit(self)
            for op in self.kernel.body.block.ops:
                if isinstance(op, ClusterSyncOp):
                    self.source_comment(op)
                    self.line("cake_cluster_sync();  // no CTA exits while a peer may still "
                              "write into its SMEM or arrive on its barriers")
        return self.lines

    # ---- prologue: shared memory, barriers, warp index ------------------------------------

    def prologue(self) -> None:
        ops = block_ops(self.kernel.body.block)
        views = [op for op in ops if isinstance(op, ViewOp)]
        barriers = [op for op in ops if isinstance(op, BarrierOp)]
        if views:
            align = max(self.attr_int(v, "cake.align") for v in views)
            self.line("// Dynamic shared memory: the pools at the offsets derive-smem chose, "
                      f"from a {align}-B aligned base.")
            self.line(f"extern __shared__ __align__({max(align, 16)}) unsigned char cake_dsmem[];")
            base = "cake_smem_addr(cake_dsmem)"
            if align > 16:
                base = f"({base} + {align - 1}u) & ~{align - 1}u"
            self.line(f"const u32 cake_smem = {base};")
        for v in views:
            self.view(v)
        if barriers:
            nbytes = self.attr_int(self.kernel, "cake.barrier_smem")
            self.line(f"__shared__ __align__(8) u64 cake_mbar[{max(nbytes // 8, 1)}];")
            self.line("const u32 cake_mbar_base = cake_smem_addr(cake_mbar);")
        for b in barriers:
            self.barrier(b)
            self.check_arrivals(b)
        self.line("const u32 cake_warp = cake_warp_id();")
        if barriers:
            self.line()
            self.line("// mbarrier.init: one thread, then a fence for the async proxy and a "
                      "block-wide barrier.")
            with self.block("if (threadIdx.x == 0)"):
                for b in barriers:
                    arrivals = self.attr_int(b, "cake.arrivals")
                    var, count = self.barriers[b], b.count.value.data
                    self.source_comment(b)
                    if count == 1:
                        self.line(f"cake_mbar_init({var}, {arrivals});")
                    else:
                        self.line(f"for (u32 i = 0; i < {count}u; ++i) "
                                  f"cake_mbar_init({var} + 8u * i, {arrivals});")
                if self.watchdog is not None:
                    self.line("cake_wd_done = 0u;  // watchdog: no role has finished")
                self.line("cake_fence_mbar_init();")
            if cluster_shape(self.kernel):
                self.line("cake_cluster_sync();  // every CTA's barriers are initialised "
                          "before a peer's multicast copy or arrival reaches them")
            else:
                self.line("__syncthreads();")
        self.line()

    def view(self, v: ViewOp) -> None:
        offset = self.attr_int(v, "cake.offset")
        stages, stage_bytes = v.result.type.stages.data, self.attr_int(v, "cake.stage_bytes")
        swizzle = self.attr_str(v, "cake.swizzle")
        var = self.names.fresh(v.sym_name.data)
        self.views[v] = var
        self.source_comment(v)
        self.line(f"const u32 {var} = cake_smem + {offset}u;  // {stages} x {stage_bytes} B, "
                  f"swizzle {swizzle}")

    def check_arrivals(self, b: BarrierOp) -> None:
        """The lowering's arrivals per role event (below) must be what derive-barriers
        initialised the mbarrier with; a mismatch would complete phases early or never."""
        per_role: dict[RoleOp | None, set[int]] = {}
        for op in self._events().get(b, []):
            per_role.setdefault(role_of(op), set()).add(self.emitted_arrivals(op))
        expected = _phase_arrivals(per_role, b.init_count.value.data)
        derived = self.attr_int(b, "cake.arrivals")
        if expected is None:
            self.unsupported(b, "a barrier completed both by whole roles and per warpgroup, "
                             "other than with one event of each producer role per phase,")
        elif self.ok and per_role and derived != expected:
            self.ok = False
            self.sink.error(MISSING, f"barrier `{b.sym_name.data}` is initialised for {derived} "
                            f"arrival(s) per phase (cake.arrivals), but its producers' code "
                            f"performs {expected}", self.span(b),
                            help="this is a bug in cakec; please report it with the input file")

    def _events(self) -> dict[BarrierOp, list[Operation]]:
        """The ops completing each barrier (one walk of the kernel for all barriers)."""
        if self._barrier_events is None:
            self._barrier_events = {}
            for op in walk(self.kernel):
                if isinstance(op, (TmaLoadOp, CopyLoadOp, ArriveOp, CommitOp)):
                    self._barrier_events.setdefault(op.barrier.owner, []).append(op)
        return self._barrier_events

    def _single_thread(self, role_op: RoleOp) -> bool:
        if role_op not in self._single_roles:
            ons = [o for o in self.kernel.body.block.ops
                   if isinstance(o, OnRoleOp) and o.role.owner is role_op]
            self._single_roles[role_op] = runs_single_thread(ons)
        return self._single_roles[role_op]

    def emitted_arrivals(self, op: Operation) -> int:
        """Hardware arrivals one event performs (what `release` emits): a TMA load one, an
        `lm.arrive` one per warp of a multi-thread role, an `lm.commit` from a multi-thread
        (wgmma) role one per warpgroup, a copy_load one per thread of its role; an arrive or
        commit with `multicast=` that many on every member of its group."""
        role_op = role_of(op)
        if role_op is None or isinstance(op, TmaLoadOp):
            return 1
        warps = role_op.warps.get_values()
        if isinstance(op, CopyLoadOp):
            return 32 * len(warps)
        # Each block of a multicast group arrives on every member.
        if isinstance(op, ArriveOp):
            return (1 if self._single_thread(role_op) else len(warps)) * fanout(self.kernel, op)
        if self._single_thread(role_op) or self.target != "sm_90a":
            return fanout(self.kernel, op)
        return len({w // WARPGROUP_WARPS for w in warps}) * fanout(self.kernel, op)

    def barrier(self, b: BarrierOp) -> None:
        offset = self.attr_int(b, "cake.smem_offset")
        var = self.names.fresh(b.sym_name.data)
        self.barriers[b] = var
        self.source_comment(b)
        tx = b.attributes.get("cake.tx_bytes")
        bytes_note = f" + {tx.value.data} tx bytes" if isinstance(tx, IntegerAttr) and \
            tx.value.data else ""
        self.line(f"const u32 {var} = cake_mbar_base + {offset}u;  // {b.count.value.data} "
                  f"mbarrier(s), {self.attr_int(b, 'cake.arrivals')} arrival(s){bytes_note} "
                  "per phase")

    def kernel_scalars(self) -> None:
        """Kernel-level scalar arithmetic that role code reads (values only the grid uses
        stay on the host)."""
        needed = _device_values(self.kernel)
        for op in self.kernel.body.block.ops:
            if isinstance(op, _DECLARATIONS) or isinstance(op, OnRoleOp):
                continue
            if any(r in needed for r in op.results):
                self.lower(op)

    # ---- roles ----------------------------------------------------------------------------

    def dispatch(self, block_threads: int) -> None:
        """`with ROLE:` blocks, grouped per role into one `if (warp in role)` branch each
        (kernel-level code between them is pure scalar arithmetic, emitted before)."""
        blocks: dict[RoleOp, list[OnRoleOp]] = {}
        for op in self.kernel.body.block.ops:
            if isinstance(op, OnRoleOp) and isinstance(op.role.owner, RoleOp):
                blocks.setdefault(op.role.owner, []).append(op)
        default_regs = launch_regs(block_threads, blocks_per_sm(self.kernel))
        for i, (role_op, ons) in enumerate(blocks.items()):
            self.role = role = self.make_role(role_op, ons)
            role.barrier_id = 1 + i
            self.source_comment(role_op)
            test = _warp_test(role.warps)
            self.line(f"if ({test}) {{" if i == 0 else f"}} else if ({test}) {{")
            self.depth += 1
            with self.names.scope():
                self.role_prologue(role, default_regs, ons)
                for j, on in enumerate(ons):
                    self.source_comment(on)
                    self.role_body(role, on.body.block, last=j == len(ons) - 1)
            self.depth -= 1
        if blocks:
            self.line("}")
        self.role = None

    def make_role(self, role_op: RoleOp, ons: list[OnRoleOp]) -> RoleState:
        warps = sorted(role_op.warps.get_values())
        return RoleState(role_op, role_op.sym_name.data, warps, runs_single_thread(ons))

    def role_prologue(self, role: RoleState, default_regs: int, ons: list[OnRoleOp]) -> None:
        regs = role.op.regs.value.data if role.op.regs is not None else None
        if regs is not None and regs != default_regs:
            how = "dec" if regs < default_regs else "inc"
            self.line(f"cake_setmaxnreg_{how}<{regs}>();  // regs={regs} for every warpgroup "
                      f"of `{role.name}` (launch default {default_regs})")
        ops = [op for on in ons for op in walk_block(on.body.block)]
        # One phase-bit register per barrier this role waits on: bit s is the parity of
        # the next wait on barrier[s]; it starts at derive-barriers' initial parity.
        for wait in (op for op in ops if isinstance(op, (WaitOp, SkipOp))):
            b = wait.barrier.owner
            if not isinstance(b, BarrierOp) or b in role.phase:
                continue
            count = b.count.value.data
            if count > MAX_WAITED_MBARRIERS:  # verify-conformance refuses it (CAKE-H018)
                self.unsupported(wait, f"waiting on a barrier of {count} mbarriers")
                continue
            parity = self.attr_int(wait, "cake.initial_parity")
            ctype, suffix = ("u64", "ull") if count > 32 else ("u32", "u")
            bits = hex((1 << count) - 1) + suffix if parity else "0" + suffix
            var = self.names.fresh(f"{b.sym_name.data}_phase")
            role.phase[b] = var
            self.line(f"{ctype} {var} = {bits};  // lm.wait parities on `{b.sym_name.data}` "
                      f"(initial parity {parity})")
            if self.watchdog is not None:
                role.seen[b] = self.names.fresh(f"{b.sym_name.data}_seen")
                self.line(f"u32 {role.seen[b]} = 0u;  // watchdog: waits on "
                          f"`{b.sym_name.data}` passed")
        role.ops = ops
        role.writes_stages = any(isinstance(o, StageStoreOp) for o in ops)
        role.bulk_stores = [o for o in ops if isinstance(o, TmaStoreStageOp)]
        declare = self.lowerings.get(RegsOp) if self.lowerings else None  # the target's layout
        for regs_op in (op.acc.owner for op in ops if isinstance(op, MmaOp)):
            if isinstance(regs_op, RegsOp) and declare is not None:
                declare(self, regs_op)
        if self.backend.declare_tiles is not None:
            self.backend.declare_tiles(self, role, ops)  # lm.regs vectors (lm.argmin)
        if role.single_thread:
            return
        lane0 = "cake_lane_id() == 0u"
        if any(isinstance(op, (TmaLoadOp, TmaStoreStageOp)) for op in ops):
            self.line(f"const bool cake_leader = cake_warp == {role.first}u && {lane0};"
                      "  // issues the role's TMA copies")
        if any(isinstance(op, CommitOp) for op in ops):
            leaders = sorted({min(w for w in role.warps if w // 4 == g)
                              for g in {w // 4 for w in role.warps}})
            test = ("cake_warp % 4u == 0u" if all(w % 4 == 0 for w in leaders)
                    else "(" + " || ".join(f"cake_warp == {w}u" for w in leaders) + ")")
            commits = [op for op in ops if isinstance(op, CommitOp)]
            if any(not multicast_axes(op) for op in commits):
                self.line(f"const bool cake_wg_leader = {test} && {lane0};"
                          "  // one per warpgroup of the role")
            if any(multicast_axes(op) for op in commits):
                self.line(f"const bool cake_wg_leader_warp = {test};"
                          "  // its lanes arrive on the multicast group's members")
        if role.accs:
            self.line(f"const u32 cake_wg = (cake_warp - {role.first}u) / 4u;"
                      f"  // warpgroup within `{role.name}`")

    def role_body(self, role: RoleState, block: Block, last: bool = True) -> None:
        if self.watchdog is not None and last:
            self.watchdog.roles[role.name] = {
                "warps": role.warps, "working": [role.first] if role.single_thread
                else role.warps}
        done = self.watchdog is not None and last
        if not role.single_thread:
            params = self.prefetches(block)
            if params:
                with self.block("if (cake_leader)"):
                    for p in params:
                        self.line(f"cake_tma_prefetch(&{p});")
            self.ops(block)
            if last and role.bulk_stores:
                self.line("if (cake_leader) cake_tma_store_wait_read<0>();  // the role's TMA "
                          "stores have read their stages before the CTA's SMEM goes")
            if done:
                self.line("if (cake_lane_id() == 0u) cake_wd_role_done(cake_warp);")
            return
        # Every op of this role is a single-thread one: one elected thread runs it all.
        with self.block(f"if (cake_warp == {role.first}u && cake_elect_one())"):
            for p in self.prefetches(block):
                self.line(f"cake_tma_prefetch(&{p});")
            self.ops(block)
            if last and role.bulk_stores:
                self.line("cake_tma_store_wait_read<0>();  // the role's TMA stores have read "
                          "their stages before the CTA's SMEM goes")
            if done:
                self.line("cake_wd_role_done(cake_warp);")

    def prefetches(self, block: Block) -> list[str]:
        """Tensor maps this block's TMA loads read: prefetched before the first copy."""
        return sorted({self.tmap_param(op) for op in walk_block(block)
                       if isinstance(op, TmaLoadOp)})

    # ---- ops ------------------------------------------------------------------------------

    def ops(self, block: Block) -> None:
        for op in block.ops:
            self.lower(op)

    def lower(self, op: Operation) -> None:
        assert self.lowerings is not None
        fn = self.lowerings.get(type(op))
        if fn is None:
            self.unsupported(op, f"`{_surface(op)}`")
            return
        self.drain_bulk_stores(op)
        self.try_lower(op, lambda: fn(self, op))

    def drain_bulk_stores(self, op: Operation) -> None:
        """Where a copy of one of the role's `T.tma_store(view[s])`s may still be reading SMEM
        that is about to be written, its leader first waits until every store group it
        committed has read its stage (`cp.async.bulk.wait_group.read 0`, at once when none is
        pending): before the role writes bytes of a stored view (`store`, TMA load,
        copy_load; a role whose other threads write then meets the leader at its named
        barrier), and before an `lm.arrive`/`lm.commit` on a barrier whose consumers write
        such bytes (the leader's own arrival completes the phase, so none goes early). The
        stores' global writes go on under whatever follows."""
        role = self.role
        if role is None or not role.bulk_stores:
            return
        view = written_view(op)
        if view is not None:
            targets = [view]
        elif isinstance(op, (ArriveOp, CommitOp)):
            b = op.barrier.owner
            targets = [v for r in (b.cons if isinstance(b, BarrierOp) else ())
                       if r.owner is not role.op for v in self.role_writes().get(r.owner, ())]
        else:
            return
        stored = [s.source.owner.view.owner for s in role.bulk_stores  # type: ignore[union-attr]
                  if _may_precede(role.ops, s, op)]
        hit = next((t for t in targets if any(views_overlap(t, v) for v in stored)), None)
        if hit is None:
            return
        why = (f"the TMA stores of `{role.name}` have read the bytes `{hit.sym_name.data}` "
               "rewrites")
        if role.single_thread:
            self.line(f"cake_tma_store_wait_read<0>();  // {why}")
            return
        self.line(f"if (cake_leader) cake_tma_store_wait_read<0>();  // {why}")
        if view is None or isinstance(op, TmaLoadOp):
            return  # an arrival, or a copy the leader issues itself
        if len(role.warps) == 1:
            self.line("__syncwarp();")
        else:
            self.line(f"cake_named_barrier_sync({role.barrier_id}u, {32 * len(role.warps)}u);")

    def role_writes(self) -> dict[RoleOp, list[ViewOp]]:
        """The views each role writes (`written_view`), in program order."""
        if self._role_writes is None:
            self._role_writes = {}
            for on in self.kernel.body.block.ops:
                if isinstance(on, OnRoleOp) and isinstance(on.role.owner, RoleOp):
                    views = self._role_writes.setdefault(on.role.owner, [])
                    views += filter(None, map(written_view, walk_block(on.body.block)))
        return self._role_writes

    def try_lower(self, op: Operation, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Unsupported as e:
            self.unsupported(op, str(e))
        except _Cascade:
            self.ok = False
            self.refused.add(op)
        except Exception:
            # Once a construct was refused (CAKE-H100) the unit is not emitted, and ops that
            # depend on it (a wait on a barrier whose phase register was never declared) may
            # find their state missing: that is the refusal's consequence, not a second bug.
            if self.ok:
                raise

    # ---- shared helpers for lowerings -----------------------------------------------------

    def bar_addr(self, b: BarrierOp, slot: str) -> str:
        """Address of barrier element `slot` (a C expression)."""
        var = self.barriers[b]
        return var if b.count.value.data == 1 else f"{var} + 8u * {paren(slot)}"

    def barrier_of(self, value: SSAValue) -> BarrierOp:
        b = value.owner
        assert isinstance(b, BarrierOp)
        return b

    def tmap_param(self, op: TmaLoadOp | TmaStoreStageOp) -> str:
        tensor = self.tensor_name(op.tensor)
        index = self.attr_int(op, "cake.tmap")
        self.used_tmaps.add((tensor, index))
        return f"{tensor}_tmap{index}"

    def tensor_name(self, value: SSAValue) -> str:
        assert isinstance(value, BlockArgument)
        return self.kernel.param_names.data[value.index].data

    def release(self, b: BarrierOp, addr: str, per_warpgroup: bool,
                axes: tuple[int, ...] = ()) -> None:
        """One event of the current role on barrier element `addr`, with the arrivals
        derive-barriers counts for it (cake.arrivals): an `lm.commit` on sm_90a arrives once
        per warpgroup (each after its own wgmma.wait_group), an `lm.arrive` once per warp of
        the role (after __syncwarp, so lane 0's arrival releases its lanes' work; warps never
        wait for each other: the barrier's phase completes when the last one arrives). With
        multicast `axes` the event reaches `addr` in every member of this CTA's group (this
        one included): lane m of each arriving warp arrives on member m through mapa."""
        role = self.role
        assert role is not None
        if axes:
            self._release_to_group(addr, per_warpgroup, axes)
        elif role.single_thread:
            self.line(f"cake_mbar_arrive({addr});")
        elif per_warpgroup:
            self.line(f"if (cake_wg_leader) cake_mbar_arrive({addr});")
        else:
            self.line("__syncwarp();")
            self.line(f"if (cake_lane_id() == 0u) cake_mbar_arrive({addr});")

    def _release_to_group(self, addr: str, per_warpgroup: bool, axes: tuple[int, ...]) -> None:
        shape = cluster_shape(self.kernel)
        assert shape is not None and self.role is not None
        n = group_size(shape, axes)
        base = f"cake_cluster_group_base({sum(1 << a for a in axes)}u)"
        if self.role.single_thread:
            with self.block(f"for (u32 cake_m = 0; cake_m < {n}u; ++cake_m)"):
                self.line(f"cake_mbar_arrive_cluster(cake_mapa({addr}, {base} + "
                          f"{member_offset('cake_m', shape, axes)}));")
            return
        # A commit's arrivals come from the warpgroup leader's warp (its wgmma.wait_group
        # covers the warpgroup), an arrive's from every warp once its lanes are done.
        who = "cake_wg_leader_warp && " if per_warpgroup else ""
        if not per_warpgroup:
            self.line("__syncwarp();")
        self.line(f"if ({who}cake_lane_id() < {n}u) cake_mbar_arrive_cluster(cake_mapa({addr}, "
                  f"{base} + {member_offset('cake_lane_id()', shape, axes)}));  "
                  "// lane m: member m")

    def release_held(self, commit: CommitOp, held: str, reset: bool) -> None:
        """Retire every wgmma group, then perform the release a deferred commit holds."""
        b = self.barrier_of(commit.barrier)
        self.line("cake_wgmma_wait<0>();")
        with self.block(f"if ({held} != ~0u)"):
            self.release(b, self.bar_addr(b, held), per_warpgroup=True,
                         axes=multicast_axes(commit))
            if reset:
                self.line(f"{held} = ~0u;")




# ---- helpers -----------------------------------------------------------------------------------


def _may_precede(ops: list[Operation], first: Operation, then: Operation) -> bool:
    """Whether `first` may run before `then` in a role whose ops are `ops` (program order):
    it comes earlier, or a loop holds both (an earlier iteration's)."""
    if ops.index(first) < ops.index(then):
        return True
    loop = then.parent_op()
    while loop is not None:
        if isinstance(loop, ForOp) and loop.is_ancestor(first):
            return True
        loop = loop.parent_op()
    return False


def role_of(op: Operation) -> RoleOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, OnRoleOp):
        parent = parent.parent_op()
    owner = parent.role.owner if parent is not None else None
    return owner if isinstance(owner, RoleOp) else None


def _phase_arrivals(per_role: dict[RoleOp | None, set[int]], init_count: int) -> int | None:
    """Hardware arrivals of one phase, from each producer role's arrivals per event: init_count
    events that arrive alike, or, when they differ (an sm_100a commit and a 4-warp arrive
    releasing one stage), one event of each role; None for any other mix."""
    kinds = set().union(*per_role.values())
    if len(kinds) <= 1:
        return init_count * max(kinds, default=1)
    if len(per_role) == init_count and all(len(k) == 1 for k in per_role.values()):
        return sum(max(k) for k in per_role.values())
    return None


def _device_values(kernel: KernelOp) -> set[SSAValue]:
    """Kernel-level values that role code reads, with everything they are computed from."""
    needed: set[SSAValue] = set()
    work: list[SSAValue] = []
    # Ids, not the ops: an IRDL op hashes through a Python method.
    top = {id(op) for op in kernel.body.block.ops}
    for on in (op for op in kernel.body.block.ops if isinstance(op, OnRoleOp)):
        for op in walk_block(on.body.block):
            work.extend(o for o in op.operands if id(o.owner) in top)
    while work:
        v = work.pop()
        if v not in needed:
            needed.add(v)
            if isinstance(v.owner, Operation):
                work.extend(o for o in v.owner.operands if isinstance(o.owner, Operation))
    return needed


def blocks_per_sm(kernel: KernelOp) -> int:
    """`@cake.schedule(blocks_per_sm=N)`'s N (1 when not given): the launch bound's minimum
    of resident blocks per SM."""
    return kernel.blocks_per_sm.value.data if kernel.blocks_per_sm is not None else 1


def launch_regs(block_threads: int, blocks: int = 1) -> int:
    """Registers per thread the launch gives (__launch_bounds__(threads, blocks)): the 65536
    of the register file split evenly over `blocks` blocks, in setmaxnreg's units of 8."""
    return min(65536 // (block_threads * blocks) // 8 * 8, 256) if block_threads else 0


def _warp_test(warps: list[int]) -> str:
    lo, hi = warps[0], warps[-1]
    if warps != list(range(lo, hi + 1)):
        return " || ".join(f"cake_warp == {w}u" for w in warps)
    return f"cake_warp < {hi + 1}u" if lo == 0 else f"cake_warp >= {lo}u && cake_warp < {hi + 1}u"


def _surface(op: Operation) -> str:
    names = {WaitOp: "lm.wait", SkipOp: "lm.skip", ArriveOp: "lm.arrive", CommitOp: "lm.commit",
             MmaOp: "lm.mma",
             TmaLoadOp: "tma_load", TmaStoreOp: "tma_store", FenceProxyOp: "lm.fence_proxy",
             ConvertOp: ".to(dtype)"}
    return names.get(type(op), op.name)


def prelude_source() -> str:
    """targets/emit/prelude.cuh: the device helpers every generated translation unit starts with."""
    return _support_file("emit/prelude.cuh")


@lru_cache(maxsize=None)
def _support_file(path: str) -> str:
    """A device support file of the package (relative to targets/), read once per process:
    every emit, and every verify's dry run of it (verify-lowering), includes them."""
    return (_TARGETS / path).read_text()


@lru_cache(maxsize=256)
def _file_name(path: str) -> str:
    """`Path(path).name`, once per path (each emitted block's source comment names it)."""
    return Path(path).name
