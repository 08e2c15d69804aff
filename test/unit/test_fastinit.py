"""cakec/fastinit.py: the short-cut IRDL builder builds the same IR as xDSL's own, and leaves
every other op (optional or variadic arguments, bad arguments) to xDSL's builder."""

from __future__ import annotations

from pathlib import Path

import pytest

import cakec  # noqa: F401  (installs the hook before xDSL is imported here)
from cakec.driver import SourceFile, build
from cakec.ir_text import print_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.cake"))


def _ir(path: Path) -> str:
    comp = build(SourceFile(str(path), path.read_text()))
    assert comp.module is not None, comp.sink.diagnostics
    return print_module(comp.module)


def test_installed():
    import xdsl.irdl.operations as ops

    assert getattr(ops.irdl_op_init, "_cake_fast", False)


@pytest.mark.parametrize("path", EXAMPLES[:12], ids=lambda p: p.name)
def test_same_ir_as_xdsl_builder(path: Path, monkeypatch: pytest.MonkeyPatch):
    import xdsl.irdl.operations as ops

    fast = _ir(path)
    calls: list[int] = []
    xdsl = ops.irdl_op_init.xdsl
    monkeypatch.setattr(ops, "irdl_op_init", lambda *a, **k: calls.append(1) or xdsl(*a, **k))
    assert _ir(path) == fast
    assert calls  # the frontend built IRDL ops through the builder


def test_other_ops_go_to_xdsl():
    from xdsl.dialects import arith, builtin

    from cakec.dialects import cake

    c = arith.ConstantOp(builtin.IntegerAttr(3, builtin.i32))
    assert tuple(arith.AddiOp(c, c).operands) == (c.result, c.result)  # an Operation
    with pytest.raises(ValueError, match="Expected 2 operand"):
        cake.WaitOp.build(operands=[c.result])
    with pytest.raises(ValueError, match="non-variadic"):
        cake.WaitOp.build(operands=[c.result, None])
    with pytest.raises(ValueError, match="at most 1"):  # an optional operand of two values
        cake.BarrierOp.build(operands=[[], [], [c.result, c.result]],
                             result_types=[cake.BarrierType()])


@pytest.mark.parametrize("operands", [[[], [], None], [[], [], []], [["r"], ["r", "r"], None],
                                      [["r", "r"], [], ["r"]]])
def test_segment_sizes_as_xdsl_makes_them(operands: list, monkeypatch: pytest.MonkeyPatch):
    import xdsl.irdl.operations as ops
    from xdsl.dialects import builtin

    from cakec.dialects import cake

    role = cake.RoleOp.build(properties={"sym_name": builtin.StringAttr("r"),
                                         "warps": builtin.DenseArrayBase.from_list(
                                             builtin.i64, [0])},
                             result_types=[cake.RoleType()])
    args = [[role.result for _ in a] if isinstance(a, list) else a for a in operands]

    def barrier() -> cake.BarrierOp:
        return cake.BarrierOp.build(operands=args, result_types=[cake.BarrierType()],
                                    properties={"sym_name": builtin.StringAttr("b")})

    def grid() -> cake.GridOp:  # one variadic definition: no segment sizes
        return cake.GridOp.build(operands=[[role.result, role.result]])

    fast, fast_grid = barrier(), grid()
    sizes = fast.properties["operandSegmentSizes"]
    assert barrier().properties["operandSegmentSizes"] is sizes  # the short cut's, shared
    monkeypatch.setattr(ops, "irdl_op_init", ops.irdl_op_init.xdsl)
    xdsl, xdsl_grid = barrier(), grid()
    for a, b in ((fast, xdsl), (fast_grid, xdsl_grid)):
        assert a.properties == b.properties and a.attributes == b.attributes
        assert tuple(a.operands) == tuple(b.operands)
    assert (len(fast.prod), len(fast.cons)) == (len(xdsl.prod), len(xdsl.cons))


def test_operation_init_installed():
    from xdsl.ir import Operation

    assert getattr(Operation.__init__, "_cake_fast", False)


@pytest.mark.parametrize("path", EXAMPLES[:12], ids=lambda p: p.name)
def test_same_ir_as_xdsl_operation_init(path: Path, monkeypatch: pytest.MonkeyPatch):
    from xdsl.ir import Operation

    fast = _ir(path)
    monkeypatch.setattr(Operation, "__init__", Operation.__init__.xdsl)
    assert _ir(path) == fast


def test_operation_init_sets_what_xdsl_sets():
    from xdsl.dialects import arith, builtin
    from xdsl.ir import Block, Operation, Region

    from cakec.dialects import cake

    c = arith.ConstantOp(builtin.IntegerAttr(3, builtin.i32))
    built = []
    for init in (Operation.__init__, Operation.__init__.xdsl):
        op = cake.ForOp.__new__(cake.ForOp)
        init(op, operands=[c.result] * 3, regions=[Region(Block(arg_types=[builtin.i32]))],
             properties={"p": builtin.i32}, attributes={"a": builtin.i32})
        built.append(op)
    fast, xdsl = built
    assert vars(fast).keys() == vars(xdsl).keys()
    for name in ("properties", "attributes", "location", "_successors", "_successor_uses"):
        assert getattr(fast, name) == getattr(xdsl, name), name
    assert [u.index for u in fast._operand_uses] == [0, 1, 2]
    assert [u.operation for u in c.result.uses].count(fast) == 3  # the uses are linked
    assert fast.regions[0].parent is fast and fast.body.block.args[0].type == builtin.i32
    assert [(type(r), r.op, r.index) for r in fast.results] == []
    # a successor goes through xDSL's own setter (the block's uses)
    succ = Block()
    op = Operation.__new__(cake.ForOp)
    Operation.__init__(op, successors=[succ])
    assert op.successors[0] is succ and [u.operation for u in succ.uses] == [op]


def test_attach_checks_what_xdsl_checks():
    from xdsl.dialects import arith, builtin
    from xdsl.ir import Block, Region

    from cakec.dialects import cake

    c = arith.ConstantOp(builtin.IntegerAttr(3, builtin.i32))
    block = Block()
    block.add_op(c)
    assert c.parent is block
    with pytest.raises(ValueError, match="already attached"):
        Block().add_op(c)
    # an op with regions is still refused inside itself (xDSL's own check)
    loop = cake.ForOp.build(operands=[c.result] * 3,
                            regions=[Region(Block(arg_types=[builtin.i32]))])
    with pytest.raises(ValueError, match="contained in the operation"):
        loop.body.block.add_op(loop)
