"""When each `lm.regs` tile that the program assigns (`m_i = ...`) is defined: a read before
its first assignment on some trip count (or of a tile nothing writes) is CAKE-S040, the
register-tile counterpart of CAKE-S013 for MMA accumulators.

Definite assignment over the role's structured code, in program order across its `with`
blocks: a loop's body starts from the state before the loop (its first iteration) and,
unless its trip count is a constant of at least one, leaves that state unchanged; an `if`
leaves what both branches assign. Tiles written by an MMA or `lm.argmin` are the protocol's
(simulate.py) and are not tracked here."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Block, Operation

from cakec.dialects import cake
from cakec.passes.protocol.model import Finding


def tile_definedness(kernel: cake.KernelOp) -> list[Finding]:
    tracked = {op for op in kernel.body.block.ops if isinstance(op, cake.RegsOp)
               and not any(isinstance(u.operation, cake.ArgminOp)
                           or (isinstance(u.operation, cake.MmaOp) and u.index == 0)
                           for u in op.result.uses)}
    if not tracked:
        return []
    out: list[Finding] = []
    states: dict[Operation, set[cake.RegsOp]] = {}
    for on in kernel.body.block.ops:
        if isinstance(on, cake.OnRoleOp):
            role = on.role.owner
            # another role's tiles are not its own to read (CAKE-S017, verify_safety.py)
            own = {t for t in tracked if t.role.owner is role}
            states[role] = _block(on.body.block, set(states.get(role, set())), own, out)
    return out


def _block(block: Block, defined: set[cake.RegsOp], tracked: set[cake.RegsOp],
           out: list[Finding]) -> set[cake.RegsOp]:
    for op in block.ops:
        if isinstance(op, cake.ForOp):
            after = _block(op.body.block, set(defined), tracked, out)
            if _runs(op):
                defined = after
        elif isinstance(op, cake.IfOp):
            then = _block(op.then_region.block, set(defined), tracked, out)
            orelse = _block(op.else_region.block, set(defined), tracked, out)
            defined = then & orelse
        else:
            for v in op.operands[1:] if isinstance(op, cake.TileAssignOp) else op.operands:
                regs = v.owner
                if regs in tracked and regs not in defined and regs not in {
                        f.notes[0][0] for f in out}:  # one report per tile
                    out.append(_finding(op, regs))
            if isinstance(op, cake.TileAssignOp):
                defined.add(op.dest.owner)
    return defined


def _runs(loop: cake.ForOp) -> bool:
    """Whether the loop surely runs at least once (constant bounds)."""
    lb, ub = (o.owner for o in (loop.lb, loop.ub))
    return (isinstance(lb, arith.ConstantOp) and isinstance(ub, arith.ConstantOp)
            and ub.value.value.data > lb.value.value.data)


def _finding(op: Operation, regs: cake.RegsOp) -> Finding:
    name = regs.sym_name.data
    first = next((u.operation for u in regs.result.uses
                  if isinstance(u.operation, cake.TileAssignOp) and u.index == 0), None)
    notes: list[tuple[Operation | None, str]] = [(regs, f"`{name}` is declared here")]
    if first is not None:
        notes.append((first, f"`{name}` is first assigned here"))
    return Finding(
        "CAKE-S040", op,
        f"register tile `{name}` is read before it is assigned on some trip count"
        if first is not None else
        f"register tile `{name}` is read, but nothing writes it (no assignment, MMA or "
        "`lm.argmin`)",
        notes, help=f"assign `{name}` before the read, e.g. `{name} = -lm.inf` for a running "
                    "maximum or `0.0` for a running sum" if first is not None else
                    f"write `{name}` before the read: assign it (`{name} = ...`) or make it the "
                    "accumulator of an MMA")

