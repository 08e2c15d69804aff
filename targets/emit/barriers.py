"""Lowerings of the asynchronous-copy and barrier vocabulary that every backend shares:
`lm.wait` (mbarrier try_wait.parity on the role's phase bits), `lm.arrive`, TMA loads
(arrive.expect_tx + one copy per box) and `lm.fence_proxy`. The sm_80 backend reaches the
pre-sm_90 mbarrier forms through the helper names its support header defines."""

from __future__ import annotations

from cakec.dialects.cake import (ArriveOp, BarrierOp, FenceProxyOp, RoleOp, SkipOp,
                                TmaLoadOp, TmaStoreStageOp, ViewOp, WaitOp)
from cakec.targets.cluster import cluster_shape, group_pattern, multicast_axes
from cakec.targets.emit.cexpr import paren, plus, scaled, unparen
from cakec.targets.emit.emitter import KernelEmitter
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sku import get_sku


def wait(em: KernelEmitter, op: WaitOp) -> None:
    """try_wait.parity spin on barrier[stage] with the role's phase bit, then flip the bit."""
    role = em.role
    assert role is not None
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    s = em.val(op.stage)
    for commit, held in role.held.items():
        # Never block while holding a release that the awaited phase may depend on.
        with em.block(f"if ({held} == (u32){paren(s)})"):
            em.release_held(commit, held, reset=True)
    bits = role.phase[b]
    if b.count.value.data == 1:
        addr, parity, flip, s = em.barriers[b], f"(u32){bits} & 1u", "1u", "0"
    else:
        one = "1ull" if b.count.value.data > 32 else "1u"
        addr, parity = em.bar_addr(b, s), f"(u32)({bits} >> {paren(s)}) & 1u"
        flip = f"{one} << {paren(s)}"
    if em.watchdog is None:
        em.line(f"cake_mbar_wait({addr}, {parity});")
    else:
        seen = role.seen[b]
        em.line(f"cake_wd_wait({addr}, {parity}, {_site(em, op, b)}u, (u32)({unparen(s)}), "
                f"{seen});")
        em.line(f"{seen} += 1u;")
    em.line(f"{bits} ^= {flip};")


def skip(em: KernelEmitter, op: SkipOp) -> None:
    """`lm.skip`: flip the role's phase bit of every stage passed over (count positions from
    `stage`, wrapping at the barrier's count) without touching the barrier. A runtime count
    below 0 passes over nothing, as the model reads it."""
    role = em.role
    assert role is not None
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    s, n = em.val(op.stage), em.val(op.count)
    if not n.isdigit():
        n = f"max({unparen(n)}, 0)"
    bits, count = role.phase[b], b.count.value.data
    if count == 1:
        em.line(f"{bits} ^= (u32)({n}) & 1u;")
    elif n == "1":
        em.line(f"{bits} ^= {'1ull' if count > 32 else '1u'} << {paren(s)};")
    else:
        ctype = "u64" if count > 32 else "u32"
        em.line(f"{bits} ^= cake_ring_mask<{ctype}>((u32){paren(s)}, (u32)({n}), {count}u);")
    if em.watchdog is not None:
        em.line(f"{role.seen[b]} += (u32)({n});")


def _site(em: KernelEmitter, op: WaitOp, b: BarrierOp) -> int:
    """The watchdog's number for this wait, with what the host needs to name it."""
    assert em.watchdog is not None and em.role is not None
    span = em.span(op)
    return em.watchdog.site(
        file=span.file if span else None, line=span.line if span else None,
        col=span.col if span else None, role=em.role.name, barrier=b.sym_name.data,
        count=b.count.value.data,
        producers=[r.owner.sym_name.data for r in b.prod if isinstance(r.owner, RoleOp)])



def tma_load(em: KernelEmitter, op: TmaLoadOp) -> None:
    """One elected thread: arrive.expect_tx with the copy's derived bytes (a TMA load is one
    arrival of its barrier), then one copy per box (one per swizzle atom)."""
    b = em.barrier_of(op.barrier)
    em.source_comment(op)
    bar = em.bar_addr(b, em.val(op.stage))
    lines = [f"cake_mbar_arrive_expect_tx({bar}, {em.attr_int(op, 'cake.tx_bytes')}u);"]
    axes = multicast_axes(op)
    if axes:
        # Every member expects the whole box on its own barrier; the group's first member
        # copies it into all of them (ctaMask: the group's pattern at its base rank).
        shape = cluster_shape(em.kernel)
        assert shape is not None
        base = f"cake_cluster_group_base({_bits(axes)}u)"
        mask = f"(u16)({hex(group_pattern(shape, axes))}u << {base})"
        lines += [f"if (cake_cluster_ctarank() == {base}) {{",
                  *("  " + c for c in _tma_copies(em, op, bar, mask)), "}"]
    else:
        lines += _tma_copies(em, op, bar)
    if em.role is not None and not em.role.single_thread:
        with em.block("if (cake_leader)"):
            for text in lines:
                em.line(text)
    else:
        for text in lines:
            em.line(text)


def _tma_copies(em: KernelEmitter, op: TmaLoadOp, bar: str, mask: str | None = None
                ) -> list[str]:
    """One copy per box; with a ctaMask `mask`, the .multicast::cluster form."""
    view = op.view.owner
    assert isinstance(view, ViewOp)
    s = em.val(op.stage)
    dst = em.views[view]
    if s != "0":
        dst = f"{dst} + (u32){paren(s)} * {em.attr_int(view, 'cake.stage_bytes')}u"
    form, extra = ("_multicast", f"{mask}, ") if mask else ("", "")
    return [f"cake_tma_load_{rank}d{form}({smem}, &{tmap}, {bar}, {extra}{cs});"
            for rank, smem, tmap, cs in _boxes(em, op, view, dst)]


