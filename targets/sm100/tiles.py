"""sm_100a / sm_103a lowering of register-tile values: vector loads and stores, broadcasting
arithmetic, `lm.sum_sq` and `lm.argmin` (device helpers in tiles.cuh beside it), for
roles whose accumulators live in Tensor Memory.

Tiles take the tcgen05.ld 32x32b layout: the role is 4 warps, one per TMEM lane quarter, and
thread (quarter q = warp % 4, lane l) owns row 32 q + l of every 128-row tile. So an (M, 1)
vector is one register per thread, a (1, N) vector N registers (every thread holds every
column; its load is a broadcast), and a TMEM accumulator named in tile arithmetic (the
frontend reads it with a cake.convert) is this thread's row, loaded 32 columns at a time by
the op that consumes the expression. A (1, N) stage in SMEM (`view[s].load()`) is read the
same way, 32 columns at a time next to the TMEM chunk it combines with, rather than copied
whole into every thread's registers. A row never spans threads, so a running argmin needs
no merge across lanes, unlike the wgmma layout of sm_90a (targets/sm90/tiles.py).

Arithmetic emits no code, as on sm_90a: the consumer evaluates the expression per element
through the shared evaluator, targets/emit/tiles.py (one fmaf for `c_sq - 2.0 * acc`). A register accumulator
(mma.sync on Blackwell) has the sm_80 fragment layout, which these tiles do not share: tile
arithmetic on one is reported (CAKE-H100).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ASYNC_LOADS, PURE_TILE_OPS, ArgminOp, ArriveOp, CommitOp, ConvertOp, MmaOp, RegsOp,
    StageLoadOp, SumSqOp, TileAssignOp, TileLoadOp, TileStoreOp, TmaStoreOp, TmemOp,
    tile_leaves,
)
from cakec.passes.derive_common import walk
from cakec.targets.emit import common
from cakec.targets.emit.cexpr import paren, unparen
from cakec.targets.emit.emitter import KernelEmitter, RoleState, role_of
from cakec.targets.emit.tiles import (
    C, CP, Layout, Leaf, declare_regs, evaluate, load_row_vector, load_tile, load_vector, store_tile,
    sum_sq_layout, tile_coords, tile_ctype, tile_dims, tile_heights, tile_role,
)
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sm80 import tiles as sm80
from cakec.targets.sm100.lowering import tma_store_sm100, tmem_addr

#: Rows of a tile: one per thread of the 4-warp role (= TMEM lanes).
_ROWS = 128
#: Columns per tcgen05.ld 32x32b.x32.
_CHUNK = 32
#: This thread's row (its TMEM lane) and the lane-quarter bits of its TMEM addresses.
_ROW = "(i32)(32u * (cake_warp % 4u) + cake_lane_id())"
_QUARTER = "((32u * (cake_warp % 4u)) << 16)"
#: C loop variables of a row's columns: chunk start, column within the chunk.
_C0, _J = "cake_c0", "cake_j"


# ---- layout ---------------------------------------------------------------------------------


def _check_role(em: KernelEmitter, rows: int) -> None:
    """Tiles of `rows` rows in the current role: 4 warps covering the TMEM lane quarters,
    and no register accumulator (whose mma.sync layout these tiles do not share)."""
    role = tile_role(em)
    if any(isinstance(op, MmaOp) and isinstance(op.acc.owner, RegsOp)
           and role_of(op) is role.op for op in walk(em.kernel)):
        raise Unsupported(f"a register tile in role `{role.name}`, which accumulates in "
                          "registers (mma.sync) rather than in TMEM,")
    if sorted(w % 4 for w in role.warps) != [0, 1, 2, 3] or rows != _ROWS:
        raise Unsupported(f"a {rows}-row register tile in role `{role.name}` of warps "
                          f"{role.warps} (tiles of {_ROWS} rows in a role of 4 warps, one per "
                          "TMEM lane quarter, are supported)")


def _tmem_read(v: SSAValue) -> TmemOp | None:
    """The TMEM region a tile reads (`acc.to(lm.f32)`, or an accumulator named in tile
    arithmetic), if it is such a read."""
    convert = v.owner
    region = convert.source.owner if isinstance(convert, ConvertOp) else None
    return region if isinstance(region, TmemOp) else None


def _leaf(chunks: dict[SSAValue, str]) -> Leaf:
    """`evaluate`'s leaf for the element at column cake_c0 + cake_j of this thread's row:
    TMEM reads and SMEM stages from the registers their chunk was loaded into (`chunks`),
    other vectors broadcast."""

    def leaf(em: KernelEmitter, v: SSAValue) -> str:
        if v in chunks:
            return f"__uint_as_float({chunks[v]}[{_J}])"  # f32: tile arithmetic's only type
        owner = v.owner
        if _tmem_read(v) is not None:
            raise Unsupported("reading a TMEM accumulator other than in `lm.argmin`")
        if v not in em.values:
            raise em.undefined(v, f"a tile defined by `{getattr(owner, 'name', 'a block')}` "
                               "in tile arithmetic")
        rows, cols = tile_dims(v)
        if cols == 1:
            return em.values[v]
        if rows == 1:
            return f"{em.values[v]}[{_C0} + {_J}]"
        raise Unsupported(f"a ({rows}, {cols}) tile that is not a TMEM accumulator")

    return leaf


class RowLayout(Layout):
    """Thread (quarter q = warp % 4, lane l) holds row 32 q + l, every column: one row slot,
    N column slots. TMEM reads in an expression are loaded 32 columns at a time inside the
    column loop (tcgen05.ld 32x32b.x32 + wait::ld), next to their use."""

    col_lanes = (1, 2, 4, 8, 16)

    def __init__(self, em: KernelEmitter):
        # Every (M, N) tile and (M, 1) vector of the role is one row per thread: 128 rows (a
        # 64-row tile would be stored over 128, a 256-row one only half).
        for rows in sorted(tile_heights(tile_role(em)) - {1}) or [_ROWS]:
            _check_role(em, rows)
        self.chunks: dict[SSAValue, str] = {}

    def row_warps(self) -> tuple[int, str]:
        """The 4 warps (lane quarters) hold 32 rows each of every column."""
        return 4, "(i32)(cake_warp % 4u)"

    def row_slots(self, rows: int) -> int:
        return 1

    def col_slots(self, cols: int) -> int:
        return cols

    def decl(self, shape: tuple[int, int]) -> str:
        return "" if shape[1] == 1 else f"[{shape[1]}]"

    def ref(self, var: str, shape: tuple[int, int]) -> str:
        return var if shape[1] == 1 else f"{var}[{C}]"

    def row(self) -> str:
        return _ROW

    def col(self) -> str:
        return C

    def leaf(self, em: KernelEmitter, v: SSAValue) -> str | None:
        if v in self.chunks:
            return f"__uint_as_float({self.chunks[v]}[{C} - {_C0}])"
        if _tmem_read(v) is not None:
            raise Unsupported("reading a TMEM accumulator outside the columns of its consumer")
        if isinstance(v.owner, StageLoadOp):
            raise Unsupported("`view[s].load()` consumed other than by an `lm.argmin` in its "
                              "block")
        return None

    @contextmanager
    def row_loop(self, em: KernelEmitter, rows: int) -> Iterator[None]:
        yield

    @contextmanager
    def col_loop(self, em: KernelEmitter, v: SSAValue, step: int = 1) -> Iterator[None]:
        cols = tile_dims(v)[1]
        regions = {leaf: r for leaf in tile_leaves(v) for r in [_tmem_read(leaf)] if r is not None}
        var = CP if step > 1 else C
        if not regions:
            em.line("#pragma unroll")
            with em.block(f"for (int {var} = 0; {var} < {cols}; {var} += {step})"):
                yield
            return
        if cols % _CHUNK:
            raise Unsupported(f"reading {cols} TMEM columns (a multiple of {_CHUNK} is needed)")
        with em.block():
            for i, region in enumerate(regions.values()):
                em.line(f"const u32 cake_taddr{i} = {tmem_addr(em, region)} + {_QUARTER};")
            em.line("#pragma unroll")
            with em.block(f"for (int {_C0} = 0; {_C0} < {cols}; {_C0} += {_CHUNK})"):
                self.chunks = {leaf: f"cake_t{i}" for i, leaf in enumerate(regions)}
                _load_chunk(em, list(self.chunks.values()), {})
                em.line("#pragma unroll")
                with em.block(f"for (int {_J} = 0; {_J} < {_CHUNK}; {_J} += {step})"):
                    em.line(f"const int {var} = {_C0} + {_J};")
                    yield
                self.chunks = {}


def _mma_sync_role(em: KernelEmitter) -> bool:
    """Whether the current role accumulates in registers (mma.sync): its tiles then take
    the sm_80 fragment layout (targets/sm80/tiles.py)."""
    role = tile_role(em)
    return any(isinstance(op, MmaOp) and isinstance(op.acc.owner, RegsOp) for op in role.ops)


def tile_layout(em: KernelEmitter) -> Layout:
    return sm80.tile_layout(em) if _mma_sync_role(em) else RowLayout(em)


def per_layout(own, mma_sync):
    """A lowering that takes the sm_80 one in a role that accumulates in registers."""
    def lower(em: KernelEmitter, op: Operation) -> None:
        (mma_sync if _mma_sync_role(em) else own)(em, op)
    lower.__doc__ = own.__doc__
    return lower


def tma_store(em: KernelEmitter, op: TmaStoreOp) -> None:
    """A TMEM accumulator (converted) or a register accumulator is stored by lowering.py;
    any other tile expression is evaluated per element as it is stored."""
    value = op.value.owner.source if isinstance(op.value.owner, ConvertOp) else op.value
    if isinstance(value.owner, (TmemOp, RegsOp)):
        tma_store_sm100(em, op)
    else:
        store_tile(em, op, tile_layout(em))


# ---- declarations ---------------------------------------------------------------------------


def declare_tiles(em: KernelEmitter, role: RoleState, ops: list[Operation]) -> None:
    """`lm.regs` tiles of the role's code: those `lm.argmin` keeps its running rows in (one
    register each), then the others; the sm_80 layout's in a role accumulating in registers."""
    if any(isinstance(op, MmaOp) and isinstance(op.acc.owner, RegsOp) for op in ops):
        sm80.declare_tiles(em, role, ops)
        return
    for op in ops:
        if isinstance(op, ArgminOp):
            em.try_lower(op, lambda op=op: _declare_running(em, op))
    if any(isinstance(op, (TileAssignOp, *PURE_TILE_OPS)) for op in ops):
        em.try_lower(role.op, lambda: declare_regs(em, ops, tile_layout(em)))


