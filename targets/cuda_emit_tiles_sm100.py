"""sm_100a / sm_103a lowering of register-tile values: vector loads and stores, broadcasting
arithmetic, `lm.sum_sq` and `lm.argmin` (device helpers in cuda_emit_tiles_sm100.cuh), for
roles whose accumulators live in Tensor Memory.

Tiles take the tcgen05.ld 32x32b layout: the role is 4 warps, one per TMEM lane quarter, and
thread (quarter q = warp % 4, lane l) owns row 32 q + l of every 128-row tile. So an (M, 1)
vector is one register per thread, a (1, N) vector N registers (every thread holds every
column; its load is a broadcast), and a TMEM accumulator named in tile arithmetic (the
frontend reads it with a cake.convert) is this thread's row, loaded 32 columns at a time by
the op that consumes the expression. A (1, N) stage in SMEM (`view[s].load()`) is read the
same way, 32 columns at a time next to the TMEM chunk it combines with, rather than copied
whole into every thread's registers. A row never spans threads, so a running argmin needs
no merge across lanes, unlike the wgmma layout of sm_90a (cuda_emit_tiles.py).

Arithmetic emits no code, as on sm_90a: the consumer evaluates the expression per element
through cuda_emit_tiles.evaluate (one fmaf for `c_sq - 2.0 * acc`). A register accumulator
(mma.sync on Blackwell) has the sm_80 fragment layout, which these tiles do not share: tile
arithmetic on one is reported (CAKE-H100).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ASYNC_LOADS, ArgminOp, ArriveOp, CommitOp, ConvertOp, MmaOp, RegsOp, StageLoadOp, SumSqOp,
    TileBinaryOp, TileLoadOp, TileStoreOp, TmemOp,
)

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
    role = tiles._role(em)
    if any(isinstance(op, MmaOp) and isinstance(op.acc.owner, RegsOp)
           and ce._role_of(op) is role.op for op in em.kernel.walk()):
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


def _leaf(chunks: dict[SSAValue, str]) -> tiles.Leaf:
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
        rows, cols = tiles._dims(v)
        if cols == 1:
            return em.values[v]
        if rows == 1:
            return f"{em.values[v]}[{_C0} + {_J}]"
        raise Unsupported(f"a ({rows}, {cols}) tile that is not a TMEM accumulator")

    return leaf


# ---- declarations ---------------------------------------------------------------------------


def declare_tiles(em: KernelEmitter, role: _Role, ops: list[Operation]) -> None:
    """`lm.regs` vectors that `lm.argmin` keeps its running rows in: one register each."""
    for op in ops:
        if isinstance(op, ArgminOp):
            em.try_lower(op, lambda op=op: _declare_running(em, op))


def _declare_running(em: KernelEmitter, op: ArgminOp) -> None:
    for v in (op.value, op.index):
        regs = v.owner
        if v in em.values or not isinstance(regs, RegsOp):
            continue
        rows, cols = tiles._dims(v)
        _check_role(em, rows)
        var = em.names.fresh(regs.sym_name.data)
        em.values[v] = var
        em.source_comment(regs)
        em.line(f"{tiles._ctype(v)} {var};  // ({rows}, {cols}): row 32 (warp % 4) + lane")


# ---- lowerings ------------------------------------------------------------------------------


def convert(em: KernelEmitter, op: ConvertOp) -> None:
    """A TMEM read in tile arithmetic emits nothing: the consumer loads the chunks it needs.
    Any other conversion (`tma_store(acc.to(...))`) is the target's store."""
    if _tmem_read(op.result) is not None and all(
            isinstance(u.operation, (TileBinaryOp, ArgminOp)) for u in op.result.uses):
        return
    ce.convert(em, op)


def tile_load(em: KernelEmitter, op: TileLoadOp) -> None:
    tiles.load_row_vector(em, op, "cake_load_cols_all", 1, "every column, in every thread")


