"""CUDA C++ emitter: a derived, verified Cake module → one self-contained translation unit
(the device prelude inlined, then the kernel) plus its launch metadata.

The emitter decides nothing the derivation passes own: addresses, swizzles, boxes,
transaction bytes, arrival counts, parities and descriptor bits are read from the `cake.*`
attributes of docs/ir.md. Missing ones are an internal error (CAKE-I002), never a guess.
What it does decide is how each construct becomes instructions; those choices are listed
in docs/codegen.md and implemented by one lowering function per op, chosen by target from
LOWERINGS. An op without a lowering for the target is reported (CAKE-H100) instead of
being emitted wrongly.

Generated code reads top to bottom as the schedule: variables carry the .cake names and
every block starts with a `// file:line: source` comment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cakec.diagnostics import SourceFile, Span
from cakec.dialects.cake import (
    ArriveOp, BarrierOp, BlockIdOp, CommitOp, ConvertOp, CopyLoadOp, DimOp, FenceProxyOp,
    ForOp, GridOp, IfOp, KernelOp, MmaOp, NumBlocksOp, OnRoleOp, PipelineOp, RegsOp, RoleOp,
    SmCountOp, SmemOp, StageOp, TmaLoadOp, TmaStoreOp, TmemOp, ViewOp, WaitOp, dtype_name,
    runs_single_thread,
)
from cakec.passes.base import sink_of, span_of
from cakec.targets import metadata as meta
from cakec.targets.sku import MAX_WAITED_MBARRIERS, WARPGROUP_WARPS

#: Code for lowerings a target does not have yet (the emitter's range of CAKE-H).
UNSUPPORTED = "CAKE-H100"
#: The help of a CAKE-H100 whose lowering names no specific fix.
_NOT_LOWERED_HELP = ("docs/codegen.md (\"Not lowered yet\") lists what each target lowers: "
                     "write the construct in a lowered form, or choose a target that lowers it")
#: A derived attribute the emitter needs is absent or malformed: a pass contract is broken.
MISSING = "CAKE-I002"
#: The 18-bit shared-memory window that descriptor start addresses cover.
_SMEM_WINDOW_MASK = "0x3FFFFu"
_DIM = ("x", "y", "z")
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}  # arith.cmpi, signed
_INFIX = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.RemSIOp: "%",
          arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}
_BOOL = {arith.AndIOp: "&&", arith.OrIOp: "||", arith.XOrIOp: "!="}
_CALL = {arith.FloorDivSIOp: "cake_floordiv", arith.CeilDivSIOp: "cake_cdiv",
         arith.MinSIOp: "min", arith.MaxSIOp: "max"}
#: Smallest ring whose commits keep a wgmma group in flight. The held stage is one the
#: producer cannot refill yet: with 3 stages only one is left to prefetch into, and the
#: H200 GEMM lost 3% (642 vs 662 TFLOP/s at 8192³); with 4 the two schemes tie.
MIN_RING_FOR_IN_FLIGHT = 4
#: Parts a deferred epilogue store is split into (one per wgmma group that follows it).
STORE_PARTS = 4
#: Epilogue conversion traits (targets/cuda_emit_sm90.cuh) per stored dtype.
_OUT = {"bf16": "CakeOutBf16", "f16": "CakeOutF16", "f32": "CakeOutF32"}
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


class Unsupported(Exception):
    """Raised by a lowering that cannot emit correct code for this op on this target."""


class _Cascade(Exception):
    """Raised where an op reads what an op refused before it defines: reported once, there."""


@dataclass(frozen=True)
class CudaUnit:
    """What `emit_cuda` produces for one kernel."""

    kernel: str
    target: str
    source: str
    metadata: dict[str, object]


# ---- names ------------------------------------------------------------------------------------


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
class _Acc:
    """A register accumulator: `frags` wgmma fragments of `n` columns per thread."""

    var: str
    frags: int
    n: int
    rows_per_wg: int


@dataclass
class _Role:
    op: RoleOp
    name: str
    warps: list[int]
    single_thread: bool
    phase: dict[BarrierOp, str] = field(default_factory=dict)  # phase-bit register
    held: dict[CommitOp, str] = field(default_factory=dict)    # deferred release slot
    accs: dict[SSAValue, _Acc] = field(default_factory=dict)
    barrier_id: int = 1  # named barrier for role-wide sync (0 is __syncthreads)
    deferred_store: "_DeferredStore | None" = None  # inside its loop only

    @property
    def first(self) -> int:
        return self.warps[0]

    @property
    def warpgroups(self) -> int:
        return len({w // WARPGROUP_WARPS for w in self.warps})


@dataclass(frozen=True)
class _DeferredStore:
    """A store whose whole tiles are packed into `out` and written a part at a time under
    the next wgmma groups (`parts` = parts still to write, 0 when nothing is pending)."""

    op: TmaStoreOp
    out: str
    row: str
    col: str
    parts: str
    n: int
    trait: str
    tensor: str

    def store_part(self) -> str:
        return (f"cake_store_packed_part<{self.n}, {STORE_PARTS}, {self.trait}>({self.out}, "
                f"{self.tensor}, {self.row}, {self.col}, {self.parts});")


Lowering = Callable[["KernelEmitter", Operation], None]


# ---- the emitter ------------------------------------------------------------------------------


def emit_cuda(module: ModuleOp, ctx: Context,
              sources: Mapping[str, SourceFile] | None = None) -> CudaUnit | None:
    """Emit the module's kernel for the target derive-smem recorded; diagnostics go to the
    context's sink and the result is None when anything could not be emitted."""
    sink = sink_of(ctx)
    kernels = [op for op in module.ops if isinstance(op, KernelOp)]
    if len(kernels) != 1:
        sink.error(UNSUPPORTED, f"code generation takes one kernel per file; this file has "
                   f"{len(kernels)}", span_of(kernels[1], ctx) if len(kernels) > 1 else None,
                   help="move each kernel into its own .cake file")
        return None
    return KernelEmitter(kernels[0], ctx, sources or {}).run()