def _declare_running(em: KernelEmitter, op: ArgminOp) -> None:
    for v in (op.value, op.index):
        regs = v.owner
        if v in em.values or not isinstance(regs, RegsOp):
            continue
        rows, cols = tile_dims(v)
        _check_role(em, rows)
        var = em.names.fresh(regs.sym_name.data)
        em.values[v] = var
        em.source_comment(regs)
        em.line(f"{tile_ctype(v)} {var};  // ({rows}, {cols}): row 32 (warp % 4) + lane")


# ---- lowerings ------------------------------------------------------------------------------


def convert(em: KernelEmitter, op: ConvertOp) -> None:
    """A TMEM read in tile arithmetic emits nothing: the consumer loads the chunks it needs.
    Any other conversion (`tma_store(acc.to(...))`) is the target's store."""
    if _tmem_read(op.result) is not None and all(
            not isinstance(u.operation, TmaStoreOp) for u in op.result.uses):
        return
    common.convert(em, op)


def tile_load(em: KernelEmitter, op: TileLoadOp) -> None:
    layout = tile_layout(em)
    if load_tile(em, op, layout):
        return
    if tile_dims(op.result)[1] == 1:  # (M, 1): one register, this thread's row
        load_vector(em, op, layout)
        return
    load_row_vector(em, op, "cake_load_cols_all", 1, "every column, in every thread")


