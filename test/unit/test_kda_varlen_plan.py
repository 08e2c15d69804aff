"""The variable-length KDA prefill's host planning (cakec/kernels/kda_varlen.py, loaded by path:
it needs no torch): every sequence in exactly one group, lone sequences unpadded, padded
groups within one class of chunk count, the longest sequences alone, streams in range and
the longest work launched first; the padded groups' runs cover their tokens exactly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

_PATH = Path(__file__).resolve().parents[2] / "cakec" / "kernels" / "kda_varlen.py"
_spec = importlib.util.spec_from_file_location("kda_varlen", _PATH)
kv = importlib.util.module_from_spec(_spec)
sys.modules["kda_varlen"] = kv  # dataclasses look their module up
_spec.loader.exec_module(kv)  # type: ignore[union-attr]

lengths_st = st.lists(st.one_of(st.integers(0, 200), st.integers(0, 9000)), min_size=1,
                      max_size=60)


def _cu(lengths):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return cu


@settings(max_examples=300, deadline=None)
@given(lengths_st, st.integers(0, 10), st.integers(1, 16), st.integers(1, 6))
def test_plan_partitions_the_batch(lengths, own_max, own_min_chunks, slots):
    groups = kv.plan_groups(lengths, own_max=own_max, own_min_chunks=own_min_chunks,
                            slots=slots)
    seen = [i for gr in groups for i in gr.seqs]
    assert sorted(seen) == [i for i, n in enumerate(lengths) if n > 0]
    for gr in groups:
        lens = [lengths[i] for i in gr.seqs]
        assert gr.t == max(lens) == lens[0]               # longest first, padded to it
        assert lens == sorted(lens, reverse=True)
        assert 0 <= gr.slot < slots
        if len(gr.seqs) > 1:                               # padded: one class of chunk count
            assert len({kv.chunks(n).bit_length() for n in lens}) == 1
            assert kv.chunks(gr.t) < 2 * kv.chunks(lens[-1])
    assert [gr.t for gr in groups] == sorted((gr.t for gr in groups), reverse=True)
    classes = [kv.chunks(gr.t).bit_length() for gr in groups if len(gr.seqs) > 1]
    assert len(classes) == len(set(classes))              # one padded group per class


@settings(max_examples=200, deadline=None)
@given(lengths_st)
def test_plan_runs_the_longest_alone(lengths):
    groups = kv.plan_groups(lengths)
    alone = {gr.seqs[0] for gr in groups if len(gr.seqs) == 1}
    longest = sorted((i for i, n in enumerate(lengths) if n > 0), key=lambda i: -lengths[i])
    for i in longest[:kv.OWN_MAX]:
        if kv.chunks(lengths[i]) >= kv.OWN_MIN_CHUNKS:
            assert i in alone


def test_plan_of_the_bench_row():
    """bench/kda.py's varlen row: every sequence alone (no copy), the longest first, over
    the slots by chunk steps (4000 and 3000 tokens on slots of their own)."""
    groups = kv.plan_groups([3000, 17, 1024, 4000, 129])
    assert [(gr.seqs, gr.t) for gr in groups] == [((3,), 4000), ((0,), 3000), ((2,), 1024),
                                                   ((4,), 129), ((1,), 17)]
    assert [gr.slot for gr in groups] == [0, 1, 2, 3, 3]


def test_plan_pads_many_short_sequences_by_class():
    lengths = [100] * 10 + [30] * 5 + [70, 250]
    groups = kv.plan_groups(lengths)
    by_t = {gr.t: gr.seqs for gr in groups}
    assert by_t == {250: (16,), 100: tuple(range(10)) + (15,), 30: tuple(range(10, 15))}


@settings(max_examples=200, deadline=None)
@given(lengths_st)
def test_runs_cover_each_padded_group(lengths):
    cu = _cu(lengths)
    for gr in kv.plan_groups(lengths):
        runs = kv.group_runs(cu, gr)
        assert [n for _, _, n in runs] == [lengths[i] for i in gr.seqs]
        assert [p for p, _, _ in runs] == [cu[i] for i in gr.seqs]
        for j, (_, slot, n) in enumerate(runs):             # row j of the [n, t] batch
            assert slot == j * gr.t and n <= gr.t
