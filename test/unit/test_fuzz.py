"""The robustness fuzzer in CI (issue 17): damaged example and corpus kernels (numbers, names,
operators, deleted/duplicated/swapped lines, characters) through `cakec verify` and `cakec
emit --emit cuda`, for the kernel's own target or a `--target` override, always end in an
answer for the user: exit status 0 or 1, no exception escaping the CLI, no internal error,
and no emit failing after a clean verify. Seeded (derandomized) and bounded; the long run is
`python bench/fuzz.py`."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings, strategies as st

import fuzzing
from cakec.targets.sku import SKUS

KERNEL_TEXTS = {k: k.read_text(encoding="utf-8") for k in fuzzing.KERNELS}


@settings(max_examples=240, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(kernel=st.sampled_from(fuzzing.KERNELS), seed=st.integers(0, 2**32 - 1),
       target=st.sampled_from([None, *SKUS]))
def test_damaged_kernels_get_diagnostics_never_crashes(kernel, seed, target):
    text, ops = fuzzing.mutate(KERNEL_TEXTS[kernel], seed)
    outcome = fuzzing.check(text, target)
    assert outcome.failure is None, (
        f"{kernel.name} seed={seed} target={target} ops={ops}: {outcome.failure}\n{text}")


def test_every_kernel_verifies_and_emits_undamaged():
    # The oracle's baseline: zero false positives, and verify implies emit, on every kernel.
    for kernel, text in KERNEL_TEXTS.items():
        outcome = fuzzing.check(text, None)
        assert outcome.verified and outcome.failure is None, (kernel.name, outcome.failure)


def test_every_operator_damages_every_kernel():
    for name, op in fuzzing.OPERATORS.items():
        for kernel, text in KERNEL_TEXTS.items():
            assert any(op(text, random.Random(s)) not in (None, text) for s in range(5)), (
                name, kernel.name)


def test_the_oracle_sees_an_internal_error(monkeypatch):
    # A fault injected into the frontend must fail the check: the oracle can fail.
    from cakec.frontend import ir_builder

    monkeypatch.setattr(ir_builder.Frontend, "build", lambda self, tree: {}["boom"])
    outcome = fuzzing.check(KERNEL_TEXTS[fuzzing.KERNELS[0]], None)
    assert outcome.failure is not None and "CAKE-I001" in outcome.failure


def test_the_oracle_sees_an_emit_that_fails_after_verify(monkeypatch):
    from cakec import api
    from cakec.driver import verify_source

    monkeypatch.setattr(api, "emit", lambda source, target=None: api.Emitted(
        verify_source(source, target), None))
    outcome = fuzzing.check(KERNEL_TEXTS[fuzzing.KERNELS[0]], None)
    assert outcome.failure is not None and outcome.failure.startswith("emit")