def stage_load(em: KernelEmitter, op: StageLoadOp) -> None:
    """Only the stage's address: each consuming `lm.argmin` reads the columns of its chunks
    (cake_lds_x32), so no thread holds all N columns."""
    rows, cols = tile_dims(op.result)
    if rows != 1 or cols % _CHUNK:
        raise Unsupported(f"`load` of a ({rows}, {cols}) stage (one value per column, N a "
                          f"multiple of {_CHUNK}, is supported)")
    _check_deferred(op)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"const u32 {var} = {unparen(em.val(op.source))};  // (1, {cols}) "
            f"{tile_ctype(op.result)} in SMEM, read {_CHUNK} columns at a time by its argmin")


def _check_deferred(op: StageLoadOp) -> None:
    """The read moves from the `load()` to its consumers, which must then see what the
    safety gate checked there: each is an `lm.argmin` later in the same block, with no
    release (arrive, commit: the producer may refill once it completes) or load into SMEM
    in between."""
    for user in _consumers(op.result):
        if not isinstance(user, ArgminOp) or user.parent is not op.parent:
            raise Unsupported("`view[s].load()` consumed other than by an `lm.argmin` in its "
                              "block")
        between = op.next_op
        while between is not user:
            assert between is not None
            if any(isinstance(o, (ArriveOp, CommitOp, *ASYNC_LOADS)) for o in between.walk()):
                raise Unsupported("`view[s].load()` read by an `lm.argmin` after a barrier "
                                  "release or a load between them")
            between = between.next_op


def _consumers(v: SSAValue) -> list[Operation]:
    """The ops that consume tile `v`, through the tile arithmetic it feeds."""
    out: list[Operation] = []
    for use in v.uses:
        user = use.operation
        out += _consumers(user.result) if isinstance(user, PURE_TILE_OPS) else [user]
    return out


