"""derive-smem: where every SMEM view lives and how it is swizzled.

Each pool is placed in dynamic shared memory at an offset aligned to 1024 B (the first at
0) and a view's stage s sits at `base + offset + s * stage_bytes`. (Tile stores go from
registers straight to global memory, so no compiler scratch follows the pools.) A view's swizzle is the author's tag, or for
`auto` the widest mode its consumers (TMA loads, MMAs) can use at the declared offset.
Layouts that cannot work are CAKE-S050..S054 errors at the view's declaration. A view that
shares bytes by `reuses=`, and the view it reuses, also get `cake.reuses` (the view whose
bytes it takes) and `cake.live_lines` (the first and last source lines that access it), which
`cakec inspect` shows beside the offsets; verify-safety proves the ranges apart (CAKE-S061).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from cakec.diagnostics import DiagnosticSink, Note
from cakec.dialects.cake import (
    ASYNC_LOADS, KernelOp, MmaOp, RoleOp, SmemOp, StageOp, TransposeOp, ViewOp, ViewType,
    dtype_bytes,
)
from cakec.passes.base import requested_target, sink_of, span_of
from cakec.passes.derive_common import (
    kernels, line_of, ops_of, set_int, set_ints, set_str, sym, warps_of,
)
from cakec.targets.sku import SKUS, SWIZZLE_SMEM_ALIGN, SWIZZLE_SPAN, WARP_SIZE

#: Pools start on this boundary: the strictest swizzle alignment (128B).
POOL_ALIGN = 1024
#: Widest first: a wider swizzle spreads a row over more banks.
SPANS = ("128b", "64b", "32b")
#: Alignment of a view no swizzle constrains: 16 B for vector and no-swizzle MMA access.
PLAIN_ALIGN = 16


def align_up(value: int, align: int) -> int:
    return -(-value // align) * align


@dataclass(frozen=True)
class ViewGeometry:
    """What a view's layout depends on, in bytes."""

    name: str
    offset: int  # within its pool
    stages: int
    stage_bytes: int
    inner_bytes: int  # one row: the innermost dimension
    rows: int  # product of the outer dimensions

    def aligned(self, align: int, span: int) -> bool:
        """Whether every stage start and every swizzle-atom column block is aligned."""
        atoms = self.inner_bytes // span if span else 1
        return (self.offset % align == 0
                and (self.stages == 1 or self.stage_bytes % align == 0)
                and (atoms == 1 or self.rows * span % align == 0))


@dataclass(frozen=True)
class Layout:
    swizzle: str
    align: int
    atoms: int
    reason: str


@dataclass(frozen=True)
class DeriveSmem(ModulePass):
    """Annotates kernels (`cake.target`, `cake.block_threads`, `cake.dynamic_smem`), pools
    (`cake.base`), views (`cake.offset`, `cake.swizzle`, `cake.swizzle_reason`, `cake.align`,
    `cake.stage_bytes`, `cake.atoms`, `cake.atom_bytes`)."""

    name = "derive-smem"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = sink_of(ctx)
        for kernel in kernels(op):
            target = requested_target(kernel, ctx, self.target)
            if target not in SKUS:
                sink.error("CAKE-T009", f"unknown target `{target}`", span_of(kernel, ctx),
                           help="known targets: " + ", ".join(SKUS))
                continue
            set_str(kernel, "cake.target", target)
            set_int(kernel, "cake.block_threads", _block_threads(kernel))
            _SmemLayout(kernel, ctx, sink).run()


def _block_threads(kernel: KernelOp) -> int:
    warps = [w for role in ops_of(kernel, RoleOp) for w in warps_of(role)]
    return WARP_SIZE * (max(warps, default=0) + 1)


