"""sm_90a lowerings: wgmma from SMEM descriptors into register accumulators (wgmma fragment
layout), wgmma commit groups as `lm.commit`, register-accumulator `tma_store`s, and the
schedules that keep the tensor cores busy through the epilogue: a ring loop's commits released
one iteration late (one wgmma group in flight), epilogue stores split into parts issued under the
next tile's groups, and wgmmas under `if` issued predicated instead of branched around."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    PURE_TILE_OPS, BarrierOp, CommitOp, ConvertOp, ForOp, IfOp, MmaOp, RegsOp, StageOp,
    TileIndexOp, TileStoreOp, TileType, TmaStoreOp, dtype_name, stage_source,
)
from cakec.passes.derive_common import block_ops
from cakec.targets.cluster import multicast_axes
from cakec.targets.emit import common
from cakec.targets.emit.cexpr import desc_operand, paren, scaled, unparen
from cakec.targets.emit.common import ACC_CTYPE, OUT_TRAITS, loop
from cakec.targets.emit.emitter import (AccState, KernelEmitter, RoleState, blocks_per_sm,
                                        launch_regs)
from cakec.targets.emit.tiles import (
    CP, R, Layout, column_pair, inlined, layout_of, tile_dims,
)
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sm90.ring import held_commit
from cakec.targets.sm90.wgmma_forms import WgmmaForm

#: Parts a deferred epilogue store is split into (one per wgmma group that follows it).
STORE_PARTS = 4


@dataclass(frozen=True)
class DeferredStore:
    """The store of a 16-bit tile expression over the role's accumulator, last in a tile
    loop: each whole tile is evaluated, converted and packed into `out` where the store
    stands, then written a part at a time under the next wgmma groups (`parts` = parts still
    to write, 0 when nothing is pending). The parts left over are written after
    `flush_after` (the body's last op issuing wgmma groups; at the store when None), so the
    packed tile is dead while the epilogue's own tiles (a bias, scales) are live."""

    op: TmaStoreOp | TileStoreOp
    out: str
    row: str
    col: str
    parts: str
    n: int
    trait: str
    tensor: str
    flush_after: Operation | None

    def store_part(self) -> str:
        return (f"cake_store_packed_part<{self.n}, {STORE_PARTS}, {self.trait}>({self.out}, "
                f"{self.tensor}, {self.row}, {self.col}, {self.parts});")

    def flush(self) -> str:
        return f"while ({self.parts}) {self.store_part()}"


def declare_acc(em: KernelEmitter, regs_op: RegsOp) -> None:
    """A register accumulator in wgmma fragments: each warpgroup of the role owns
    rows/warpgroups rows, `rows // M` m64nN fragments of N/2 floats per thread."""
    role = em.role
    assert role is not None
    if regs_op.result in role.accs:
        return
    mma = next(op for op in role.ops if isinstance(op, MmaOp) and op.acc == regs_op.result)
    shape = em.attr_ints(mma, "cake.mma_shape")
    groups = em.attr_int(mma, "cake.warpgroups")
    m, n = regs_op.result.type.dims()
    if groups != role.warpgroups or len(shape) != 3 or shape[1] != n or not groups:
        em.unsupported(mma, f"an MMA split over {groups} warpgroups in role "
                       f"`{role.name}` of {len(role.warps)} warps")
        return
    rows = m // groups
    var = em.names.fresh(regs_op.sym_name.data)
    role.accs[regs_op.result] = AccState(var, rows // shape[0], n, rows)
    em.source_comment(regs_op)
    dtype = dtype_name(regs_op.result.type.element_type)
    em.line(f"{ACC_CTYPE[dtype]} {var}[{rows // shape[0]}][{n // 2}];  // {m}x{n} {dtype}: rows "
            f"[{rows} wg, {rows} wg + {rows}) in warpgroup wg, wgmma fragments")


def commit_sm90(em: KernelEmitter, op: CommitOp) -> None:
    """Arrive once the role's wgmma groups have read their operands: wait_group 0, then the
    arrivals. In a ring loop (see _deferrable_commits) keep the newest group in flight and
    release the stage before it instead."""
    role = em.role
    assert role is not None
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    s = em.val(op.stage)
    axes = multicast_axes(op)  # multicast=: the release reaches every member of the group
    if not role.accs:  # this role issues no MMA: nothing to wait for
        em.release(b, em.bar_addr(b, s), per_warpgroup=not role.single_thread, axes=axes)
        return
    held = role.held.get(op)
    if held is None:
        em.line("cake_wgmma_wait<0>();")
        em.release(b, em.bar_addr(b, s), per_warpgroup=True, axes=axes)
        return
    em.line("cake_wgmma_wait<1>();  // every group but the newest has read its stage")
    with em.block(f"if ({held} != ~0u)"):
        em.release(b, em.bar_addr(b, held), per_warpgroup=True, axes=axes)
    em.line(f"{held} = (u32){paren(s)};")


def wgmma_form(instr: str) -> WgmmaForm:
    """The wgmma form derive-descriptors chose (`cake.instr`, `wgmma.m64nNkK.D.A.B`)."""
    form = re.fullmatch(r"wgmma\.m64n(\d+)k(\d+)\.(f32|s32)\.(\w+)\.(\w+)", instr)
    if form is None:
        raise Unsupported(f"the MMA form `{instr}`")
    n, k, d, a, b = form.groups()
    return WgmmaForm(int(n), int(k), d, a, b)


def mma_sm90(em: KernelEmitter, op: MmaOp) -> None:
    """wgmma, per warpgroup of the role: fence, then for each 64-row block of its rows the
    K/k m64nNkK instructions (the form's helper is generated on first use), then
    commit_group. A descriptor is the derived bits + the stage address +
    derive-descriptors' row-block and K-step offsets."""
    role = em.role
    assert role is not None
    acc = role.accs.get(op.acc)
    if acc is None:
        raise Unsupported("an MMA whose accumulator is not a register tile of its role")
    form = wgmma_form(em.mma_instr(op))
    for v in (op.a, op.b):
        stage = stage_source(v)[0].owner
        if isinstance(stage, StageOp) and em.attr_str(stage.view.owner, "cake.swizzle") == "none":
            raise Unsupported("a wgmma operand without swizzle")
    register_a = isinstance(op.a.type, TileType)
    a_desc = 0 if register_a else em.attr_u64(op, "cake.a_desc")
    b_desc = em.attr_u64(op, "cake.b_desc")
    a_k, b_k = em.attr_ints(op, "cake.a_koffsets"), em.attr_ints(op, "cake.b_koffsets")
    a_m = em.attr_ints(op, "cake.a_moffsets")
    if not em.ok:
        return
    wg_step = progression(a_m, acc.frags) if role.warpgroups > 1 and not register_a else 0
    em.source_comment(op)
    init = em.val(op.init)
    first_scale = {"true": "0u", "false": "1u"}.get(init, f"(u32)!{paren(init)}")
    guard = em.mma_guard  # set by if_op: a predicated wgmma instead of a branch around it
    form = replace(form, guarded=guard is not None, a_regs=register_a,
                   trans_a="cake.trans_a" in op.attributes, trans_b="cake.trans_b" in op.attributes)
    call = em.helper(form.name, form.source())
    tail = "" if guard is None else f", (u32){paren(guard)}"
    with em.block():
        if register_a:
            frags = _pack_register_a(em, op, acc.frags, len(a_k))
        else:
            # Warpgroup wg owns row blocks [wg * frags, wg * frags + frags) of A.
            a_base = unparen(em.val(op.a)) + (f" + cake_wg * {wg_step}u" if wg_step else "")
            em.line(f"const u32 cake_a = {unparen(a_base)};")
        em.line(f"const u32 cake_b = {unparen(em.val(op.b))};")
        # wgmma is .sync.aligned: a warp that diverged in earlier code (a bounds-checked
        # store, a lane-0 arrival) must reconverge first, or the GPU faults with an illegal
        # instruction (test/distilled/wgmma_after_divergence.test).
        em.line("__syncwarp();")
        em.line("cake_wgmma_fence();")
        for f in range(acc.frags):
            for k, (ak, bk) in enumerate(zip(a_k, b_k)):
                a = (f"{frags}[{f}][{k}]" if register_a
                     else desc_operand(a_desc, 'cake_a', a_m[f] + ak))
                em.line(f"{call}({acc.var}[{f}], {a}, {desc_operand(b_desc, 'cake_b', bk)}, "
                        f"{first_scale if k == 0 else '1u'}{tail});")
        em.line("cake_wgmma_commit();")
        store = role.deferred_store
        if store is not None:  # the previous tile's stores run under this group
            em.line(f"if ({store.parts}) {store.store_part()}")
    flush_deferred(em, op)


def _pack_register_a(em: KernelEmitter, op: MmaOp, frags: int, k_steps: int) -> str:
    """The register tile A of `op` (16-bit, usually `p.to(lm.bf16)` of an f32 expression)
    packed into wgmma's register-A fragments, returning their array [frag][k step][4].
    The accumulator layout is the A layout: for K step k (columns 16k … 16k + 15) register
    a[h + 2 i] holds row half h of column octet 2k + i, the two adjacent columns of the
    pair as one u32. The expression is evaluated, and converted, as it is packed; reading
    it waits for the MMAs it reads (like any tile read)."""
    value, dtype = op.a, dtype_name(op.a.type.element_type)  # type: ignore[attr-defined]
    if isinstance(value.owner, ConvertOp) and isinstance(value.owner.source.type, TileType):
        value = value.owner.source
    layout = layout_of(em)
    rows, _ = value.type.dims()  # type: ignore[attr-defined]
    var = em.names.fresh("cake_pa")
    layout.before_read(em, op, value)
    em.line(f"u32 {var}[{frags}][{k_steps}][4];  // A: register-A fragments of "
            f"`{value.name_hint or 'the tile'}`, {dtype} pairs")
    with layout.row_loop(em, rows), layout.col_loop(em, value, step=2):
        column_pair(em, value, layout)
        em.line(f"{var}[{R} / 2][{CP} / 4][{R} % 2 + 2 * (({CP} / 2) % 2)] = "
                f"{OUT_TRAITS[dtype]}::pack(cake_x[0], cake_x[1]);")
    return var


def tma_store_sm90(em: KernelEmitter, op: TmaStoreOp | TileStoreOp) -> None:
    """Register accumulator → global memory, converted and bounds-checked against the
    tensor's shape (so tiles may hang over any edge): retire every wgmma group, then each
    warpgroup stores its rows straight from its fragments. A deferred store (of any tile
    expression, see _deferrable_store) packs its tile here instead."""
    role = em.role
    assert role is not None
    store = role.deferred_store
    if store is not None and store.op is op:
        _defer_store(em, store, role)
        return
    value, dtype = op.value, dtype_name(op.value.type.element_type)
    if isinstance(value.owner, ConvertOp):
        value = value.owner.source
    acc = role.accs.get(value)
    rank = len(op.tensor.type.dims())  # type: ignore[attr-defined]
    if acc is None:
        raise Unsupported("`tma_store` of a value other than its role's register accumulator")
    if rank != 2 or dtype not in OUT_TRAITS:
        raise Unsupported(f"`tma_store` of {dtype} into a rank-{rank} tensor")
    tile_m, tile_n = op.value.type.dims()  # type: ignore[attr-defined]
    em.source_comment(op)
    for commit, held in role.held.items():
        em.release_held(commit, held, reset=True)
    em.line("cake_wgmma_wait<0>();")
    with em.block():
        _tile_origin(em, role, op, tile_m, tile_n)
        for f in range(acc.frags):
            r = "cake_row" if f == 0 else f"cake_row + {64 * f}"
            em.line(f"cake_fence_regs({acc.var}[{f}]);")
            em.line(f"cake_store_wgmma_tile<{acc.n}, {OUT_TRAITS[dtype]}>({acc.var}[{f}], "
                    f"{em.val(op.tensor)}, {r}, cake_col);")


def _tile_origin(em: KernelEmitter, role: RoleState, op: Operation, rows: int, cols: int) -> None:
    """`cake_row`/`cake_col`: the element this warpgroup's share of a (rows, cols) tile
    stored at tile coordinates `op.coords` starts at (warpgroups split the rows evenly)."""
    row = scaled(em.val(op.coords[0]), rows)  # type: ignore[attr-defined]
    if role.warpgroups > 1:
        row = f"{row} + (i32)cake_wg * {rows // role.warpgroups}"
    em.line(f"const i32 cake_row = {row};")
    em.line(f"const i32 cake_col = {scaled(em.val(op.coords[1]), cols)};")  # type: ignore[attr-defined]


def _defer_store(em: KernelEmitter, store: DeferredStore, role: RoleState) -> None:
    """Wait for the accumulator, evaluate the expression per register pair straight into
    the packed tile (the accumulator layout's pair at row slot r, column slots cp and cp + 1
    is word cp + r: fragment word 2 j + h of wgmma.cuh's packed tiles), then keep a whole
    tile for later; tails and unaligned rows are stored now, bounds-checked."""
    op = store.op
    value = op.value.owner.source  # type: ignore[attr-defined]  # a ConvertOp's (checked)
    rows, _ = tile_dims(op.value)
    layout = layout_of(em)
    em.source_comment(op)
    if store.flush_after is None:
        em.line(store.flush())
    layout.before_read(em, op, value)
    with em.block():
        _tile_origin(em, role, op, rows, store.n)
        with layout.row_loop(em, rows), layout.col_loop(em, value, step=2):
            column_pair(em, value, layout)
            em.line(f"{store.out}[{CP} + {R}] = {store.trait}::pack(cake_x[0], cake_x[1]);")
        args = f"<{store.n}, {store.trait}>"
        with em.block(f"if (cake_whole_tile{args}({store.tensor}, cake_row, cake_col))"):
            em.line(f"{store.row} = cake_row;")
            em.line(f"{store.col} = cake_col;")
            em.line(f"{store.parts} = {STORE_PARTS}u;")
        em.lines[-1] = em.lines[-1].replace("}", "} else {")
        em.line(f"  cake_store_packed_tile{args}({store.out}, {store.tensor}, cake_row, cake_col);")
        em.line("}")


#: Registers a role's code needs beside its tiles, through the K loop (addresses, loop
#: state, descriptors, phase bits) and in the epilogue (those, plus the expression's
#: temporaries): a store is deferred only when the accumulator with the packed tile, and the
#: accumulator with the epilogue's own register tiles, leave this much of the role's budget.
#: Measured with ptxas 13.0: gemm_bf16 (128 + 64 packed) fits 232 without spills;
#: gemm_bias_gelu (128 + a 64-register bias) and gemm_fp8 (128 + 66 of scales) spill 28 and
#: 10 bytes at 232 and none at 240.
LOOP_RESERVED_REGS = 40
EPILOGUE_RESERVED_REGS = 44


def _deferrable_store(em: KernelEmitter, loop: ForOp) -> DeferredStore | None:
    """A loop whose body ends with the store of a 16-bit (M, N) tile expression that reads
    its role's accumulator (one fragment per warpgroup; `acc.to(lm.bf16)`,
    `lm.gelu(acc + bias).to(lm.bf16)`: a persistent tile loop's epilogue) into a rank-2
    tensor nothing else in the loop reads stores each whole tile during the next
    iteration's wgmma groups, when the registers fit (the *_RESERVED_REGS). Declares the
    packed tile and its bookkeeping before the loop."""
    role = em.role
    last = loop.body.block.ops.last
    if role is None or not isinstance(last, (TmaStoreOp, TileStoreOp)) or role.deferred_store:
        return None
    convert_op = last.value.owner
    dtype = dtype_name(last.value.type.element_type)  # type: ignore[attr-defined]
    if (not isinstance(convert_op, ConvertOp) or not isinstance(convert_op.source.type, TileType)
            or dtype not in ("bf16", "f16") or len(last.tensor.type.dims()) != 2  # type: ignore[attr-defined]
            or len(convert_op.source.type.dims()) != 2
            or any(u.operation is not last and loop.is_ancestor(u.operation)
                   for u in last.tensor.uses)):
        return None
    leaves = _register_leaves(convert_op.source)
    accs = {role.accs[v].var: role.accs[v] for v in leaves if v in role.accs}
    if len(accs) != 1:
        return None
    (acc,) = accs.values()
    shape = tuple(convert_op.source.type.dims())
    if acc.frags != 1 or shape != (acc.rows_per_wg * role.warpgroups, acc.n):
        return None
    body = block_ops(loop.body.block)
    flush_after = next((op for op in reversed(body) if op is not last and _issues_mma(op)), None)
    layout = layout_of(em)
    others = [v for v in leaves if v not in role.accs]
    # The epilogue's tiles computed after the flush point never coexist with a packed tile.
    late = [v for v in others if flush_after is not None and isinstance(v.owner, Operation)
            and _body_index(body, v.owner) > body.index(flush_after)]
    early = [v for v in others if v not in late]
    budget = _role_regs(em, role)
    if (acc.n // 2 + acc.n // 4 + _regs(layout, early) + LOOP_RESERVED_REGS > budget
            or acc.n // 2 + _regs(layout, others) + EPILOGUE_RESERVED_REGS > budget):
        return None
    name = em.names.fresh(f"{em.tensor_name(last.tensor)}_tile")
    store = DeferredStore(last, name, f"{name}_row", f"{name}_col", f"{name}_parts",
                          acc.n, OUT_TRAITS[dtype], em.val(last.tensor), flush_after)
    em.line(f"u32 {name}[{acc.n // 4}];  // the previous tile of `{store.tensor}`, packed; "
            f"{STORE_PARTS} parts go out under the next wgmma groups")
    em.line(f"i32 {store.row} = 0, {store.col} = 0;")
    em.line(f"u32 {store.parts} = 0;  // parts still to store")
    role.deferred_store = store
    return store


def _register_leaves(v: SSAValue) -> list[SSAValue]:
    """The register tiles (and scalars) the store's evaluator reads for `v`: through the
    pure ops it inlines, to the values that are computed (or loaded) into registers."""
    op = v.owner
    if isinstance(op, (*PURE_TILE_OPS, ConvertOp)) and (isinstance(op, ConvertOp) or inlined(op)):
        return [leaf for o in op.operands for leaf in _register_leaves(o)]
    return [v]


def _regs(layout: Layout, values: list[SSAValue]) -> int:
    """Registers per thread of the register tiles among `values` in `layout`."""
    total = 0
    for v in {v: None for v in values}:
        if not isinstance(v.type, TileType) or isinstance(v.owner, TileIndexOp):
            continue
        rows, cols = tile_dims(v)
        total += ((layout.row_slots(rows) if rows > 1 else 1)
                  * (layout.col_slots(cols) if cols > 1 else 1))
    return total


def _body_index(body: list[Operation], op: Operation) -> int:
    """Position in `body` of the op of it that is or contains `op` (-1: outside it)."""
    return next((i for i, top in enumerate(body) if top is op or top.is_ancestor(op)), -1)


def _issues_mma(op: Operation) -> bool:
    return isinstance(op, MmaOp) or any(isinstance(o, MmaOp) for o in op.walk())


def _role_regs(em: KernelEmitter, role: RoleState) -> int:
    """The role's per-thread register budget: its `regs=`, else the launch's default."""
    if role.op.regs is not None:
        return role.op.regs.value.data
    return launch_regs(em.attr_int(em.kernel, "cake.block_threads"), blocks_per_sm(em.kernel))


def flush_deferred(em: KernelEmitter, op: Operation) -> None:
    """After `op`, the deferred store's flush point: write the parts still pending."""
    store = em.role.deferred_store if em.role is not None else None
    if store is not None and store.flush_after is op:
        em.line(store.flush())



# ---- deferred commits (one wgmma group in flight) -------------------------------------------


def _deferrable_commits(em: KernelEmitter, loop: ForOp) -> list[CommitOp]:
    """The loop's commit that is released one iteration late (ring.held_commit, the
    predicate the safety model reads too), in a role that issues wgmmas; declares the
    held-stage register before the loop."""
    role = em.role
    commit = held_commit(loop) if role is not None and role.accs else None
    if commit is None:
        return []
    empty = commit.barrier.owner
    assert isinstance(empty, BarrierOp)
    held = em.names.fresh(f"{empty.sym_name.data}_held")
    em.line(f"u32 {held} = ~0u;  // stage of `{empty.sym_name.data}` released after the "
            "newest wgmma group (~0u: none)")
    role.held[commit] = held  # type: ignore[union-attr]
    return [commit]


# ---- control flow --------------------------------------------------------------------------


def for_loop(em: KernelEmitter, op: ForOp) -> None:
    """A loop whose ring commits keep a wgmma group in flight (_deferrable_commits) or whose
    epilogue stores run under the next tile's MMAs (_deferrable_store), else a plain loop."""
    em.source_comment(op)
    deferred = _deferrable_commits(em, op)
    store = _deferrable_store(em, op)
    loop(em, op)
    role = em.role
    for commit in deferred:  # nothing stays held once the loop is done
        em.release_held(commit, role.held.pop(commit), reset=False)  # type: ignore[union-attr]
    flush_deferred(em, op)
    if store is not None:  # the last tile's parts
        em.line(store.flush())
        role.deferred_store = None  # type: ignore[union-attr]


def if_op(em: KernelEmitter, op: IfOp) -> None:
    if guarded_mmas(em, op):
        _if_guarding_mmas(em, op)
    else:
        common.if_op(em, op)
    flush_deferred(em, op)


def guarded_mmas(em: KernelEmitter, op: IfOp) -> list[MmaOp]:
    """The wgmmas of an else-less `if` on sm_90a that are issued under the condition as a
    predicate rather than branched around: a branch would make the compiler copy the
    accumulator registers at the join, and ptxas 13.0 then serialises every wgmma of the
    kernel (C7514) (test/distilled/wgmma_in_branch.test). Each still commits its group,
    empty where the condition fails, so wait_group counts stay static."""
    if op.else_region.block.ops.first is not None:
        return []
    body = block_ops(op.then_region.block)
    if any(isinstance(o, (ForOp, IfOp)) for o in body):
        return []
    return [o for o in body if isinstance(o, MmaOp)]


def _if_guarding_mmas(em: KernelEmitter, op: IfOp) -> None:
    """Pure scalar code unconditionally, other effects under `if`, wgmmas predicated."""
    cond = unparen(em.val(op.cond))
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


def progression(offsets: list[int], frags: int) -> int:
    """Bytes from one warpgroup's first A row block to the next one's (derive-descriptors
    lays 64-row blocks out evenly; anything else is not lowered)."""
    step = offsets[1] - offsets[0] if len(offsets) > 1 else 0
    if any(b - a != step for a, b in zip(offsets, offsets[1:])):
        raise Unsupported("A-operand row blocks that are not evenly spaced")
    return step * frags