def tile_store(em: KernelEmitter, op: TileStoreOp) -> None:
    rows, cols = tile_dims(op.value)
    if cols > 1:
        store_tile(em, op, tile_layout(em))
        return
    _check_role(em, rows)
    ctype = tile_ctype(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    with em.block():
        em.line(f"const {ctype} cake_v = {evaluate(em, op.value, _leaf({}))};")
        em.line(f"const i32 cake_c[{rank}] = {tile_coords(em, op, rows)};")
        em.line(f"cake_store_row<{rank}, {ctype}>(cake_v, {em.val(op.tensor)}, cake_c, {_ROW});")


def sum_sq(em: KernelEmitter, op: SumSqOp) -> None:
    rows, atoms, atom_bytes, pitch, swz = sum_sq_layout(em, op)
    _check_role(em, rows)
    var = em.names.fresh(op.result.name_hint or "sum_sq")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"const float {var} = cake_sum_sq_row_bf16<{atoms}u, {atom_bytes}u, {pitch}u, "
            f"{swz}u>("
            f"{em.val(op.source)}, {_ROW});  // ({rows}, 1)")


def argmin(em: KernelEmitter, op: ArgminOp) -> None:
    """This thread's row in increasing column order with a strict `<`, so its running
    (min, index) keeps the lowest index among equal values. TMEM accumulators in the
    expression are read 32 columns at a time (tcgen05.ld + wait::ld) after the
    tcgen05.fence::after_thread_sync that ends the wait on their MMA's commit, and SMEM
    stages (`view[s].load()`) in the same chunks."""
    rows, cols = tile_dims(op.source)
    _check_role(em, rows)
    best, index = em.values.get(op.value), em.values.get(op.index)
    if best is None or index is None:
        raise Unsupported("`lm.argmin` into tiles that are not `lm.regs` of its role")
    leaves = tile_leaves(op.source)
    regions = {leaf: region for leaf in leaves
               for region in [_tmem_read(leaf)] if region is not None}
    stages = {v: em.val(v) for v in leaves if isinstance(v.owner, StageLoadOp)}  # addresses
    chunked = bool(regions or stages)
    if cols % (_CHUNK if chunked else 8):
        raise Unsupported(f"`lm.argmin` over {cols} columns (a multiple of "
                          f"{_CHUNK if chunked else 8} is needed)")
    chunk = _CHUNK if chunked else cols
    em.source_comment(op)
    init = em.val(op.init)
    with em.block():
        if init != "false":
            head = "" if init == "true" else f"if ({init}) "
            em.line(f"{head}{{ {best} = __int_as_float(0x7f800000); {index} = 0; }}")
        em.line(f"const i32 cake_col = {paren(em.val(op.base))};")
        tmem: dict[SSAValue, str] = {}
        for i, (leaf, region) in enumerate(regions.items()):
            tmem[leaf] = f"cake_t{i}"
            em.line(f"const u32 cake_taddr{i} = {tmem_addr(em, region)} + {_QUARTER};")
        smem = {leaf: f"cake_v{i}" for i, leaf in enumerate(stages)}
        em.line("#pragma unroll")
        with em.block(f"for (int {_C0} = 0; {_C0} < {cols}; {_C0} += {chunk})"):
            _load_chunk(em, list(tmem.values()), {buf: stages[v] for v, buf in smem.items()})
            em.line("#pragma unroll")
            with em.block(f"for (int {_J} = 0; {_J} < {chunk}; ++{_J})"):
                leaf = _leaf({**tmem, **smem})
                em.line(f"const float cake_s = {evaluate(em, op.source, leaf)};")
                with em.block(f"if (cake_s < {best})"):
                    em.line(f"{best} = cake_s;")
                    em.line(f"{index} = cake_col + {_C0} + {_J};")


def _load_chunk(em: KernelEmitter, tmem: list[str], smem: dict[str, str]) -> None:
    """Columns cake_c0 .. + 31 of the expression's TMEM reads (registers `tmem`, from
    cake_taddr0, 1, ...) and SMEM stages (registers → stage address) into registers. The
    shared loads come before tcgen05.wait::ld, free to overlap the TMEM loads; every lane
    reads the same words (a broadcast), 4 columns per ld.shared.v4."""
    for i, buf in enumerate(tmem):
        em.line(f"u32 {buf}[{_CHUNK}];")
        em.line(f"cake_tmem_ld_32x32b_x32(cake_taddr{i} + (u32){_C0}, {buf});")
    for buf, addr in smem.items():
        em.line(f"u32 {buf}[{_CHUNK}];")
        em.line(f"cake_lds_x32({addr} + 4u * (u32){_C0}, {buf});")
    if tmem:
        em.line("cake_tmem_wait_ld();")
    for buf in tmem:
        em.line(f"cake_fence_regs({buf});")
