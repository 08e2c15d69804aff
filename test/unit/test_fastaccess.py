"""cakec/fastaccess.py: a named operand, result, region or successor read through the
short-cut accessors is what xDSL's own accessors give, on every op of the examples' IR, and
segment sizes are unpacked once per attribute."""

from __future__ import annotations

from pathlib import Path

import pytest

import cakec  # noqa: F401  (installs the hook before xDSL is imported here)
from cakec.driver import SourceFile, build

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.cake"))


def test_installed():
    import xdsl.irdl.operations as ops

    assert hasattr(vars(ops.BeforeVariadicSingleAccessor)["__get__"], "xdsl")
    assert hasattr(vars(ops.BaseAttrAccessor)["__get__"], "xdsl")


@pytest.mark.parametrize("path", EXAMPLES[:12], ids=lambda p: p.name)
def test_same_values_as_xdsl_accessor(path: Path):
    import xdsl.irdl.operations as ops

    comp = build(SourceFile(str(path), path.read_text()))
    assert comp.module is not None, comp.sink.diagnostics
    xdsl_get = vars(ops.BeforeVariadicSingleAccessor)["__get__"].xdsl
    xdsl_sized = vars(ops.BaseAttrAccessor)["__get__"].xdsl
    kinds, sized = set(), set()
    for op in comp.module.walk():
        for klass in type(op).__mro__:
            for name, acc in vars(klass).items():
                if type(acc) is ops.BeforeVariadicSingleAccessor:
                    assert getattr(op, name) is xdsl_get(acc, op, type(op)), name
                    kinds.add(acc.construct)
                elif isinstance(acc, ops.BaseAttrAccessor):
                    got, want = getattr(op, name), xdsl_sized(acc, op, type(op))
                    assert got == want and type(got) is type(want), name
                    sized.add(type(acc))
    assert {ops.VarIRConstruct.OPERAND, ops.VarIRConstruct.RESULT, ops.VarIRConstruct.REGION} <= kinds
    assert sized


def test_writes_stay_xdsl():
    from xdsl.dialects import builtin

    from cakec.dialects import cake

    import xdsl.irdl.operations as ops

    acc = vars(cake.WaitOp)["barrier"]
    assert isinstance(acc, ops.BeforeVariadicSingleAccessor)
    bar = cake.BarrierOp.build(operands=[[], [], None], result_types=[cake.BarrierType()],
                               properties={"sym_name": builtin.StringAttr("b")})
    with pytest.raises(NotImplementedError):
        bar.result = bar.result  # type: ignore[misc]


def test_segment_sizes_unpacked_once_per_attribute(monkeypatch: pytest.MonkeyPatch):
    from xdsl.dialects import builtin

    from cakec import fastaccess

    monkeypatch.setattr(fastaccess, "_SEGMENTS", {})
    calls: list[object] = []
    real = builtin.DenseArrayBase.get_values
    monkeypatch.setattr(builtin.DenseArrayBase, "get_values",
                        lambda self: calls.append(self) or real(self))
    a = builtin.DenseArrayBase.from_list(builtin.i32, [1, 0, 2])
    b = builtin.DenseArrayBase.from_list(builtin.i32, [3, 4])
    assert fastaccess._segments(a) == (1, 0, 2) == fastaccess._segments(a)
    assert fastaccess._segments(b) == (3, 4)
    assert calls == [a, b]
    # an entry whose id another attribute now has (the first one freed) is not taken for it
    fastaccess._SEGMENTS[id(b)] = (a, (1, 0, 2))
    assert fastaccess._segments(b) == (3, 4)
    monkeypatch.setattr(fastaccess, "_MAX_SEGMENTS", 2)
    fastaccess._segments(builtin.DenseArrayBase.from_list(builtin.i32, [5]))
    assert len(fastaccess._SEGMENTS) == 1
