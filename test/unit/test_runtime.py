"""Runtime and NVRTC tests: CPU-only parts always run; @pytest.mark.gpu parts need torch + an
sm_90 GPU and skip cleanly otherwise."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from cakec.runtime import CakeArgumentError, Kernel
from cakec.runtime import expr
from cakec.runtime.args import Metadata, bind, launch_grid, pack_scalar, pack_tensor
from cakec.runtime.launch import _target_runs_on, signature

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "bench" / "proto" / "gemm_bf16_handwritten.cu"


def gemm_meta(cluster: int = 2, stages: int = 4) -> dict:
    """Metadata of bench/proto/gemm_bf16_handwritten.cu (defaults: 2-CTA cluster, 4 stages)."""
    grid = ("min(cdiv(M, 128) * cdiv(N, 256), sm_count)" if cluster == 1 else
            f"{cluster} * min(cdiv(cdiv(M, 128), {cluster}) * cdiv(N, 256), max_clusters)")
    return {
        "kernel": "gemm_bf16", "entry": "gemm_bf16", "target": "sm_90a",
        "block": [384, 1, 1], "grid": [grid, "1", "1"], "cluster": [cluster, 1, 1],
        "dynamic_smem": 1024 + stages * 49152 + 16 * stages,
        "params": [
            {"name": "A", "kind": "tensor", "rank": 2, "dtype": "bf16",
             "tmaps": [{"box": [128, 64], "swizzle": "128b", "oob_fill": "zero"}]},
            {"name": "B", "kind": "tensor", "rank": 2, "dtype": "bf16",
             "tmaps": [{"box": [256 // cluster, 64], "swizzle": "128b", "oob_fill": "zero"}]},
            {"name": "C", "kind": "tensor", "rank": 2, "dtype": "bf16", "tmaps": [],
             "shape": ["M", "N"]},
            {"name": "M", "kind": "scalar", "dtype": "i32"},
            {"name": "N", "kind": "scalar", "dtype": "i32"},
            {"name": "K", "kind": "scalar", "dtype": "i32"}],
        "shape_bindings": {"M": ["A", 0], "K": ["A", 1], "N": ["B", 0]},
        "constraints": ["K % 8 == 0"],
    }


class FakeTensor:
    """Just enough of torch.Tensor for the argument checks."""

    def __init__(self, shape, dtype="torch.bfloat16", stride=None, ptr=0x10000, device="cuda",
                 index=0):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._stride = stride or tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
        self._ptr = ptr
        self.device = SimpleNamespace(type=device, index=index)

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr


def gemm_args(over=(), M=1000, N=1000, K=1000):
    """Valid GEMM arguments for an M x N x K problem, with some replaced by `over`."""
    args = {"A": FakeTensor((M, K)), "B": FakeTensor((N, K), ptr=0x20000),
            "C": FakeTensor((M, N), ptr=0x30000), "M": M, "N": N, "K": K}
    args.update(over)
    return [args[k] for k in "ABCMNK"]


# ---------------------------------------------------------------- expressions

@pytest.mark.parametrize("text,env,want", [
    ("cdiv(M, 128)", {"M": 1000}, 8),
    ("cdiv(M, 128)", {"M": 1024}, 8),
    ("min(cdiv(M, 128) * cdiv(N, 256), sm_count)", {"M": 8192, "N": 8192, "sm_count": 132}, 132),
    ("min(cdiv(M, 128) * cdiv(N, 256), sm_count)", {"M": 1, "N": 17, "sm_count": 132}, 1),
    ("max(1, M // 3 - 7 % 4)", {"M": 9}, 1),
    ("-M + 2 * (M + 1)", {"M": 5}, 7),
    ("K % 8 == 0 and M >= 1", {"K": 16, "M": 1}, 1),
    ("K % 8 == 0 and M >= 1", {"K": 12, "M": 1}, 0),
    ("not K or 0 < K <= 4", {"K": 3}, 1),
])
def test_expr_evaluate(text, env, want):
    assert expr.evaluate(text, env) == want


@pytest.mark.parametrize("text", ["M ** 2", "M / 2", "__import__('os')", "M.x", "1.5",
                                  "M if M else 1", "abs(M)", "cdiv(M, b=2)", "[M]", "M +"])
def test_expr_rejects_everything_else(text):
    with pytest.raises(expr.ExprError):
        expr.evaluate(text, {"M": 1})


def test_expr_runtime_errors():
    with pytest.raises(expr.ExprError, match="unknown name 'Q'"):
        expr.evaluate("Q + 1", {})
    with pytest.raises(expr.ExprError, match="division by zero"):
        expr.evaluate("cdiv(M, N)", {"M": 1, "N": 0})
    with pytest.raises(expr.ExprError, match="division by zero"):
        expr.evaluate("M % N", {"M": 1, "N": 0})
    assert expr.names("min(cdiv(M, 128), sm_count)") == {"M", "sm_count"}


# ---------------------------------------------------------------- metadata

def test_metadata_parses_gemm():
    m = Metadata.parse(gemm_meta())
    assert [p.name for p in m.params] == list("ABCMNK")
    assert m.params[0].tmaps[0].box == (128, 64) and m.params[0].tmaps[0].l2_promotion == "256b"
    assert m.shape_bindings["N"] == ("B", 0)


def test_metadata_pads_box_to_rank():
    meta = gemm_meta()
    meta["params"][0] = {"name": "A", "kind": "tensor", "rank": 3, "dtype": "bf16",
                         "tmaps": [{"box": [128, 64], "swizzle": "128b"}]}
    assert Metadata.parse(meta).params[0].tmaps[0].box == (1, 128, 64)


@pytest.mark.parametrize("edit,match", [
    (lambda m: m["params"][0].update(dtype="bf17"), "dtype"),
    (lambda m: m["params"][0]["tmaps"][0].update(box=[128, 128]), "swizzle span"),
    (lambda m: m["params"][0]["tmaps"][0].update(box=[128, 4]), "multiple of 16"),
    (lambda m: m["params"][0]["tmaps"][0].update(box=[300, 64]), r"\[1, 256\]"),
    (lambda m: m.update(grid=["cdiv(Q, 128)", "1", "1"]), "Q"),
    (lambda m: m.update(grid=["M ** 2", "1", "1"]), "not allowed"),
    (lambda m: m["shape_bindings"].update(M=["A", 2]), "shape_bindings"),
    (lambda m: m["params"][2].update(shape=["M", "Z"]), "Z"),
    (lambda m: m.update(block=[1024, 2, 1]), "1024"),
    (lambda m: m.pop("entry"), "entry"),
])
def test_metadata_rejects(edit, match):
    meta = gemm_meta()
    edit(meta)
    with pytest.raises(ValueError, match=match):
        Metadata.parse(meta)


# ---------------------------------------------------------------- argument checks (fake tensors)

def test_bind_accepts_valid_args():
    bound = bind(Metadata.parse(gemm_meta()), gemm_args())
    assert bound.scalars == {"M": 1000, "N": 1000, "K": 1000}
    assert bound.tensors["A"].shape == (1000, 1000) and bound.device == 0


@pytest.mark.parametrize("over,match", [
    ({"A": FakeTensor((1000, 1000), dtype="torch.float32")}, "'A': expected dtype bf16"),
    ({"B": FakeTensor((1000, 1000, 1))}, "'B': expected rank 2"),
    ({"C": FakeTensor((1000, 1000), device="cpu")}, "'C': tensor is on"),
    ({"A": FakeTensor((1000, 1000), stride=(1, 1000))}, "'A': innermost stride is 1000"),
    ({"A": FakeTensor((1000, 1000), ptr=0x10002)}, "'A': data pointer 0x10002"),
    ({"B": FakeTensor((1000, 1000), stride=(1004, 1))}, "'B': stride of dim 0 is 2008 bytes"),
    ({"A": FakeTensor((1000, 1000), index=1)}, "different devices"),
    ({"M": 999}, "'M' = 999 but A.shape\\[0\\] = 1000"),
    ({"C": FakeTensor((1000, 999))}, "'C' has shape \\[1000, 999\\]; dim 1 must be N = 1000"),
    ({"M": 1.0}, "'M': expected an i32 integer, got float"),
    ({"N": True}, "'N': expected an i32 integer, got bool"),
    ({"K": 2**31}, "'K': 2147483648 is out of range"),
    ({"A": 3}, "'A': expected a tensor, got int"),
])
def test_bind_rejects(over, match):
    with pytest.raises(CakeArgumentError, match=match):
        bind(Metadata.parse(gemm_meta()), gemm_args(over))


def test_untouched_tensor_accepts_any_dtype():
    # A tensor the kernel never reads or writes has no inferred dtype: metadata says `any`.
    raw = gemm_meta()
    raw["params"][2] = {"name": "C", "kind": "tensor", "rank": 2, "dtype": "any", "tmaps": []}
    bound = bind(Metadata.parse(raw), gemm_args({"C": FakeTensor((5, 7), dtype="torch.int8")}))
    assert bound.tensors["C"].shape == (5, 7)
    raw["params"][0]["dtype"] = "any"  # ...but a tensor map needs a real element type
    with pytest.raises(ValueError, match="'any' not one of"):
        Metadata.parse(raw)


def test_bind_constraint_and_arity():
    meta = Metadata.parse(gemm_meta())
    # K = 12 with rows padded to 16 elements: strides pass, only the constraint fails.
    args = gemm_args({"A": FakeTensor((4, 12), stride=(16, 1)),
                      "B": FakeTensor((4, 12), stride=(16, 1), ptr=0x20000)}, M=4, N=4, K=12)
    with pytest.raises(CakeArgumentError, match=r"constraint 'K % 8 == 0' violated \(K = 12\)"):
        bind(meta, args)
    with pytest.raises(CakeArgumentError, match=r"takes 6 arguments \(A, B, C, M, N, K\), got 5"):
        bind(meta, gemm_args()[:5])
    with pytest.raises(CakeArgumentError, match="dimension outside"):
        bind(meta, gemm_args(M=0))


def test_launch_grid():
    dev = {"sm_count": 132, "max_clusters": 66}
    single = Metadata.parse(gemm_meta(cluster=1))
    assert launch_grid(single, {"M": 8192, "N": 8192, "K": 64}, dev) == (132, 1, 1)
    assert launch_grid(single, {"M": 1, "N": 1, "K": 64}, dev) == (1, 1, 1)
    pair = Metadata.parse(gemm_meta())
    assert launch_grid(pair, {"M": 8192, "N": 8192, "K": 64}, dev) == (132, 1, 1)
    assert launch_grid(pair, {"M": 8192, "N": 8192, "K": 64}, {**dev, "max_clusters": 64}) == (128, 1, 1)
    assert launch_grid(pair, {"M": 1, "N": 1, "K": 64}, dev) == (2, 1, 1)
    empty = Metadata.parse({**gemm_meta(), "grid": ["cdiv(M, 128)", "1", "1"]})
    with pytest.raises(CakeArgumentError, match="empty problem"):
        launch_grid(empty, {"M": 0, "N": 1, "K": 8}, dev)
    with pytest.raises(CakeArgumentError, match="not a multiple of the cluster"):
        launch_grid(empty, {"M": 1, "N": 1, "K": 64}, dev)


def test_pack_layout():
    b = bind(Metadata.parse(gemm_meta()), gemm_args(M=3, N=5, K=8))
    blob = pack_tensor(b.tensors["C"])
    assert struct.unpack("<Qqqqq", blob) == (0x30000, 3, 5, 5, 1)
    assert pack_scalar(Metadata.parse(gemm_meta()).params[3], 7) == struct.pack("<i", 7)


def test_target_compatibility():
    assert _target_runs_on("sm_90a", 9, 0)
    assert not _target_runs_on("sm_90a", 10, 0)
    assert _target_runs_on("sm_80", 8, 6) and not _target_runs_on("sm_80", 9, 0)
    assert _target_runs_on("sm_100f", 10, 3) and not _target_runs_on("sm_100a", 10, 3)
    # PTX of a plain target is JIT-compiled by the driver for any later GPU; `a` PTX is not.
    assert _target_runs_on("sm_80", 9, 0, ptx=True) and not _target_runs_on("sm_80", 7, 5, ptx=True)
    assert not _target_runs_on("sm_90a", 10, 0, ptx=True)


class KeyedTensor(FakeTensor):
    """A FakeTensor that also answers get_device(), as torch tensors do (-1 off the GPU)."""

    def get_device(self):
        return self.device.index if self.device.type == "cuda" else -1


def test_signature_tells_apart_everything_the_binding_depends_on():
    """A binding is replayed only for an identical signature: each of pointer, shape,
    strides, dtype, device and scalar value or type changes it."""
    mask = (True, False)
    base = signature(mask, (KeyedTensor((4, 8)), 3))
    assert signature(mask, (KeyedTensor((4, 8)), 3)) == base  # a new object, same facts
    for other in [(KeyedTensor((4, 8), ptr=0x10010), 3), (KeyedTensor((8, 4)), 3),
                  (KeyedTensor((4, 8), stride=(16, 1)), 3),
                  (KeyedTensor((4, 8), dtype="torch.float16"), 3),
                  (KeyedTensor((4, 8), index=1), 3), (KeyedTensor((4, 8), device="cpu"), 3),
                  (KeyedTensor((4, 8)), 4), (KeyedTensor((4, 8)), 3.0)]:
        assert signature(mask, other) != base, other
    assert signature((False,), (True,)) != signature((False,), (1,))  # bool is not an int
    # one GPU: the device index is left out, the rest still tells signatures apart
    one = signature(mask, (KeyedTensor((4, 8)), 3), with_device=False)
    assert one == signature(mask, (KeyedTensor((4, 8), index=1), 3), with_device=False)
    assert one != signature(mask, (KeyedTensor((4, 8), ptr=0x10010), 3), with_device=False)
    with pytest.raises(ValueError):  # the wrong count: the full bind reports it
        signature(mask, (KeyedTensor((4, 8)),))
    with pytest.raises(AttributeError):  # a scalar where a tensor belongs: the full bind reports
        signature(mask, (3, 3))


# ---------------------------------------------------------------- NVRTC

nvrtc_mod = pytest.importorskip("cakec.targets.host.nvrtc")
from cakec.targets.emit.emitter import prelude_source  # noqa: E402


def _have_nvrtc() -> bool:
    try:
        nvrtc_mod.nvrtc_version()
        return True
    except Exception:
        return False


needs_nvrtc = pytest.mark.skipif(not _have_nvrtc(), reason="NVRTC not available")


def proto_source() -> str:
    """As bench/proto/run_proto.py builds it (that module imports torch, so not from there):
    the prelude, the generated wgmma form the prototype issues, the kernel."""
    from cakec.targets.sm90.wgmma_forms import WgmmaForm

    return prelude_source() + WgmmaForm(256, 16, "f32", "bf16", "bf16").source() + PROTO.read_text()


@needs_nvrtc
def test_nvrtc_compiles_prototype(tmp_path, monkeypatch):
    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    cubin = nvrtc_mod.compile_cuda(proto_source(), target="sm_90a", output="cubin")
    assert cubin[:4] == b"\x7fELF"
    ptx = nvrtc_mod.compile_cuda(proto_source(), target="sm_90a", output="ptx").decode()
    assert ".target sm_90a" in ptx
    for needle in ("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "setmaxnreg.inc",
                   "cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "elect.sync"):
        assert needle in ptx, needle
    assert len(list(tmp_path.glob("*.cubin"))) == 1 and len(list(tmp_path.glob("*.ptx"))) == 1


@needs_nvrtc
def test_nvrtc_cache_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    src = prelude_source() + 'extern "C" __global__ void k(int* x) { x[0] = 1; }\n'
    first = nvrtc_mod.compile_cuda(src, target="sm_90a", output="cubin")

    def boom(*a, **k):
        raise AssertionError("cache miss: NVRTC ran again")

    monkeypatch.setattr(nvrtc_mod, "_compile", boom)
    assert nvrtc_mod.compile_cuda(src, target="sm_90a", output="cubin") == first
    with pytest.raises(AssertionError, match="cache miss"):  # different options: a new key
        nvrtc_mod.compile_cuda(src, target="sm_90a", output="cubin", extra_options=["-DX=1"])


@needs_nvrtc
@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "sm_100a", "sm_120a"])
def test_prelude_compiles_everywhere_unused(tmp_path, monkeypatch, target):
    """Helpers a kernel does not call must not break other targets (wgmma is sm_90a-only)."""
    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    src = prelude_source() + (
        'extern "C" __global__ void k(float* x) { x[0] = cake_bf16_to_f32(cake_f32_to_bf16(x[1])); }\n')
    assert nvrtc_mod.compile_cuda(src, target=target, output="cubin")[:4] == b"\x7fELF"


@needs_nvrtc
def test_nvrtc_error_carries_log(tmp_path, monkeypatch):
    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    with pytest.raises(nvrtc_mod.NvrtcError, match="undefined_thing") as info:
        nvrtc_mod.compile_cuda('extern "C" __global__ void k() { undefined_thing(); }',
                               target="sm_90a", output="cubin", name="bad.cu")
    assert "bad.cu" in info.value.log


@needs_nvrtc
def test_ptxas_report_has_no_spills():
    report = nvrtc_mod.ptxas_report(proto_source(), target="sm_90a")
    assert "0 bytes spill stores, 0 bytes spill loads" in report


def test_arch_option():
    assert nvrtc_mod.arch_option("sm_90a", "cubin") == "-arch=sm_90a"
    assert nvrtc_mod.arch_option("sm_90a", "ptx") == "-arch=compute_90a"
    with pytest.raises(ValueError):
        nvrtc_mod.arch_option("gfx90a", "cubin")


# ---------------------------------------------------------------- GPU

def _gpu_sm90() -> bool:
    try:
        import torch
        return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
    except ImportError:
        return False


@pytest.fixture(scope="module")
def gemm_kernel():
    cubin = nvrtc_mod.compile_cuda(proto_source(), target="sm_90a", output="cubin")
    return Kernel(cubin, gemm_meta())


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_sm90(), reason="needs torch and an sm_90 GPU")
@pytest.mark.parametrize("M,N,K", [(256, 512, 128), (1, 300, 24), (130, 257, 72)])
def test_gpu_gemm_matches_torch(gemm_kernel, M, N, K):
    import torch
    A = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    B = torch.randn(N, K, device="cuda").to(torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm_kernel(A, B, C, M, N, K)
    ref = A.float() @ B.float().t()
    assert not torch.isnan(C).any()
    assert float((C.float() - ref).norm() / ref.norm()) < 5e-3


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_sm90(), reason="needs torch and an sm_90 GPU")
def test_gpu_bad_arguments_raise(gemm_kernel):
    import torch
    bf = dict(device="cuda", dtype=torch.bfloat16)
    A, B, C = torch.randn(128, 64, **bf), torch.randn(256, 64, **bf), torch.empty(128, 256, **bf)
    cases = [
        ((A.cpu(), B, C, 128, 256, 64), "'A': tensor is on"),
        ((A.float(), B, C, 128, 256, 64), "'A': expected dtype bf16"),
        ((A, B.t(), C, 128, 256, 64), "'B'"),
        ((torch.randn(128, 72, **bf)[:, 1:65], B, C, 128, 256, 64), "'A'"),
        ((A, B, C, 128, 256, 63), "'K'"),
        ((A, B, C[:, :255], 128, 256, 64), "'C'"),
    ]
    for args, match in cases:
        with pytest.raises(CakeArgumentError, match=match):
            gemm_kernel(*args)
    torch.cuda.synchronize()  # nothing was launched, so nothing can have faulted


def test_replay_launches_a_bound_signature_and_binds_anything_else():
    """The generated steady-state call (launch._replay_fn): a bound signature launches its
    packed parameters on the current stream, or on `stream=` (a handle or an object with
    .cuda_stream); a new signature, a wrong count or a non-tensor goes to the full bind
    (`miss`, which also runs the entry's `check`); a failed launch goes to `relaunch`."""
    from cakec.runtime.launch import _replay_fn

    mask = (True, False)
    t = KeyedTensor((4, 8))
    bound = SimpleNamespace(call=("fn", 1, 1, 1, 128, 1, 1, 0, 0xABC, 0))
    binds = {signature(mask, (t, 3)): bound}
    launched, missed, relaunched = [], [], []

    def launch(*a):
        launched.append(a)
        return (len(launched) == 4,)  # the fourth launch fails

    def miss(args, check):
        missed.append((args, check))
        return bound

    replay = _replay_fn(mask)(binds.get, miss, launch, lambda dev: 1000 + dev,
                              lambda b, h, e: relaunched.append((b, h, e)))

    def call(*args, **kw):  # as the kernel's class calls it: the kernel first
        replay(None, *args, **kw)

    call(KeyedTensor((4, 8)), 3)
    call(t, 3, stream=SimpleNamespace(cuda_stream=7))
    call(t, 3, stream=9)
    assert [a[8] for a in launched] == [1000, 7, 9] and not missed
    assert launched[0] == ("fn", 1, 1, 1, 128, 1, 1, 0, 1000, 0xABC, 0)
    call(t, 3)
    assert relaunched == [(bound, 1000, True)]
    check = object()
    for args in [(KeyedTensor((8, 8)), 3), (t, 4), (t,), (3, 3), (t, 3, 1)]:
        call(*args, check=check)
    assert [len(m[0]) for m in missed] == [2, 2, 1, 2, 3]
    assert missed[2][0] == (t,) and missed[4][0] == (t, 3, 1)  # the arguments as given
    assert all(m[1] is check for m in missed)


def test_replay_remembers_the_last_signature_without_confusing_others():
    """The replay answers a repeat of the last signature without the dict; a different
    signature (bound or not, or a scalar equal in value but not in type) still takes its own
    binding or the miss path, and the last one is found again afterwards."""
    from cakec.runtime.launch import _replay_fn

    mask = (True, False)
    t, u = KeyedTensor((4, 8)), KeyedTensor((8, 8))
    one = SimpleNamespace(call=("f1", 1, 1, 1, 128, 1, 1, 0, 0x1, 0))
    two = SimpleNamespace(call=("f2", 1, 1, 1, 128, 1, 1, 0, 0x2, 0))
    binds = {signature(mask, (t, 3)): one, signature(mask, (u, 3)): two}
    launched, missed = [], []
    replay = _replay_fn(mask)(binds.get, lambda args, check: missed.append(args) or one,
                              lambda *a: launched.append(a[0]) or (0,), lambda dev: 0, None)
    for args in [(t, 3), (t, 3), (u, 3), (t, 3), (u, 3), (u, 3), (t, True), (t, 3.0), (t, 3)]:
        replay(None, *args)
    assert launched == ["f1", "f1", "f2", "f1", "f2", "f2", "f1", "f1", "f1"]
    assert [m[1] for m in missed] == [True, 3.0]  # True and 3.0 are not 3


def test_prepare_opens_only_a_tensor_without_tensor_maps():
    """Kernel.prepare patches one tensor's pointer per launch: a tensor-mapped operand (its
    map encodes the pointer), a scalar or an unknown name is refused before anything binds
    (no GPU needed: the refusal comes first)."""
    kern = Kernel(b"\x7fELF", gemm_meta())
    for names, why in [(("A",), "tensor maps"), (("M",), "tensor maps"),
                       (("Z",), "no parameter 'Z'"), (("C", "Z"), "no parameter 'Z'")]:
        with pytest.raises(ValueError, match=why):
            kern.prepare((), names)
