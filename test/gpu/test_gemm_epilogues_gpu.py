"""The fused-epilogue GEMM examples on an sm_90a GPU (issue 13): examples/gemm_bias_gelu.cake,
gemm_fp8.cake (ping-pong schedules) and gemm_residual.cake, and the cooperative schedules of
the first two (gemm_bias_gelu_cooperative.cake, gemm_fp8_cooperative.cake, judged by the same
modules), against the float32 references of their sibling .py
modules, at every shape those list (the LLM shapes and tails on every side, K not a multiple
of the stage depth), on several fresh random inputs each. C is a window of a NaN-filled
buffer: NaN left inside C is an element never written, anything but NaN in its guard rows
and columns a write outside C. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_gemm_epilogues_gpu.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["gemm_bias_gelu", "gemm_fp8", "gemm_residual"]
#: Other schedules of an example: (the example whose .py judges it, the schedule's file stem)
SCHEDULES = [(name, name) for name in NAMES] + [
    ("gemm_bias_gelu", "gemm_bias_gelu_cooperative"), ("gemm_fp8", "gemm_fp8_cooperative")]
SEEDS = [1, 2, 3]  # fresh inputs per run of a shape (seeded so a failure reproduces)

_loaded: dict[str, tuple] = {}


def _example(name: str, schedule: str) -> tuple:
    """(example `name`'s sibling module, the compiled `schedule`), once per process."""
    if schedule not in _loaded:
        import cakec
        from cakec.api import load_example

        _loaded[schedule] = (load_example(str(EXAMPLES / f"{name}.cake")),
                             cakec.compile(str(EXAMPLES / f"{schedule}.cake"),
                                           target="sm_90a"))
    return _loaded[schedule]


def _cases() -> list:
    from cakec.api import load_example

    return [pytest.param(name, schedule, shape, seed,
                         id=f"{schedule}-{shape['M']}x{shape['N']}x{shape['K']}-s{seed}")
            for name, schedule in SCHEDULES
            for shape in load_example(str(EXAMPLES / f"{name}.cake")).shapes
            for seed in SEEDS]


@pytest.mark.parametrize("name,schedule,shape,seed", _cases())
def test_matches_reference(name, schedule, shape, seed):
    module, kernel = _example(name, schedule)
    inputs = list(module.make_inputs(shape, "cuda", seed=seed * 7919 + shape["M"]))
    c_at = [p.name for p in kernel.meta.params].index("C")
    m, n = inputs[c_at].shape
    buf = torch.full((m + 2, n + 4), float("nan"), device="cuda", dtype=inputs[c_at].dtype)
    c = inputs[c_at] = buf[1:m + 1, 2:n + 2]
    kernel(*inputs)
    torch.cuda.synchronize()
    assert int(torch.isnan(c).sum()) == 0, "some elements of C were never written"
    guard = buf.clone()
    guard[1:m + 1, 2:n + 2] = float("nan")
    assert int((~torch.isnan(guard)).sum()) == 0, "the kernel wrote outside C"
    ref = module.reference(inputs).float()
    assert float(ref.norm()) > 0, "a zero reference cannot fail"
    err = float((c.float() - ref).norm() / ref.norm())
    assert err < module.tolerance, f"relative error {err:.2e} (tolerance {module.tolerance})"