class KernelEmitter:
    def __init__(self, kernel: KernelOp, ctx: Context, sources: Mapping[str, SourceFile]):
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
        self.role: _Role | None = None
        self.used_tmaps: set[tuple[str, int]] = set()
        #: Running-argmin tiles whose quads are merged since their last update (tile lowering).
        self.merged: set[SSAValue] = set()
        #: The C condition an MMA is issued under, inside an `if` that predicates its wgmmas.
        self.mma_guard: str | None = None
        self._barrier_events: dict[BarrierOp, list[Operation]] | None = None
        self._single_roles: dict[RoleOp, bool] = {}
        #: Ops already reported (CAKE-H100, CAKE-I002): what reads them is not reported again.
        self.refused: set[Operation] = set()
        self.ok = True
        self.target = self.kernel_str("cake.target") or ""
        self.lowerings = LOWERINGS.get(self.target)

    # ---- reporting ------------------------------------------------------------------------

    def span(self, op: Operation) -> Span | None:
        return span_of(op, self.ctx)

    def unsupported(self, op: Operation, what: str, help: str | None = None) -> None:
        self.ok = False
        if op in self.refused:
            return  # one diagnostic per op: its first problem
        self.refused.add(op)
        self.sink.error(UNSUPPORTED, f"{what} is not yet supported for {self.target} code "
                        "generation", self.span(op), help=help or _NOT_LOWERED_HELP)

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
        the form the SKU table lists (kind::i8 on sm_100a, say): a form not lowered yet."""
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
        name = Path(span.file).name
        self.line(f"// {name}:{span.line}" + (f": {text}" if text else ""))

    # ---- values ---------------------------------------------------------------------------

    def val(self, v: SSAValue) -> str:
        if v in self.values:
            return self.values[v]
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            return _literal(owner.value)
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
            self.line(f"const {ctype} {var} = {_unparen(text)};")
            self.values[result] = var
        else:
            self.values[result] = text

    # ---- driver ---------------------------------------------------------------------------

    def run(self) -> CudaUnit | None:
        if self.lowerings is None:
            self.sink.error(UNSUPPORTED, f"code generation for {self.target or 'this target'} "
                            "is not yet supported", self.span(self.kernel),
                            help="supported targets: " + ", ".join(LOWERINGS))
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
        tmaps = meta.tensor_maps(self.kernel)
        params = meta.params(self.kernel, self.used_tmaps, tmaps)
        smem = dynamic_smem + self.attr_int(self.kernel, "cake.smem_align_slack") \
            if dynamic_smem else 0
        document = meta.metadata(self.kernel, target=self.target, block_threads=block_threads,
                                 dynamic_smem=smem, grid_dims=grid, param_list=params)
        source = "\n".join([*self.header(), _prelude(), _support(self.target),
                            *self.signature(params, block_threads), *body, "}", ""])
        return CudaUnit(self.kernel.sym_name.data, self.target, source, document)

    def header(self) -> list[str]:
        span = self.span(self.kernel)
        where = Path(span.file).name if span else "a .cake file"
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
        lines = [f"// {Path(span.file).name}:{span.line}" if span else "",
                 f'extern "C" __global__ void __launch_bounds__({block_threads}, 1)',
                 f"{self.kernel.sym_name.data}("]
        lines += [f"    {a}," for a in args[:-1]] + [f"    {args[-1]}) {{" if args else ") {"]
        return [line for line in lines if line]

    def body(self, block_threads: int) -> list[str]:
        self.depth = 1
        for name_attr, arg in zip(self.kernel.param_names.data, self.kernel.body.block.args):
            self.values[arg] = self.names.fresh(name_attr.data)
        self.prologue()
        hooks = KERNEL_HOOKS.get(self.target)
        if self.ok:  # a broken barrier contract would only cascade into the roles
            if hooks:
                hooks[0](self)
            self.kernel_scalars()
            self.dispatch(block_threads)
            if hooks:
                hooks[1](self)
        return self.lines

    # ---- prologue: shared memory, barriers, warp index ------------------------------------

    def prologue(self) -> None:
        ops = list(self.kernel.body.block.ops)
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
                self.line("cake_fence_mbar_init();")
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
            per_role.setdefault(_role_of(op), set()).add(self.emitted_arrivals(op))
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
            for op in self.kernel.walk():
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
        (wgmma) role one per warpgroup, a copy_load one per thread of its role."""
        role_op = _role_of(op)
        if role_op is None or isinstance(op, TmaLoadOp):
            return 1
        warps = role_op.warps.get_values()
        if isinstance(op, CopyLoadOp):
            return 32 * len(warps)
        if self._single_thread(role_op):
            return 1
        if isinstance(op, ArriveOp):
            return len(warps)
        if self.target != "sm_90a":
            return 1
        return len({w // WARPGROUP_WARPS for w in warps})

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
        default_regs = _default_regs(block_threads)
        for i, (role_op, ons) in enumerate(blocks.items()):
            self.role = role = self.make_role(role_op, ons)
            role.barrier_id = 1 + i
            self.source_comment(role_op)
            test = _warp_test(role.warps)
            self.line(f"if ({test}) {{" if i == 0 else f"}} else if ({test}) {{")
            self.depth += 1
            with self.names.scope():
                self.role_prologue(role, default_regs, ons)
                for on in ons:
                    self.source_comment(on)
                    self.role_body(role, on.body.block)
            self.depth -= 1
        if blocks:
            self.line("}")
        self.role = None

    def make_role(self, role_op: RoleOp, ons: list[OnRoleOp]) -> _Role:
        warps = sorted(role_op.warps.get_values())
        return _Role(role_op, role_op.sym_name.data, warps, runs_single_thread(ons))

    def role_prologue(self, role: _Role, default_regs: int, ons: list[OnRoleOp]) -> None:
        regs = role.op.regs.value.data if role.op.regs is not None else None
        if regs is not None and regs != default_regs:
            how = "dec" if regs < default_regs else "inc"
            self.line(f"cake_setmaxnreg_{how}<{regs}>();  // regs={regs} for every warpgroup "
                      f"of `{role.name}` (launch default {default_regs})")
        ops = [op for on in ons for op in on.body.block.walk()]
        # One phase-bit register per barrier this role waits on: bit s is the parity of
        # the next wait on barrier[s]; it starts at derive-barriers' initial parity.
        for wait in (op for op in ops if isinstance(op, WaitOp)):
            b = wait.barrier.owner
            if not isinstance(b, BarrierOp) or b in role.phase:
                continue
            count = b.count.value.data
            if count > MAX_WAITED_MBARRIERS:  # verify-conformance refuses it (CAKE-H017)
                self.unsupported(wait, f"waiting on a barrier of {count} mbarriers")
                continue
            parity = self.attr_int(wait, "cake.initial_parity")
            ctype, suffix = ("u64", "ull") if count > 32 else ("u32", "u")
            bits = hex((1 << count) - 1) + suffix if parity else "0" + suffix
            var = self.names.fresh(f"{b.sym_name.data}_phase")
            role.phase[b] = var
            self.line(f"{ctype} {var} = {bits};  // lm.wait parities on `{b.sym_name.data}` "
                      f"(initial parity {parity})")
        declare = self.lowerings.get(RegsOp) if self.lowerings else None  # a target's own layout
        for regs_op in (op.acc.owner for op in ops if isinstance(op, MmaOp)):
            if isinstance(regs_op, RegsOp) and declare is not None:
                declare(self, regs_op)
            elif isinstance(regs_op, RegsOp) and regs_op.result not in role.accs:
                self.declare_acc(role, regs_op, ops)
        declare_tiles = TILE_DECLARATIONS.get(self.target)
        if declare_tiles is not None:
            declare_tiles(self, role, ops)  # lm.regs vectors (lm.argmin)
        if role.single_thread:
            return
        lane0 = "cake_lane_id() == 0u"
        if any(isinstance(op, TmaLoadOp) for op in ops):
            self.line(f"const bool cake_leader = cake_warp == {role.first}u && {lane0};"
                      "  // issues the role's TMA loads")
        if any(isinstance(op, CommitOp) for op in ops):
            leaders = sorted({min(w for w in role.warps if w // 4 == g)
                              for g in {w // 4 for w in role.warps}})
            test = ("cake_warp % 4u == 0u" if all(w % 4 == 0 for w in leaders)
                    else "(" + " || ".join(f"cake_warp == {w}u" for w in leaders) + ")")
            self.line(f"const bool cake_wg_leader = {test} && {lane0};"
                      "  // one per warpgroup of the role")
        if role.accs:
            self.line(f"const u32 cake_wg = (cake_warp - {role.first}u) / 4u;"
                      f"  // warpgroup within `{role.name}`")

    def declare_acc(self, role: _Role, regs_op: RegsOp, ops: list[Operation]) -> None:
        mma = next(op for op in ops if isinstance(op, MmaOp) and op.acc == regs_op.result)
        shape = self.attr_ints(mma, "cake.mma_shape")
        groups = self.attr_int(mma, "cake.warpgroups")
        m, n = regs_op.result.type.dims()
        if groups != role.warpgroups or len(shape) != 3 or shape[1] != n or not groups:
            self.unsupported(mma, f"an MMA split over {groups} warpgroups in role "
                             f"`{role.name}` of {len(role.warps)} warps")
            return
        rows = m // groups
        var = self.names.fresh(regs_op.sym_name.data)
        role.accs[regs_op.result] = _Acc(var, rows // shape[0], n, rows)
        self.source_comment(regs_op)
        self.line(f"float {var}[{rows // shape[0]}][{n // 2}];  // {m}x{n} f32: rows "
                  f"[{rows} wg, {rows} wg + {rows}) in warpgroup wg, wgmma fragments")

    def role_body(self, role: _Role, block: Block) -> None:
        if not role.single_thread:
            params = self.prefetches(block)
            if params:
                with self.block("if (cake_leader)"):
                    for p in params:
                        self.line(f"cake_tma_prefetch(&{p});")
            self.ops(block)
            return
        # Every op of this role is a single-thread one: one elected thread runs it all.
        with self.block(f"if (cake_warp == {role.first}u && cake_elect_one())"):
            for p in self.prefetches(block):
                self.line(f"cake_tma_prefetch(&{p});")
            self.ops(block)

    def prefetches(self, block: Block) -> list[str]:
        """Tensor maps this block's TMA loads read: prefetched before the first copy."""
        return sorted({self.tmap_param(op) for op in block.walk() if isinstance(op, TmaLoadOp)})

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
        self.try_lower(op, lambda: fn(self, op))

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
        return var if b.count.value.data == 1 else f"{var} + 8u * {_paren(slot)}"

    def barrier_of(self, value: SSAValue) -> BarrierOp:
        b = value.owner
        assert isinstance(b, BarrierOp)
        return b

    def tmap_param(self, op: TmaLoadOp) -> str:
        tensor = self.tensor_name(op.tensor)
        index = self.attr_int(op, "cake.tmap")
        self.used_tmaps.add((tensor, index))
        return f"{tensor}_tmap{index}"

    def tensor_name(self, value: SSAValue) -> str:
        assert isinstance(value, BlockArgument)
        return self.kernel.param_names.data[value.index].data

    def release(self, b: BarrierOp, addr: str, per_warpgroup: bool) -> None:
        """One event of the current role on barrier element `addr`, with the arrivals
        derive-barriers counts for it (cake.arrivals): an `lm.commit` on sm_90a arrives once
        per warpgroup (each after its own wgmma.wait_group), an `lm.arrive` once per warp of
        the role (after __syncwarp, so lane 0's arrival releases its lanes' work; warps never
        wait for each other: the barrier's phase completes when the last one arrives)."""
        role = self.role
        assert role is not None
        if role.single_thread:
            self.line(f"cake_mbar_arrive({addr});")
        elif per_warpgroup:
            self.line(f"if (cake_wg_leader) cake_mbar_arrive({addr});")
        else:
            self.line("__syncwarp();")
            self.line(f"if (cake_lane_id() == 0u) cake_mbar_arrive({addr});")

    def release_held(self, commit: CommitOp, held: str, reset: bool) -> None:
        """Retire every wgmma group, then perform the release a deferred commit holds."""
        b = self.barrier_of(commit.barrier)
        self.line("cake_wgmma_wait<0>();")
        with self.block(f"if ({held} != ~0u)"):
            self.release(b, self.bar_addr(b, held), per_warpgroup=True)
            if reset:
                self.line(f"{held} = ~0u;")


# ---- lowerings shared by every target ---------------------------------------------------------


def scalar(em: KernelEmitter, op: Operation) -> None:
    """arith ops: C expressions (Python `//` and lm.cdiv through the support helpers)."""
    if isinstance(op, arith.ConstantOp):
        em.values[op.result] = _literal(op.value)
        return
    vals = [em.val(o) for o in op.operands]
    t = type(op)
    if t in _INFIX:
        text = f"({vals[0]} {_INFIX[t]} {vals[1]})"
    elif t in _BOOL:
        text = f"({vals[0]} {_BOOL[t]} {vals[1]})"
    elif t in _CALL:
        text = f"{_CALL[t]}({_unparen(vals[0])}, {_unparen(vals[1])})"
    elif isinstance(op, arith.CmpiOp) and op.predicate.value.data in _CMP:
        text = f"({vals[0]} {_CMP[op.predicate.value.data]} {vals[1]})"
    elif isinstance(op, arith.SelectOp):
        text = f"({vals[0]} ? {vals[1]} : {vals[2]})"
    elif isinstance(op, arith.SIToFPOp):
        text = f"((float){vals[0]})"
    else:
        raise Unsupported(f"`{op.name}`")
    ty = op.results[0].type
    ctype = ("float" if not isinstance(ty, IntegerType) else
             "bool" if ty.width.data == 1 else "i32")
    em.bind(op, text, ctype)


def block_index(em: KernelEmitter, op: BlockIdOp | NumBlocksOp) -> None:
    reg = "blockIdx" if isinstance(op, BlockIdOp) else "gridDim"
    em.bind(op, f"(i32){reg}.{_DIM[op.dim.value.data]}")


def sm_count(em: KernelEmitter, op: SmCountOp) -> None:
    raise Unsupported("reading `lm.sm_count()` in device code (it is a launch-time fact for "
                      "`lm.grid`)")


def tensor_dim(em: KernelEmitter, op: DimOp) -> None:
    em.bind(op, f"(i32){em.val(op.tensor)}.shape[{op.index.value.data}]")


def stage_addr(em: KernelEmitter, op: StageOp) -> None:
    """`view[s]`: the stage's shared address (view base + s × stage bytes)."""
    view = op.view.owner
    assert isinstance(view, ViewOp)
    stage_bytes = em.attr_int(view, "cake.stage_bytes")
    idx = em.val(op.index)
    base = em.views[view]
    em.values[op.result] = (base if idx == "0" else
                            f"({base} + (u32){_paren(idx)} * {stage_bytes}u)")


def for_loop(em: KernelEmitter, op: ForOp) -> None:
    em.source_comment(op)
    lb, ub, step = (em.val(v) for v in (op.lb, op.ub, op.step))
    deferred = _deferrable_commits(em, op)
    store = _deferrable_store(em, op)
    arg = op.body.block.args[0]
    with em.names.scope():
        iv = em.names.fresh(arg.name_hint or "i")
        em.values[arg] = iv
        inc = f"++{iv}" if step == "1" else f"{iv} += {_unparen(step)}"
        with em.block(f"for (i32 {iv} = {_unparen(lb)}; {iv} < {_unparen(ub)}; {inc})"):
            em.ops(op.body.block)
    role = em.role
    for commit in deferred:  # nothing stays held once the loop is done
        em.release_held(commit, role.held.pop(commit), reset=False)  # type: ignore[union-attr]
    if store is not None:  # the last tile's parts
        em.line(f"while ({store.parts}) {store.store_part()}")
        role.deferred_store = None  # type: ignore[union-attr]


def if_op(em: KernelEmitter, op: IfOp) -> None:
    if guarded_mmas(em, op):
        _if_guarding_mmas(em, op)
        return
    em.source_comment(op)
    em.line(f"if ({_unparen(em.val(op.cond))}) {{")
    for i, region in enumerate((op.then_region, op.else_region)):
        if i == 1:
            if region.block.ops.first is None:
                break
            em.line("} else {")
        em.depth += 1
        with em.names.scope():
            em.ops(region.block)
        em.depth -= 1
    em.line("}")


def guarded_mmas(em: KernelEmitter, op: IfOp) -> list[MmaOp]:
    """The wgmmas of an else-less `if` on sm_90a that are issued under the condition as a
    predicate rather than branched around: a branch would make the compiler copy the
    accumulator registers at the join, and ptxas 13.0 then serialises every wgmma of the
    kernel (C7514) (test/distilled/wgmma_in_branch.test). Each still commits its group,
    empty where the condition fails, so wait_group counts stay static."""
    if em.target != "sm_90a" or op.else_region.block.ops.first is not None:
        return []
    body = list(op.then_region.block.ops)
    if any(isinstance(o, (ForOp, IfOp)) for o in body):
        return []
    return [o for o in body if isinstance(o, MmaOp)]


def _if_guarding_mmas(em: KernelEmitter, op: IfOp) -> None:
    """Pure scalar code unconditionally, other effects under `if`, wgmmas predicated."""
    cond = _unparen(em.val(op.cond))
    em.source_comment(op)
    pending: list[Operation] = []

    def flush() -> None:
        if pending:
            with em.block(f"if ({cond})"), em.names.scope():
                for o in pending:
                    em.lower(o)
            pending.clear()

    for o in op.then_region.block.ops:
        if isinstance(o, MmaOp):
            flush()
            em.mma_guard = cond
            em.lower(o)
            em.mma_guard = None
        elif o.dialect_name() == "arith":
            em.lower(o)
        else:
            pending.append(o)
    flush()


# ---- sm_90a lowerings ---------------------------------------------------------------------------


def wait_sm90(em: KernelEmitter, op: WaitOp) -> None:
    """try_wait.parity spin on barrier[stage] with the role's phase bit, then flip the bit."""
    role = em.role
    assert role is not None
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    s = em.val(op.stage)
    for commit, held in role.held.items():
        # Never block while holding a release that the awaited phase may depend on.
        with em.block(f"if ({held} == (u32){_paren(s)})"):
            em.release_held(commit, held, reset=True)
    bits = role.phase[b]
    if b.count.value.data == 1:
        em.line(f"cake_mbar_wait({em.barriers[b]}, (u32){bits} & 1u);")
        em.line(f"{bits} ^= 1u;")
        return
    one = "1ull" if b.count.value.data > 32 else "1u"
    em.line(f"cake_mbar_wait({em.bar_addr(b, s)}, (u32)({bits} >> {_paren(s)}) & 1u);")
    em.line(f"{bits} ^= {one} << {_paren(s)};")


def tma_load_sm90(em: KernelEmitter, op: TmaLoadOp) -> None:
    """One elected thread: arrive.expect_tx with the copy's derived bytes (a TMA load is one
    arrival of its barrier), then one copy per box (one per swizzle atom)."""
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    bar = em.bar_addr(b, em.val(op.stage))
    lines = [f"cake_mbar_arrive_expect_tx({bar}, {em.attr_int(op, 'cake.tx_bytes')}u);",
             *_tma_copies(em, op, bar)]
    if em.role is not None and not em.role.single_thread:
        with em.block("if (cake_leader)"):
            for text in lines:
                em.line(text)
    else:
        for text in lines:
            em.line(text)


def _tma_copies(em: KernelEmitter, op: TmaLoadOp, bar: str) -> list[str]:
    view = op.view.owner
    assert isinstance(view, ViewOp)
    rank = len(op.coords)
    if not 1 <= rank <= 5:
        raise Unsupported(f"a rank-{rank} TMA load")
    dims = view.result.type.dims()
    tile = (1,) * (rank - len(dims)) + dims
    copies, step = em.attr_int(op, "cake.copies"), em.attr_int(op, "cake.copy_step")
    atom_bytes = em.attr_int(view, "cake.atom_bytes")
    dst = em.views[view]
    s = em.val(op.stage)
    if s != "0":
        dst = f"{dst} + (u32){_paren(s)} * {em.attr_int(view, 'cake.stage_bytes')}u"
    # Element coordinates: tile coordinate × tile extent (derive-tma's rule), innermost first.
    coords = [_scaled(em.val(c), extent) for c, extent in zip(op.coords, tile)][::-1]
    tmap = em.tmap_param(op)
    out = []
    for j in range(copies):
        cs = ", ".join([_plus(coords[0], j * step), *coords[1:]])
        d = dst if j == 0 else f"{dst} + {j * atom_bytes}u"
        out.append(f"cake_tma_load_{rank}d({d}, &{tmap}, {bar}, {cs});")
    return out


def arrive_sm90(em: KernelEmitter, op: ArriveOp) -> None:
    em.source_comment(op)
    b = em.barrier_of(op.barrier)
    em.release(b, em.bar_addr(b, em.val(op.stage)), per_warpgroup=False)


def commit_sm90(em: KernelEmitter, op: CommitOp) -> None:
    """Arrive once the role's wgmma groups have read their operands: wait_group 0, then the
    arrivals. In a ring loop (see _deferrable_commits) keep the newest group in flight and
    release the stage before it instead."""
    role = em.role
    assert role is not None
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    s = em.val(op.stage)
    if not role.accs:  # this role issues no MMA: nothing to wait for
        em.release(b, em.bar_addr(b, s), per_warpgroup=not role.single_thread)
        return
    held = role.held.get(op)
    if held is None:
        em.line("cake_wgmma_wait<0>();")
        em.release(b, em.bar_addr(b, s), per_warpgroup=True)
        return
    em.line("cake_wgmma_wait<1>();  // every group but the newest has read its stage")
    with em.block(f"if ({held} != ~0u)"):
        em.release(b, em.bar_addr(b, held), per_warpgroup=True)
    em.line(f"{held} = (u32){_paren(s)};")


def fence_proxy(em: KernelEmitter, op: FenceProxyOp) -> None:
    em.source_comment(op)
    em.line("cake_fence_proxy_async();")


def mma_sm90(em: KernelEmitter, op: MmaOp) -> None:
    """wgmma, per warpgroup of the role: fence, then for each 64-row block of its rows the
    K/16 m64nNk16 instructions, then commit_group. A descriptor is the derived bits + the
    stage address + derive-descriptors' row-block and K-step offsets."""
    role = em.role
    assert role is not None
    acc = role.accs.get(op.acc)
    if acc is None:
        raise Unsupported("an MMA whose accumulator is not a register tile of its role")
    instr = em.mma_instr(op)
    form = re.fullmatch(r"wgmma\.m64n(\d+)k16\.f32\.(bf16|f16)\.\2", instr)
    if form is None or int(form.group(1)) not in (64, 128, 192, 256):
        raise Unsupported(f"the MMA form `{instr}`")
    for v in (op.a, op.b):
        stage = v.owner
        if isinstance(stage, StageOp) and em.attr_str(stage.view.owner, "cake.swizzle") == "none":
            raise Unsupported("a wgmma operand without swizzle")
    a_desc, b_desc = em.attr_u64(op, "cake.a_desc"), em.attr_u64(op, "cake.b_desc")
    a_k, b_k = em.attr_ints(op, "cake.a_koffsets"), em.attr_ints(op, "cake.b_koffsets")
    a_m = em.attr_ints(op, "cake.a_moffsets")
    if not em.ok:
        return
    n, ty = form.group(1), form.group(2)
    wg_step = _progression(a_m, acc.frags) if role.warpgroups > 1 else 0
    em.source_comment(op)
    init = em.val(op.init)
    first_scale = {"true": "0u", "false": "1u"}.get(init, f"(u32)!{_paren(init)}")
    guard = em.mma_guard  # set by if_op: a predicated wgmma instead of a branch around it
    call, tail = (f"cake_wgmma_m64n{n}k16_{ty}", "") if guard is None else (
        f"cake_wgmma_m64n{n}k16_{ty}_if", f", (u32){_paren(guard)}")
    with em.block():
        # Warpgroup wg owns row blocks [wg * frags, wg * frags + frags) of A.
        a_base = _unparen(em.val(op.a)) + (f" + cake_wg * {wg_step}u" if wg_step else "")
        em.line(f"const u32 cake_a = {_unparen(a_base)};")
        em.line(f"const u32 cake_b = {_unparen(em.val(op.b))};")
        # wgmma is .sync.aligned: a warp that diverged in earlier code (a bounds-checked
        # store, a lane-0 arrival) must reconverge first, or the GPU faults with an illegal
        # instruction (test/distilled/wgmma_after_divergence.test).
        em.line("__syncwarp();")
        em.line("cake_wgmma_fence();")
        for f in range(acc.frags):
            for k, (ak, bk) in enumerate(zip(a_k, b_k)):
                em.line(f"{call}({acc.var}[{f}], "
                        f"{_desc(a_desc, 'cake_a', a_m[f] + ak)}, {_desc(b_desc, 'cake_b', bk)}, "
                        f"{first_scale if k == 0 else '1u'}{tail});")
        em.line("cake_wgmma_commit();")
        store = role.deferred_store
        if store is not None:  # the previous tile's stores run under this group
            em.line(f"if ({store.parts}) {store.store_part()}")


def convert(em: KernelEmitter, op: ConvertOp) -> None:
    """`tile.to(dtype)` emits nothing itself: the store that consumes it converts."""
    if not all(isinstance(u.operation, TmaStoreOp) for u in op.result.uses):
        raise Unsupported("using a converted tile other than in `tma_store`")


def tma_store_sm90(em: KernelEmitter, op: TmaStoreOp) -> None:
    """Register accumulator → global memory, converted and bounds-checked against the
    tensor's shape (so tiles may hang over any edge): retire every wgmma group, then each
    warpgroup stores its rows straight from its fragments."""
    role = em.role
    assert role is not None
    value, dtype = op.value, dtype_name(op.value.type.element_type)
    if isinstance(value.owner, ConvertOp):
        value = value.owner.source
    acc = role.accs.get(value)
    rank = len(op.tensor.type.dims())  # type: ignore[attr-defined]
    if acc is None:
        raise Unsupported("`tma_store` of a value other than its role's register accumulator")
    if rank != 2 or dtype not in _OUT:
        raise Unsupported(f"`tma_store` of {dtype} into a rank-{rank} tensor")
    tile_m, tile_n = op.value.type.dims()  # type: ignore[attr-defined]
    em.source_comment(op)
    for commit, held in role.held.items():
        em.release_held(commit, held, reset=True)
    em.line("cake_wgmma_wait<0>();")
    with em.block():
        row = _scaled(em.val(op.coords[0]), tile_m)
        if role.warpgroups > 1:
            row = f"{row} + (i32)cake_wg * {acc.rows_per_wg}"
        em.line(f"const i32 cake_row = {row};")
        em.line(f"const i32 cake_col = {_scaled(em.val(op.coords[1]), tile_n)};")
        store = role.deferred_store
        if store is not None and store.op is op:
            _defer_store(em, store, acc)
            return
        for f in range(acc.frags):
            r = "cake_row" if f == 0 else f"cake_row + {64 * f}"
            em.line(f"cake_fence_regs({acc.var}[{f}]);")
            em.line(f"cake_store_wgmma_tile<{acc.n}, {_OUT[dtype]}>({acc.var}[{f}], "
                    f"{em.val(op.tensor)}, {r}, cake_col);")


def _defer_store(em: KernelEmitter, store: _DeferredStore, acc: _Acc) -> None:
    """Finish the previous tile's parts, then pack a whole tile for later (tails and
    unaligned rows are stored now, element by element)."""
    em.line(f"cake_fence_regs({acc.var}[0]);")
    em.line(f"while ({store.parts}) {store.store_part()}")
    args = f"<{store.n}, {store.trait}>"
    with em.block(f"if (cake_whole_tile{args}({store.tensor}, cake_row, cake_col))"):
        em.line(f"cake_pack_wgmma_tile{args}({acc.var}[0], {store.out});")
        em.line(f"{store.row} = cake_row;")
        em.line(f"{store.col} = cake_col;")
        em.line(f"{store.parts} = {STORE_PARTS}u;")
    em.lines[-1] = em.lines[-1].replace("}", "} else {")
    em.line(f"  cake_store_wgmma_tile{args}({acc.var}[0], {store.tensor}, cake_row, cake_col);")
    em.line("}")


def _deferrable_store(em: KernelEmitter, loop: ForOp) -> _DeferredStore | None:
    """A loop whose body ends with the store of its role's accumulator, converted to a
    16-bit type (a persistent tile loop's epilogue), stores each whole tile during the next
    iteration's wgmma groups. Declares the packed tile and its bookkeeping before the loop."""
    role = em.role
    last = loop.body.block.ops.last
    if role is None or not isinstance(last, TmaStoreOp) or role.deferred_store is not None:
        return None
    convert_op = last.value.owner
    dtype = dtype_name(last.value.type.element_type)  # type: ignore[attr-defined]
    if not isinstance(convert_op, ConvertOp) or dtype not in ("bf16", "f16"):
        return None
    acc = role.accs.get(convert_op.source)
    if acc is None or acc.frags != 1 or len(last.tensor.type.dims()) != 2:  # type: ignore[attr-defined]
        return None
    name = em.names.fresh(f"{em.tensor_name(last.tensor)}_tile")
    store = _DeferredStore(last, name, f"{name}_row", f"{name}_col", f"{name}_parts",
                           acc.n, _OUT[dtype], em.val(last.tensor))
    em.line(f"u32 {name}[{acc.n // 4}];  // the previous tile of `{store.tensor}`, packed; "
            f"{STORE_PARTS} parts go out under the next wgmma groups")
    em.line(f"i32 {store.row} = 0, {store.col} = 0;")
    em.line(f"u32 {store.parts} = 0;  // parts still to store")
    role.deferred_store = store
    return store


# ---- deferred commits (one wgmma group in flight) -------------------------------------------


def _deferrable_commits(em: KernelEmitter, loop: ForOp) -> list[CommitOp]:
    """A ring loop `wait(full, stage=s) … mma … commit(empty, stage=s)` (one wait, one
    commit last, full/empty the two directions between the same roles, at least
    MIN_RING_FOR_IN_FLIGHT elements) may
    release stage s one iteration late, keeping the newest wgmma group in flight: the
    producer refills other stages meanwhile, and a wait on the held stage itself releases it
    first (wait_sm90), so no wait ever blocks on a release it holds. Anything else keeps
    wait_group 0 + arrive. Declares the held-stage register before the loop."""
    role = em.role
    if role is None or not role.accs:
        return []
    body = list(loop.body.block.ops)
    commits = [op for op in body if isinstance(op, CommitOp)]
    waits = [op for op in body if isinstance(op, WaitOp)]
    if (len(commits) != 1 or len(waits) != 1 or body[-1] is not commits[0]
            or not any(isinstance(op, MmaOp) for op in body)
            or any(isinstance(op, (ForOp, IfOp, ArriveOp, TmaStoreOp)) for op in body)):
        return []
    commit, wait = commits[0], waits[0]
    full, empty = wait.barrier.owner, commit.barrier.owner
    if not (isinstance(full, BarrierOp) and isinstance(empty, BarrierOp)):
        return []
    if not (full.count.value.data == empty.count.value.data >= MIN_RING_FOR_IN_FLIGHT
            and wait.stage is commit.stage
            and list(full.cons) == list(empty.prod) and list(full.prod) == list(empty.cons)):
        return []
    held = em.names.fresh(f"{empty.sym_name.data}_held")
    em.line(f"u32 {held} = ~0u;  // stage of `{empty.sym_name.data}` released after the "
            "newest wgmma group (~0u: none)")
    role.held[commit] = held
    return [commit]


# ---- the lowering table ------------------------------------------------------------------------


_COMMON: dict[type[Operation], Lowering] = {
    **{t: scalar for t in (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp,
                           arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp, arith.MinSIOp,
                           arith.MaxSIOp, arith.CmpiOp, arith.SelectOp, arith.AndIOp,
                           arith.OrIOp, arith.XOrIOp, arith.AddfOp, arith.SubfOp, arith.MulfOp,
                           arith.DivfOp, arith.SIToFPOp)},
    BlockIdOp: block_index, NumBlocksOp: block_index, SmCountOp: sm_count, DimOp: tensor_dim,
    StageOp: stage_addr, ForOp: for_loop, IfOp: if_op,
}

#: target → emitter support headers (targets/*.cuh) appended after the prelude, in order.
SUPPORT_HEADERS: dict[str, tuple[str, ...]] = {"sm_90a": ("cuda_emit_sm90.cuh",)}
#: target → (code at kernel entry, after barrier init; code at kernel exit), e.g. TMEM.
KERNEL_HOOKS: dict[str, tuple[Callable[["KernelEmitter"], None],
                              Callable[["KernelEmitter"], None]]] = {}

#: target → declares, in a role's prologue, the `lm.regs` tiles its tile ops keep across the
#: role's code (a running `lm.argmin`), in the target's tile layout (cuda_emit_tiles*.py).
TILE_DECLARATIONS: dict[str, Callable[["KernelEmitter", _Role, list[Operation]], None]] = {}

#: target → op type → lowering; other targets register theirs (cuda_emit_sm100/sm80.py).
LOWERINGS: dict[str, dict[type[Operation], Lowering]] = {
    "sm_90a": _COMMON | {
        WaitOp: wait_sm90, TmaLoadOp: tma_load_sm90, ArriveOp: arrive_sm90,
        CommitOp: commit_sm90, FenceProxyOp: fence_proxy, MmaOp: mma_sm90,
        ConvertOp: convert, TmaStoreOp: tma_store_sm90,
    },
}


# ---- helpers -----------------------------------------------------------------------------------


def _role_of(op: Operation) -> RoleOp | None:
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
    for on in (op for op in kernel.body.block.ops if isinstance(op, OnRoleOp)):
        for op in on.body.block.walk():
            work.extend(o for o in op.operands if isinstance(o.owner, Operation)
                        and o.owner.parent_block() is kernel.body.block)
    while work:
        v = work.pop()
        if v not in needed:
            needed.add(v)
            if isinstance(v.owner, Operation):
                work.extend(o for o in v.owner.operands if isinstance(o.owner, Operation))
    return needed


def _default_regs(block_threads: int) -> int:
    """Registers per thread the launch gives (__launch_bounds__(threads, 1)): the 65536 of
    the register file split evenly, in setmaxnreg's units of 8."""
    return min(65536 // block_threads // 8 * 8, 256) if block_threads else 0


def _warp_test(warps: list[int]) -> str:
    lo, hi = warps[0], warps[-1]
    if warps != list(range(lo, hi + 1)):
        return " || ".join(f"cake_warp == {w}u" for w in warps)
    return f"cake_warp < {hi + 1}u" if lo == 0 else f"cake_warp >= {lo}u && cake_warp < {hi + 1}u"


def _progression(offsets: list[int], frags: int) -> int:
    """Bytes from one warpgroup's first A row block to the next one's (derive-descriptors
    lays 64-row blocks out evenly; anything else is not lowered)."""
    step = offsets[1] - offsets[0] if len(offsets) > 1 else 0
    if any(b - a != step for a, b in zip(offsets, offsets[1:])):
        raise Unsupported("A-operand row blocks that are not evenly spaced")
    return step * frags


def _desc(bits: int, addr: str, offset: int) -> str:
    """A wgmma descriptor: the derived bits (start address 0) + the operand address >> 4."""
    a = f"{addr} + {offset}u" if offset else addr
    return f"0x{bits:016x}ull + ((({a}) & {_SMEM_WINDOW_MASK}) >> 4)"


def _literal(attr: object) -> str:
    if isinstance(attr, IntegerAttr):
        v = attr.value.data
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return "true" if v else "false"
        return str(v)
    if isinstance(attr, FloatAttr):
        return f"{float(attr.value.data)!r}f"
    raise Unsupported(f"the constant {attr}")


def _scaled(expr: str, factor: int) -> str:
    if factor == 1:
        return expr
    if expr.lstrip("-").isdigit():
        return str(int(expr) * factor)
    return f"{_paren(expr)} * {factor}"


def _plus(expr: str, offset: int) -> str:
    if offset == 0:
        return expr
    if expr.lstrip("-").isdigit():
        return str(int(expr) + offset)
    return f"{expr} + {offset}"


def _paren(expr: str) -> str:
    """`expr`, parenthesised unless it is a name, a literal or already one group."""
    if re.fullmatch(r"[\w.]+", expr) or (expr.startswith("(") and expr.endswith(")")
                                          and _balanced(expr[1:-1])):
        return expr
    return f"({expr})"


def _unparen(expr: str) -> str:
    if expr.startswith("(") and expr.endswith(")") and _balanced(expr[1:-1]):
        return expr[1:-1]
    return expr


def _balanced(expr: str) -> bool:
    depth = 0
    for c in expr:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _surface(op: Operation) -> str:
    names = {WaitOp: "lm.wait", ArriveOp: "lm.arrive", CommitOp: "lm.commit", MmaOp: "lm.mma",
             TmaLoadOp: "tma_load", TmaStoreOp: "tma_store", FenceProxyOp: "lm.fence_proxy",
             ConvertOp: ".to(dtype)"}
    return names.get(type(op), op.name)


def _prelude() -> str:
    from cakec.targets.nvrtc import prelude_source

    return prelude_source()


def _support(target: str) -> str:
    """The target's emitter support headers (integer helpers, epilogue stores, ...)."""
    return "\n".join(Path(__file__).with_name(h).read_text()
                     for h in SUPPORT_HEADERS.get(target, ()))


# Other targets' lowerings register themselves into the tables above.
from cakec.targets import cuda_emit_sm80, cuda_emit_sm100  # noqa: E402
cuda_emit_sm80.register()
cuda_emit_sm100.register()
from cakec.targets import cuda_emit_tiles, cuda_emit_tiles_sm100  # noqa: E402
cuda_emit_tiles.register(LOWERINGS, SUPPORT_HEADERS)
TILE_DECLARATIONS["sm_90a"] = cuda_emit_tiles.declare_tiles
cuda_emit_tiles_sm100.register(LOWERINGS, SUPPORT_HEADERS, TILE_DECLARATIONS)