class _SmemLayout:
    def __init__(self, kernel: KernelOp, ctx: Context, sink: DiagnosticSink):
        self.kernel, self.ctx, self.sink = kernel, ctx, sink

    def run(self) -> None:
        end = 0
        bases: dict[SmemOp, int] = {}
        for pool in ops_of(self.kernel, SmemOp):
            bases[pool] = align_up(end, POOL_ALIGN)
            set_int(pool, "cake.base", bases[pool])
            end = bases[pool] + pool.bytes.value.data
        aligns = [16]
        for view in ops_of(self.kernel, ViewOp):
            pool = view.pool.owner
            if isinstance(pool, SmemOp):
                aligns.append(self._view(view, pool, bases[pool]))
        set_int(self.kernel, "cake.dynamic_smem", end)
        # The launch guarantees a 16-B aligned dynamic base; the prologue rounds it up to the
        # strictest view alignment, so the launch asks for that much more.
        set_int(self.kernel, "cake.smem_align_slack", max(aligns) - 16 if end else 0)

    def _view(self, view: ViewOp, pool: SmemOp, base: int) -> int:
        """Place `view`; returns its alignment (16 when it could not be placed)."""
        vt: ViewType = view.result.type
        dims = vt.dims()
        elem = dtype_bytes(vt.element_type)
        geo = ViewGeometry(sym(view), view.offset.value.data, vt.stages.data, vt.num_bytes(),
                           dims[-1] * elem, vt.num_elements() // dims[-1])
        fits = self._check_bounds(view, pool, geo)
        layout = self._layout(view, geo, vt.swizzle.data)
        if layout is None or not fits:
            return 16
        span = SWIZZLE_SPAN[layout.swizzle]
        set_int(view, "cake.offset", base + geo.offset)
        set_str(view, "cake.swizzle", layout.swizzle)
        set_str(view, "cake.swizzle_reason", layout.reason)
        set_int(view, "cake.align", layout.align)
        set_int(view, "cake.stage_bytes", geo.stage_bytes)
        set_int(view, "cake.atoms", layout.atoms)
        set_int(view, "cake.atom_bytes", geo.rows * span if span else geo.stage_bytes)
        _live_range(view)
        return layout.align

    def _check_bounds(self, view: ViewOp, pool: SmemOp, geo: ViewGeometry) -> bool:
        end = geo.offset + geo.stages * geo.stage_bytes
        size = pool.bytes.value.data
        if end <= size:
            return True
        stages = f"{geo.stages} stages" if geo.stages > 1 else "1 stage"
        self.sink.error(
            "CAKE-S050",
            f"view `{geo.name}` does not fit in pool `{sym(pool)}`: {stages} of "
            f"{geo.stage_bytes} B from offset {geo.offset} end at byte {end}, but the pool "
            f"has {size} B",
            span_of(view, self.ctx),
            notes=[Note(span_of(pool, self.ctx), f"`{sym(pool)}` is declared here with "
                        f"{size} bytes")],
            help=f"enlarge the pool to at least {end} bytes, or move or shrink the view")
        return False

    # ---- swizzle --------------------------------------------------------------------------

    def _layout(self, view: ViewOp, geo: ViewGeometry, tag: str) -> Layout | None:
        tma, mma = _consumers(view)
        users = _describe(tma, mma)
        if tag == "auto":
            return self._auto(view, geo, tma, users)
        if tag != "none" and geo.inner_bytes % SWIZZLE_SPAN[tag]:
            self._span_error(view, geo, tag)
            return None
        align = SWIZZLE_SMEM_ALIGN[tag] if tag != "none" else _plain_align(tma)
        layout = Layout(tag, align, _atoms(geo, tag), f"written as swizzle={tag}")
        return layout if self._check_alignment(view, geo, layout) else None

    def _auto(self, view: ViewOp, geo: ViewGeometry, tma: list[Operation],
              users: str) -> Layout | None:
        if not users:
            layout = Layout("none", PLAIN_ALIGN, 1, "auto: none; no TMA load or MMA uses it")
            return layout if self._check_alignment(view, geo, layout) else None
        fitting = [s for s in SPANS if geo.inner_bytes % SWIZZLE_SPAN[s] == 0]
        for tag in fitting:
            align = SWIZZLE_SMEM_ALIGN[tag]
            if geo.aligned(align, SWIZZLE_SPAN[tag]):
                widest = fitting[0]
                why = (f"the widest swizzle dividing its {geo.inner_bytes}-B rows"
                       if tag == widest else f"{widest} would need {_misfit(geo, widest)}")
                return Layout(tag, align, _atoms(geo, tag), f"auto: {tag} for {users}; {why}")
        why = (f"{fitting[-1]} would need {_misfit(geo, fitting[-1])}" if fitting else
               f"no swizzle span (32, 64 or 128 B) divides its {geo.inner_bytes}-B rows")
        layout = Layout("none", _plain_align(tma), 1, f"auto: none for {users}; {why}")
        return layout if self._check_alignment(view, geo, layout) else None

    def _span_error(self, view: ViewOp, geo: ViewGeometry, tag: str) -> None:
        options = [s for s in SPANS if geo.inner_bytes % SWIZZLE_SPAN[s] == 0]
        self.sink.error(
            "CAKE-S053",
            f"swizzle {tag} does not fit view `{geo.name}`: its rows are {geo.inner_bytes} B, "
            f"not a multiple of the {SWIZZLE_SPAN[tag]}-byte swizzle span",
            span_of(view, self.ctx),
            help=(f"use swizzle={options[0]}" if options else "use swizzle=None")
            + ", or omit `swizzle=` to let the compiler choose")

    def _check_alignment(self, view: ViewOp, geo: ViewGeometry, layout: Layout) -> bool:
        align, swz = layout.align, layout.swizzle
        needs = (f"its {swz} swizzle" if swz != "none" else
                 "a TMA destination" if layout.align > PLAIN_ALIGN else "vector access")
        span = span_of(view, self.ctx)
        if geo.offset % align:
            self.sink.error(
                "CAKE-S051",
                f"view `{geo.name}` at offset {geo.offset} is not aligned for {needs}, which "
                f"needs a multiple of {align} bytes", span,
                help=f"move the view to offset {align_up(geo.offset, align)}"
                + (" or use a narrower swizzle" if swz not in ("none", "32b") else ""))
            return False
        if geo.stages > 1 and geo.stage_bytes % align:
            self.sink.error(
                "CAKE-S052",
                f"the stages of view `{geo.name}` are {geo.stage_bytes} B apart, not a "
                f"multiple of the {align} bytes {needs} needs", span,
                help=f"make one stage a multiple of {align} bytes"
                + (" or use a narrower swizzle" if swz not in ("none", "32b") else ""))
            return False
        if layout.atoms > 1 and geo.rows * SWIZZLE_SPAN[swz] % align:
            self.sink.error(
                "CAKE-S054",
                f"view `{geo.name}` is stored as {layout.atoms} column blocks of {geo.rows} "
                f"rows × {SWIZZLE_SPAN[swz]} B, which are not {align}-byte aligned", span,
                help="use a multiple of 8 rows, or a swizzle as wide as the rows")
            return False
        return True


def _live_range(view: ViewOp) -> None:
    """`cake.reuses` and `cake.live_lines` of a view that takes or gives bytes by `reuses=`."""
    if view.reuses is not None and isinstance(view.reuses.owner, ViewOp):
        set_str(view, "cake.reuses", sym(view.reuses.owner))
    elif not any(isinstance(u.operation, ViewOp) for u in view.result.uses):
        return
    lines = [line for op in _accesses(view) if (line := line_of(op))]
    if lines:
        set_ints(view, "cake.live_lines", [min(lines), max(lines)])


def _accesses(view: ViewOp) -> list[Operation]:
    """The ops that read or write `view`'s bytes through it: loads into it, and the users of
    its stages (and of their transposes)."""
    out: list[Operation] = []
    for use in view.result.uses:
        user = use.operation
        if isinstance(user, StageOp):
            users = [u.operation for u in user.result.uses]
            out += [u for u in users if not isinstance(u, TransposeOp)]
            out += [u.operation for t in users if isinstance(t, TransposeOp)
                    for u in t.result.uses]
        elif not isinstance(user, ViewOp):
            out.append(user)
    return out


def _consumers(view: ViewOp) -> tuple[list[Operation], list[Operation]]:
    """TMA loads that write the view and MMAs that read one of its stages."""
    tma: list[Operation] = []
    mma: list[Operation] = []
    for use in view.result.uses:
        user = use.operation
        if isinstance(user, ASYNC_LOADS):
            tma.append(user)
        elif isinstance(user, StageOp):
            readers = [u.operation for u in user.result.uses]
            readers += [u.operation for r in readers if isinstance(r, TransposeOp)
                        for u in r.result.uses]
            mma.extend(r for r in readers if isinstance(r, MmaOp))
    return tma, mma


def _describe(tma: list[Operation], mma: list[Operation]) -> str:
    """`the TMA load at line 19 and the MMA at line 25` (the first of each kind)."""
    parts = []
    for what, ops in (("TMA load", tma), ("MMA", mma)):
        if ops:
            line = line_of(ops[0])
            parts.append(f"the {what} at line {line}" if line else f"a {what}")
    return " and ".join(parts)


def _misfit(geo: ViewGeometry, tag: str) -> str:
    """What keeps `tag` from fitting the view, for the swizzle reason."""
    align = SWIZZLE_SMEM_ALIGN[tag]
    if geo.offset % align:
        return f"an offset aligned to {align} B, not {geo.offset}"
    if geo.stages > 1 and geo.stage_bytes % align:
        return f"stages a multiple of {align} B, not {geo.stage_bytes} B"
    return f"column blocks of a multiple of 8 rows, not {geo.rows}"


def _plain_align(tma: list[Operation]) -> int:
    return SWIZZLE_SMEM_ALIGN["none"] if tma else PLAIN_ALIGN


def _atoms(geo: ViewGeometry, tag: str) -> int:
    span = SWIZZLE_SPAN[tag]
    return geo.inner_bytes // span if span else 1
