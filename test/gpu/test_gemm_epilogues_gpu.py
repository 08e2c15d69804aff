"""The fused-epilogue GEMM examples on an sm_90a GPU (issue 13): examples/gemm_bias_gelu.cake,
gemm_fp8.cake and gemm_residual.cake (ping-pong schedules), their cooperative schedules
(gemm_bias_gelu_cooperative.cake, gemm_fp8_cooperative.cake, gemm_residual_cooperative.cake:
R from global memory, any N) and the SMEM-staged ones (gemm_bias_gelu_staged.cake,
gemm_fp8_staged.cake, gemm_residual_staged.cake), judged by the same modules, against the float32
references of their sibling .py modules, at every shape those list (the LLM shapes and tails
on every side, K not a multiple of the stage depth), on several fresh random inputs each. C is
a window of a NaN-filled buffer (16-byte aligned rows, as a TMA store needs): NaN left inside
C is an element never written, anything but NaN in its guard rows and columns a write outside
C. The library op `cakec.kernels.gemm_bias_gelu` is checked the same way at those shapes (both
of its schedules taken), into a given `out` and with bad arguments. Skipped without torch or
an sm_90 GPU.

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
    ("gemm_bias_gelu", "gemm_bias_gelu_cooperative"), ("gemm_bias_gelu", "gemm_bias_gelu_staged"),
    ("gemm_fp8", "gemm_fp8_cooperative"), ("gemm_residual", "gemm_residual_cooperative"),
    ("gemm_residual", "gemm_residual_staged"), ("gemm_fp8", "gemm_fp8_staged")]
GUARD = 8  # columns of NaN on each side of C: 16 bytes of bf16, so C's rows stay aligned
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
            for shape in load_example(str(EXAMPLES / f"{schedule}.cake")).shapes
            for seed in SEEDS]


@pytest.mark.parametrize("name,schedule,shape,seed", _cases())
def test_matches_reference(name, schedule, shape, seed):
    module, kernel = _example(name, schedule)
    inputs = list(module.make_inputs(shape, "cuda", seed=seed * 7919 + shape["M"]))
    c_at = [p.name for p in kernel.meta.params].index("C")
    m, n = inputs[c_at].shape
    buf, c = _guarded(m, n, inputs[c_at].dtype)
    inputs[c_at] = c
    kernel(*inputs)
    _check_written(buf, c, module.reference(inputs).float(), module.tolerance)


def _guarded(m: int, n: int, dtype) -> tuple:
    """A NaN buffer with GUARD rows/columns around an [m, n] window (the C a kernel writes),
    the window 16-byte aligned with rows a multiple of 16 bytes apart when n % 8 == 0."""
    buf = torch.full((m + 2, n + 2 * GUARD), float("nan"), device="cuda", dtype=dtype)
    return buf, buf[1:m + 1, GUARD:n + GUARD]


def _check_written(buf, c, ref, tolerance: float) -> None:
    torch.cuda.synchronize()
    m, n = c.shape
    assert int(torch.isnan(c).sum()) == 0, "some elements of C were never written"
    guard = buf.clone()
    guard[1:m + 1, GUARD:n + GUARD] = float("nan")
    assert int((~torch.isnan(guard)).sum()) == 0, "the kernel wrote outside C"
    assert float(ref.norm()) > 0, "a zero reference cannot fail"
    err = float((c.float() - ref).norm() / ref.norm())
    assert err < tolerance, f"relative error {err:.2e} (tolerance {tolerance})"


def _op_cases() -> list:
    from cakec.api import load_example

    return [pytest.param(shape, id=f"{shape['M']}x{shape['N']}x{shape['K']}")
            for shape in load_example(str(EXAMPLES / "gemm_bias_gelu.cake")).shapes]


@pytest.mark.parametrize("shape", _op_cases())
def test_op_matches_reference(shape):
    """cakec.kernels.gemm_bias_gelu, allocating C and into a given `out`, at every shape of
    the example; the schedule it took is the one `schedule_of` names."""
    from cakec.kernels import epilogue

    module, _ = _example("gemm_bias_gelu", "gemm_bias_gelu")
    a, b, bias, c, m, n, k = module.make_inputs(shape, "cuda", seed=shape["M"] * 31 + shape["N"])
    ref = module.reference((a, b, bias)).float()
    got = epilogue.gemm_bias_gelu(a, b, bias[0])
    torch.cuda.synchronize()
    err = float((got.float() - ref).norm() / ref.norm())
    assert got.shape == (m, n) and err < module.tolerance, f"relative error {err:.2e}"
    buf, out = _guarded(m, n, torch.bfloat16)
    assert epilogue.gemm_bias_gelu(a, b, bias[0].to(torch.bfloat16), out=out) is out
    _check_written(buf, out, ref, module.tolerance)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    want = epilogue.schedule_of(m, n, sms, n % 8 == 0)
    assert epilogue._plans[(m, n, k, 0, n % 8 == 0)] is epilogue.build.kernel(want, "sm_90a")


def test_op_takes_both_schedules():
    """The example's shapes exercise both kernels of the op (else the test above would
    check one of them only)."""
    from cakec.api import load_example
    from cakec.kernels import epilogue

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = load_example(str(EXAMPLES / "gemm_bias_gelu.cake")).shapes
    assert {epilogue.schedule_of(s["M"], s["N"], sms, s["N"] % 8 == 0) for s in shapes} == {
        epilogue.STAGED, epilogue.DIRECT}


def test_op_empty_k_is_gelu_of_bias():
    from cakec.kernels import gemm_bias_gelu

    a = torch.empty(3, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(5, 0, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(5, device="cuda")
    want = torch.nn.functional.gelu(bias, approximate="tanh").expand(3, 5)
    assert torch.allclose(gemm_bias_gelu(a, b, bias).float(), want, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("what", ["bias shape", "a dtype", "k", "out shape", "bias int"])
def test_op_refuses_bad_arguments(what):
    from cakec.kernels import gemm_bias_gelu
    from cakec.runtime import CakeArgumentError

    a = torch.randn(64, 64, device="cuda").to(torch.bfloat16)
    b = torch.randn(32, 64, device="cuda").to(torch.bfloat16)
    bias, out = torch.randn(32, device="cuda"), None
    if what == "bias shape":
        bias = torch.randn(33, device="cuda")
    elif what == "a dtype":
        a = a.float()
    elif what == "k":
        b = torch.randn(32, 72, device="cuda").to(torch.bfloat16)
    elif what == "out shape":
        out = torch.empty(64, 31, device="cuda", dtype=torch.bfloat16)
    else:
        bias = torch.ones(32, device="cuda", dtype=torch.int32)
    with pytest.raises(CakeArgumentError, match="gemm_bias_gelu"):
        gemm_bias_gelu(a, b, bias, out=out)