def stage_load(em: KernelEmitter, op: StageLoadOp) -> None:
    """Only the stage's address: each consuming `lm.argmin` reads the columns of its chunks
    (cake_lds_x32), so no thread holds all N columns."""
    rows, cols = tiles._dims(op.result)
    if rows != 1 or cols % _CHUNK:
        raise Unsupported(f"`load` of a ({rows}, {cols}) stage (one value per column, N a "
                          f"multiple of {_CHUNK}, is supported)")
    _check_deferred(op)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"const u32 {var} = {ce._unparen(em.val(op.source))};  // (1, {cols}) "
            f"{tiles._ctype(op.result)} in SMEM, read {_CHUNK} columns at a time by its argmin")


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
        out += _consumers(user.result) if isinstance(user, TileBinaryOp) else [user]
    return out


def tile_store(em: KernelEmitter, op: TileStoreOp) -> None:
    rows, _ = tiles._dims(op.value)
    _check_role(em, rows)
    ctype = tiles._ctype(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    with em.block():
        em.line(f"const {ctype} cake_v = {tiles.evaluate(em, op.value, _leaf({}))};")
        em.line(f"const i32 cake_c[{rank}] = {tiles._coords(em, op, rows)};")
        em.line(f"cake_store_row<{rank}, {ctype}>(cake_v, {em.val(op.tensor)}, cake_c, {_ROW});")


def sum_sq(em: KernelEmitter, op: SumSqOp) -> None:
    rows, atoms, atom_bytes, pitch, swz = tiles.sum_sq_layout(em, op)
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
    rows, cols = tiles._dims(op.source)
    _check_role(em, rows)
    best, index = em.values.get(op.value), em.values.get(op.index)
    if best is None or index is None:
        raise Unsupported("`lm.argmin` into tiles that are not `lm.regs` of its role")
    leaves = tiles._leaves(op.source)
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
        em.line(f"const i32 cake_col = {ce._paren(em.val(op.base))};")
        tmem: dict[SSAValue, str] = {}
        for i, (leaf, region) in enumerate(regions.items()):
            tmem[leaf] = f"cake_t{i}"
            em.line(f"const u32 cake_taddr{i} = {sm100._tmem_addr(em, region)} + {_QUARTER};")
        smem = {leaf: f"cake_v{i}" for i, leaf in enumerate(stages)}
        em.line("#pragma unroll")
        with em.block(f"for (int {_C0} = 0; {_C0} < {cols}; {_C0} += {chunk})"):
            _load_chunk(em, list(tmem.values()), {buf: stages[v] for v, buf in smem.items()})
            em.line("#pragma unroll")
            with em.block(f"for (int {_J} = 0; {_J} < {chunk}; ++{_J})"):
                leaf = _leaf({**tmem, **smem})
                em.line(f"const float cake_s = {tiles.evaluate(em, op.source, leaf)};")
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


def register(lowerings: dict, headers: dict, declarations: dict) -> None:
    """Add these lowerings, their device helpers and the running-tile declarations to
    cuda_emit's sm_100a / sm_103a tables (after cuda_emit_sm100.register)."""
    for target in sm100.TARGETS:
        lowerings[target].update({
            TileBinaryOp: tiles.tile_binary, TileLoadOp: tile_load, TileStoreOp: tile_store,
            StageLoadOp: stage_load, SumSqOp: sum_sq, ArgminOp: argmin, ConvertOp: convert,
        })
        headers[target] = (*headers[target], "cuda_emit_tiles.cuh", "cuda_emit_tiles_sm100.cuh")
        declarations[target] = declare_tiles


# Last, so that importing any of these modules first works (cuda_emit registers on import).
from cakec.targets import cuda_emit as ce  # noqa: E402
from cakec.targets import cuda_emit_sm100 as sm100  # noqa: E402
from cakec.targets import cuda_emit_tiles as tiles  # noqa: E402
from cakec.targets.cuda_emit import KernelEmitter, Unsupported, _Role  # noqa: E402
