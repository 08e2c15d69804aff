"""Properties of the protocol model over random ring pipelines: every well-formed ring
verifies for any depth and trip count, its derived parities follow the lap formula, and each
classic mistake is rejected with its own code whatever the depth or trip count."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from cakec.dialects.cake import KernelOp
from cakec.driver import build, read_source
from cakec.passes.protocol import exprs
from cakec.passes.protocol.accounting import first_wait_free
from cakec.passes.protocol.model import Kernel
from cakec.passes.protocol.parity import parities
from test_protocol import codes, ring as protocol_ring


def ring(stages: int, trips: str) -> str:
    """The corpus ring of test_protocol with both roles looping `trips` times."""
    loop = f"lm.range(0, {trips})"
    return protocol_ring(load_loop=loop, mma_loop=loop, stages=stages)


STAGES = st.integers(1, 6)
TRIPS = st.one_of(st.integers(1, 40).map(str), st.just("lm.max(K, 1)"),
                  st.just("lm.max(lm.cdiv(K, 128), 1)"))

MUTATIONS = {
    # missing full wait: the MMA reads a stage before its load completed
    "raw": (lambda s, t: t.replace("            lm.wait(full, stage=k % {s})\n".format(s=s), ""),
            "CAKE-S002"),
    # plain arrive as the release: the MMA may still read the stage
    "release": (lambda s, t: t.replace("lm.commit(empty", "lm.arrive(empty"), "CAKE-S004"),
    # first MMA accumulates
    "uninit": (lambda s, t: t.replace("init=(k == 0)", "init=(k == 1)"), "CAKE-S012"),
    # init_count off by one
    "arrivals": (lambda s, t: t.replace("init_count=2", "init_count=1"), "CAKE-S007"),
}


@settings(max_examples=25, deadline=None)
@given(STAGES, TRIPS)
def test_well_formed_rings_verify(stages, trips):
    assert codes(ring(stages, trips)) == []


@settings(max_examples=25, deadline=None)
@given(STAGES, st.integers(1, 40))
def test_static_parities_follow_the_laps(stages, trips):
    comp = build(read_source("r.cake", ring(stages, str(trips))))
    k = Kernel.build(next(o for o in comp.module.ops if isinstance(o, KernelOp)))
    got = {w.barrier.owner.sym_name.data: p for w, p in parities(k, first_wait_free(k)).items()}
    laps = [(i // stages) & 1 for i in range(trips)]
    assert got["full"] == laps
    assert got["empty"] == [p ^ 1 for p in laps]


@settings(max_examples=40, deadline=None)
@given(STAGES, TRIPS, st.sampled_from(sorted(MUTATIONS)))
def test_each_mistake_has_its_code(stages, trips, name):
    mutate, code = MUTATIONS[name]
    text = ring(stages, trips)
    mutant = mutate(stages, text)
    assert mutant != text
    got = codes(mutant)
    if name == "release" and trips.isdigit() and int(trips) <= stages:
        assert got == []  # the ring never laps: no stage is refilled after its release
        return
    assert code in got, got


@settings(max_examples=20, deadline=None)
@given(STAGES, st.integers(1, 30))
def test_missing_empty_wait_races_once_the_ring_laps(stages, trips):
    mutant = ring(stages, str(trips)).replace(
        "            lm.wait(empty, stage=k % {s})\n".format(s=stages), "")
    got = codes(mutant)
    assert got == (["CAKE-S003"] if trips > stages else []), got


# ---- compiled scalar expressions ------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(exprs._BINARY_CODE)), st.integers(-2**33, 2**33),
       st.integers(-70, 70))
def test_compiled_binary_source_agrees_with_the_closure(name: str, a: int, b: int) -> None:
    """The source a hot stage expression is compiled to (exprs.py `_BINARY_CODE`, e.g. `%`
    with its fast path for a non-negative dividend) gives what the closure gives, on every
    sign and on a zero divisor (None)."""
    closure = next(f for n, f in exprs._BINARY.values() if n == name)
    template, nullable = exprs._BINARY_CODE[name]
    compiled = eval(f"lambda a, b: {template.format(a='a', b='b')}", exprs.Exprs().ns)
    want = closure(a, b)
    assert compiled(a, b) == want
    assert nullable or want is not None