def _element_coords(em: KernelEmitter, op: TmaLoadOp | TmaStoreStageOp,
                    view: ViewOp) -> list[str]:
    """A copy's element coordinates, innermost first: tile coordinate × tile extent
    (derive-tma's rule)."""
    rank = len(op.coords)
    if not 1 <= rank <= 5:
        raise Unsupported(f"a rank-{rank} TMA copy")
    dims = view.result.type.dims()
    tile = (1,) * (rank - len(dims)) + dims
    return [scaled(em.val(c), extent) for c, extent in zip(op.coords, tile)][::-1]


def _boxes(em: KernelEmitter, op: TmaLoadOp | TmaStoreStageOp, view: ViewOp,
           stage: str, coords: list[str] | None = None) -> list[tuple[int, str, str, str]]:
    """(rank, SMEM address, tensor map, element coordinates) of each box of a copy between the
    stage at `stage` and the tensor: one per swizzle column block (`cake.copies`), at
    `coords` (default: the op's element coordinates)."""
    coords = coords or _element_coords(em, op, view)
    copies, step = em.attr_int(op, "cake.copies"), em.attr_int(op, "cake.copy_step")
    atom_bytes = em.attr_int(view, "cake.atom_bytes")
    tmap = em.tmap_param(op)
    return [(len(coords), stage if j == 0 else f"{stage} + {j * atom_bytes}u", tmap,
             ", ".join([plus(coords[0], j * step), *coords[1:]])) for j in range(copies)]


def tma_store_stage(em: KernelEmitter, op: TmaStoreStageOp) -> None:
    """`T.tma_store(view[s], coords)`: one thread issues a bulk tensor store per box and
    commits them as a group; nothing waits here. The TMA unit clips a box that crosses the
    tensor's far edges, but a box that starts outside the tensor is never issued: a bulk
    tensor store at a negative coordinate faults (illegal instruction, on the H200), so the
    "nothing written outside" the language promises is the emitted test (one unsigned compare
    per dimension against the tensor's extent). The copy reads the stage asynchronously: the
    role's next write into those bytes first waits for its store groups to have read their
    stages (KernelEmitter.drain_bulk_stores), and so does the end of the role, so the
    epilogue's copy runs under whatever the role does next."""
    view = op.source.owner.view.owner  # type: ignore[union-attr]
    assert isinstance(view, ViewOp)
    em.source_comment(op)
    rank = len(op.coords)
    if rank not in (2, 3):
        raise Unsupported(f"a rank-{rank} TMA store")
    tensor = em.tensor_name(op.tensor)
    names = [f"cake_x{k}" for k in range(rank)]  # element coordinates, innermost first
    lines = ["const i32 " + ", ".join(f"{n} = {unparen(c)}" for n, c in
                                      zip(names, _element_coords(em, op, view))) + ";"]
    # Dimension k (innermost first) is the tensor's shape[rank - 1 - k].
    inside = [f"(u64){n} < (u64){tensor}.shape[{rank - 1 - k}]" for k, n in enumerate(names)]
    lines.append(f"const bool cake_in = {' && '.join(inside[1:])};  // the box's outer "
                 "dimensions start inside the tensor")
    step = em.attr_int(op, "cake.copy_step")
    for j, (rank_, smem, tmap, cs) in enumerate(_boxes(em, op, view,
                                                       unparen(em.val(op.source)), names)):
        start = plus(names[0], j * step)
        lines.append(f"if (cake_in && (u64){paren(start)} < (u64){tensor}.shape[{rank - 1}]) "
                     f"cake_tma_store_{rank_}d(&{tmap}, {smem}, {cs});")
    lines.append("cake_tma_store_commit();")
    role = em.role
    head = "" if role is None or role.single_thread else "if (cake_leader)"
    with em.block(head):
        for text in lines:
            em.line(text)


def arrive(em: KernelEmitter, op: ArriveOp) -> None:
    em.source_comment(op)
    b = em.barrier_of(op.barrier)
    # With `multicast=` the same event lands on barrier[stage] of every member of this CTA's
    # group (this one included), each member's arrival a remote one through mapa.
    em.release(b, em.bar_addr(b, em.val(op.stage)), per_warpgroup=False,
               axes=multicast_axes(op))


def _bits(axes: tuple[int, ...]) -> int:
    return sum(1 << a for a in axes)


def fence_proxy(em: KernelEmitter, op: FenceProxyOp) -> None:
    """Each thread fences its own generic-proxy writes (targets without TMA have no async
    proxy: mma.sync reads SMEM with ldmatrix, an ordinary load). In a role whose threads
    write views (`view[s].store`), the role then meets at its named barrier: the MMA or TMA
    store that follows is issued by one thread or warpgroup and reads every thread's bytes."""
    em.source_comment(op)
    if get_sku(em.target).has("tma"):
        em.line("cake_fence_proxy_async();")
    role = em.role
    if role is None or role.single_thread or not role.writes_stages:
        return
    if len(role.warps) == 1:
        em.line("__syncwarp();  // every lane has written and fenced its part")
        return
    em.line(f"cake_named_barrier_sync({role.barrier_id}u, {32 * len(role.warps)}u);  "
            f"// every thread of `{role.name}` has written and fenced its part")
