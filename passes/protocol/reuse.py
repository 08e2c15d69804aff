"""Views with live ranges (`pool.view(..., reuses=old)`): the findings of their accesses.

A view declared with `reuses=` lies in the bytes of an earlier view, and the model keys its
stages as the stages they lie in (View.buffer), so the simulation already orders every access
of either view against the other's as it orders the accesses of one buffer: an asynchronous
fill landing, an MMA's operand reads until they are retired, another role's reads until an
arrival after them reaches the writer, a TMA store's copy until it is drained, and back again
around loops. This module says so in the author's terms (CAKE-S061): a race between accesses
of two such views is one view used outside its live range, and a read of one view whose
bytes the other wrote last reads the other's data.
"""

from __future__ import annotations

from xdsl.ir import Operation

from cakec.dialects import cake
from cakec.passes.protocol.model import Finding, Kernel, View, line_of

CODE = "CAKE-S061"


def accessed(k: Kernel, op: Operation) -> list[View]:
    """The views whose bytes `op` reads or writes (its stage and view operands)."""
    out: list[View] = []
    for v in op.operands:
        src = cake.stage_source(v)[0].owner
        if isinstance(src, cake.StageOp):
            out.append(k.view_of(src.view))
        elif isinstance(src, cake.ViewOp):
            out.append(k.view_of(v))
    return out


def _pair(k: Kernel, ops: list[Operation | None]) -> tuple[View, Operation] | None:
    """The reusing view of two related views that `ops` access, and the op of the other."""
    views = [(op, v) for op in ops if op is not None for v in accessed(k, op)]
    for i, (_, va) in enumerate(views):
        for ob, vb in views[i + 1:]:
            if va is not vb and cake.reuse_related(va.op, vb.op):
                return _newer(va, vb), ob
    return None


def _newer(a: View, b: View) -> View:
    """Of two related views, the one that reuses the other's bytes (through a chain of
    `reuses=`); of two that reuse the same view's, the first with `reuses=`."""
    x = b.reuses
    while x is not None:
        if x is a:
            return b
        x = x.reuses
    return a if a.reuses is not None else b


def as_reuse(k: Kernel, f: Finding, other: Operation | None) -> Finding:
    """A race finding between accesses of two views that share bytes by `reuses=`, in those
    terms (CAKE-S061, a note at the declaration); any other finding as it is."""
    found = None if f.code == CODE else _pair(k, [f.op, other, *(o for o, _ in f.notes)])
    if found is None:
        return f
    new, _ = found
    old = new.reuses
    assert old is not None
    notes = list(f.notes)
    if other is not None and all(o is not other for o, _ in notes):
        notes.append((other, "the other access is here"))
    notes.append((new.op, f"`{new.name}` is declared here to reuse the bytes of `{old.name}`"))
    return Finding(
        CODE, f.op,
        f"`{new.name}` reuses the bytes of `{old.name}`, but an access of one is not ordered "
        f"after the other's has completed: {f.message}", notes,
        help=(f.help + "; or place " if f.help else "place ")
        + f"`{new.name}` in bytes that no live view holds")


def stale_read(k: Kernel, r: int, ins_op: Operation, view: View, s: int, fill: list,
               where: str) -> Finding | None:
    """A read of `view[s]` whose bytes another view that shares them wrote last: it reads
    that view's data (the read is outside `view`'s live range, or before its first write)."""
    filled: View = fill[4].view
    if filled is view or not cake.reuse_related(filled.op, view.op):
        return None
    new = _newer(view, filled)
    what = "TMA load" if fill[2] is not None else "`store`"
    return Finding(
        CODE, ins_op,
        f"role {k.roles[r].name} reads {view.name}[{s}] at line {line_of(ins_op)}, but the "
        f"last write of those bytes is the {what} into `{filled.name}` at line "
        f"{line_of(fill[4].op)}: `{new.name}` reuses the bytes of `{new.reuses.name}`, so "
        f"this reads `{filled.name}`'s data{where}",
        [(fill[4].op, f"`{filled.name}` is written here"),
         (new.op, f"`{new.name}` is declared here to reuse the bytes of "
                  f"`{new.reuses.name}`")],
        help=f"write {view.name}[{s}] before reading it, and read `{filled.name}` only until "
             f"`{view.name}` is written")
