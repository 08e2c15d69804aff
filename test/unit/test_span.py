"""`Span` (cakec/diagnostics.py) builds its fields into the instance directly (faster than a
frozen dataclass's __init__) and behaves as the frozen dataclass it is: fields, defaults,
keywords, equality, hashing, `replace`, pickling, and no assignment."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from cakec.diagnostics import Span


def test_span_is_its_frozen_dataclass():
    a = Span("k.cake", 3, 5, 3, 9)
    assert (a.file, a.line, a.col, a.end_line, a.end_col) == ("k.cake", 3, 5, 3, 9)
    assert Span("k.cake", 3, 5) == Span(file="k.cake", line=3, col=5, end_line=0, end_col=0)
    assert a == Span("k.cake", 3, 5, 3, 9) and a != Span("k.cake", 3, 5)
    assert hash(a) == hash(Span("k.cake", 3, 5, 3, 9))
    assert dataclasses.astuple(a) == ("k.cake", 3, 5, 3, 9)
    assert dataclasses.replace(a, line=4) == Span("k.cake", 4, 5, 3, 9)
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(Span("f", 1, 2)) == "Span(file='f', line=1, col=2, end_line=0, end_col=0)"
    assert str(a) == "k.cake:3:5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.line = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Span("f", 1)  # type: ignore[call-arg]
