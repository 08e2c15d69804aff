"""Ahead-of-time use (docs/aot.md): the C launcher generator, depfiles, the CMake package, and
examples/aot built with CMake + nvcc.

No GPU needed: compiled launchers run on a machine without a CUDA driver, where every argument
check still runs (they come before any CUDA call) and a valid call stops at the first CUDA call.
Tests that compile skip cleanly without nvcc (and cmake, for the build tests).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from cakec import __version__, depfile
from cakec.runtime import CakeArgumentError, expr
from cakec.runtime.args import GRID_NAMES, Metadata, bind
from cakec.targets.host import launcher
from test_runtime import gemm_meta

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc")
CMAKE = shutil.which("cmake")
CAKEC = shutil.which("cakec")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")

# The GEMM of docs/abi.md (two TMA operands, a plain output, bindings and a constraint),
# shared with the Python runtime's tests so both launchers are checked on the same metadata.
GEMM = gemm_meta()


def _meta(**changes) -> dict:
    return {**json.loads(json.dumps(GEMM)), **changes}


def _run(cmd: list[str], cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, **kw)


# ---------------------------------------------------------------- generator

def test_header_declares_the_c_api():
    h = launcher.header(GEMM)
    assert "cudaError_t gemm_bf16_launch(\n" in h
    assert ("    void* A, int64_t A_shape0, int64_t A_shape1, int64_t A_stride0, "
            "int64_t A_stride1,\n") in h
    assert "    int32_t M, int32_t N, int32_t K,\n    cudaStream_t stream);" in h
    assert "const char* gemm_bf16_last_error(void);" in h
    assert "gemm_bf16_load" not in h  # only the module variant loads images
    assert re.search(r"A\s+bf16 \[M, K\]\s+\(TMA\)", h) and re.search(r"C\s+bf16 \[M, N\]\n", h)
    assert " * Requires: K % 8 == 0." in h


def test_parameter_names_that_c_or_the_launcher_use_get_an_underscore():
    meta = _meta(params=[{"name": "stream", "kind": "tensor", "rank": 1, "dtype": "f32"},
                         {"name": "int", "kind": "scalar", "dtype": "u64"},
                         {"name": "cake_k", "kind": "scalar", "dtype": "f32"}],
                 shape_bindings={}, constraints=[], grid=["1", "1", "1"], cluster=[1, 1, 1])
    h = launcher.header(meta)
    assert ("void* stream_, int64_t stream__shape0, int64_t stream__stride0,\n"
            "    uint64_t int_, float cake_k_,\n    cudaStream_t stream);") in h


def test_colliding_generated_names_are_a_metadata_error():
    meta = _meta(params=[{"name": "A", "kind": "tensor", "rank": 1, "dtype": "f32"},
                         {"name": "A_shape0", "kind": "scalar", "dtype": "i32"}],
                 shape_bindings={}, constraints=[], grid=["1", "1", "1"], cluster=[1, 1, 1])
    with pytest.raises(ValueError, match="collide"):
        launcher.header(meta)


@pytest.mark.parametrize("fact", GRID_NAMES)
def test_every_grid_fact_of_the_runtime_is_computed(fact):
    code = launcher.cuda_launcher(_meta(grid=[f"min({fact}, 4)", "1", "1"]))
    assert f"d.{fact} = " in code and f"cake_dev.{fact}" in code


def test_launcher_follows_the_kernel_abi():
    code = launcher.cuda_launcher(GEMM)
    assert ("void* cake_args[] = {(void*)&cake_m_A_0, (void*)&cake_t_A, (void*)&cake_m_B_0, "
            "(void*)&cake_t_B, (void*)&cake_t_C, (void*)&M, (void*)&N, (void*)&K};") in code
    assert "cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 197696)" in code
    assert "cudaOccupancyMaxActiveClusters(&clusters, fn, &config)" in code
    assert "if (!(major == 9 && minor == 0))" in code  # sm_90a runs on 9.0 only
    # bf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 (9), 128B swizzle (3), L2 256B (3), zero fill (0)
    assert "&cake_m_A_0, 9, 2, A, cake_t_A.shape, cake_t_A.stride, 2, cake_b_A_0, 3, 3, 0)" in code


def test_constraint_on_a_device_fact_is_refused():
    with pytest.raises(ValueError, match="device facts"):
        launcher.cuda_launcher(_meta(constraints=["M < sm_count"]))


# ---------------------------------------------------------------- depfiles

def test_depfile_escapes_like_gcc():
    text = depfile.render(["out dir/k.cu", "k.h"], ["/src/a#b.cake", "x$y.cake"])
    assert text == "out\\ dir/k.cu k.h: \\\n  /src/a\\#b.cake \\\n  x$$y.cake\n"
    with pytest.raises(ValueError, match="line break"):
        depfile.render(["a\nb"], [])


def test_depfile_is_replaced_whole(tmp_path):
    path = tmp_path / "k.d"
    depfile.write(str(path), ["k.cu"], depfile.dependencies("k.cake"))
    assert path.read_text() == "k.cu: \\\n  k.cake\n"
    assert [p.name for p in tmp_path.iterdir()] == ["k.d"]


# ---------------------------------------------------------------- compiled launchers

def _build(tmp_path: Path, name: str, source: str, *extra: str) -> Path:
    src = tmp_path / f"{name}.cpp"
    src.write_text(source)
    exe = tmp_path / name
    r = _run([NVCC, "-std=c++17", "-x", "c++", str(src), "-o", str(exe), *extra])
    assert r.returncode == 0, r.stderr
    return exe


def _expression_cases() -> list[tuple[str, dict[str, int]]]:
    texts = ["M // 8", "M % 8", "-M // 7", "-M % 7", "M // -3", "M % -3", "cdiv(M, 128)",
             "cdiv(-M, 5)", "min(M, N, 3)", "max(M, -N)", "M < N < 100", "M == N",
             "M != N and N > 0", "M > 5 or not N", "not (M % 2)", "M // (N - N)",
             "cdiv(M, N - N)", "2 * min(cdiv(cdiv(M, 128), 2) * cdiv(N, 256), 66)",
             "M * N - 7 // 2 + -3", "(M + N) % 16 == 0"]
    rng = random.Random(8)
    envs = [{"M": rng.randint(-300, 300), "N": rng.randint(-300, 300)} for _ in range(12)]
    envs += [{"M": 0, "N": 0}, {"M": 129, "N": 257}, {"M": -1, "N": 1}]
    return [(t, e) for t in texts for e in envs]


@needs_nvcc
def test_c_expressions_evaluate_like_the_runtime(tmp_path):
    cases = _expression_cases()
    body = []
    for text, env in cases:
        names = {n: f"INT64_C({v})" for n, v in env.items()}
        body.append(f"  {{ cake_host::Eval cake_ev; const long long v = "
                    f"{launcher._c_expr(text, names)}; "
                    'if (cake_ev.ok) printf("%lld\\n", v); else printf("div0\\n"); }')
    source = ("#include <cstdio>\n" + launcher._support() + "int main() {\n"
              + "\n".join(body) + "\n}\n")
    out = _run([str(_build(tmp_path, "exprs", source))]).stdout.split()
    for (text, env), got in zip(cases, out, strict=True):
        try:
            want = str(expr.evaluate(text, env))
        except expr.ExprError:
            want = "div0"
        assert got == want, f"{text} with {env}"


def _harness() -> str:
    """Reads GEMM arguments (3 x (pointer, 2 extents, 2 strides), M, N, K) per line, calls the
    launcher, prints the status and the message."""
    return """\
#include <cstdio>
#define CAKE_IMPLEMENTATION
#include "gemm_bf16.h"
int main() {
  unsigned long long p[3];
  long long s[3][4], M, N, K;
  while (scanf("%llx %lld %lld %lld %lld %llx %lld %lld %lld %lld %llx %lld %lld %lld %lld "
               "%lld %lld %lld", &p[0], &s[0][0], &s[0][1], &s[0][2], &s[0][3], &p[1],
               &s[1][0], &s[1][1], &s[1][2], &s[1][3], &p[2], &s[2][0], &s[2][1], &s[2][2],
               &s[2][3], &M, &N, &K) == 18) {
    const cudaError_t e = gemm_bf16_launch(
        (void*)p[0], s[0][0], s[0][1], s[0][2], s[0][3], (void*)p[1], s[1][0], s[1][1], s[1][2],
        s[1][3], (void*)p[2], s[2][0], s[2][1], s[2][2], s[2][3], (int)M, (int)N, (int)K, 0);
    printf("%d %s\\n", (int)e, gemm_bf16_last_error());
  }
}
"""


class _Tensor:
    """Just enough of a torch tensor for cakec.runtime.args.bind."""

    def __init__(self, ptr: int, shape: list[int], stride: list[int]):
        self.shape, self._stride, self._ptr = tuple(shape), tuple(stride), ptr
        self.dtype = "torch.bfloat16"
        self.device = SimpleNamespace(type="cuda", index=0)

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr


def _argument_cases(n: int) -> list[list[int]]:
    """GEMM argument lists, mostly near-valid: each tweak breaks (or not) one rule."""
    rng = random.Random(1)
    cases = []
    for _ in range(n):
        M, N, K = (rng.choice([1, 7, 64, 128, 1000, 4096]) for _ in range(3))
        K = rng.choice([K, K - K % 8 or 8])
        shapes = [[M, K], [N, K], [M, N]]
        strides = [[K, 1], [K, 1], [N, 1]]
        ptrs = [0x7f0000000000 + 0x100000 * i for i in range(3)]
        for _ in range(rng.choice([0, 1, 1, 2])):
            t, d = rng.randrange(3), rng.randrange(2)
            what = rng.choice(["ptr", "shape", "stride", "scalar"])
            if what == "ptr":
                ptrs[t] += rng.choice([2, 8, 16, 32])
            elif what == "shape":
                shapes[t][d] = max(1, shapes[t][d] + rng.choice([-1, 1, 8]))
            elif what == "stride":
                strides[t][d] += rng.choice([1, 8, 64, -strides[t][d]])
            else:
                M, N, K = (v + rng.choice([0, 1, 8]) for v in (M, N, K))
        cases.append([ptrs[0], *shapes[0], *strides[0], ptrs[1], *shapes[1], *strides[1],
                      ptrs[2], *shapes[2], *strides[2], M, N, K])
    return cases


def _python_verdict(meta: dict, case: list[int]) -> bool:
    """True if the runtime accepts these arguments."""
    tensors = [_Tensor(case[5 * i], case[5 * i + 1:5 * i + 3], case[5 * i + 3:5 * i + 5])
               for i in range(3)]
    try:
        bind(Metadata.parse(meta), [*tensors, *case[15:]])
    except CakeArgumentError:
        return False
    return True


def _derived_gemm() -> dict:
    """examples/gemm_bf16.cake's own metadata: bindings and shapes derived from its tiles."""
    from cakec import api

    return api.emit(api.load(str(ROOT / "examples" / "gemm_bf16.cake"))).unit.metadata


def _capped_gemm() -> dict:
    meta = _meta()
    meta["params"][1] = {**meta["params"][1], "max_shape": [None, 512]}
    return meta


@needs_nvcc
@pytest.mark.parametrize("make_meta", [lambda: GEMM, _derived_gemm, _capped_gemm],
                         ids=["abi", "derived", "capped"])
def test_c_argument_checks_agree_with_the_runtime(tmp_path, make_meta):
    """The module variant (a header over a kernel image) compiled by the host compiler: on
    every argument list, the C launcher refuses exactly what the Python runtime refuses
    (on the ABI document's metadata, on what the emitter derives for the GEMM example, and
    with a cap on an extent)."""
    meta = make_meta()
    (tmp_path / "gemm_bf16.h").write_text(launcher.module_header(meta, b"not a cubin"))
    exe = _build(tmp_path, "harness", _harness(), f"-I{tmp_path}", "-lcudart")
    cases = _argument_cases(400)
    stdin = "\n".join(" ".join(f"{v:x}" if i % 5 == 0 and i < 15 else str(v)
                               for i, v in enumerate(c)) for c in cases)
    out = _run([str(exe)], input=stdin).stdout.splitlines()
    assert len(out) == len(cases)
    refused = 0
    for case, line in zip(cases, out):
        status, _, message = line.partition(" ")
        if _python_verdict(meta, case):
            # accepted: the launcher went on to its first CUDA call, which has no driver here
            assert status != "1" and message.startswith("gemm_bf16: cudaGetDevice"), (case, line)
        else:
            refused += 1
            assert status == "1" and message.startswith("gemm_bf16: "), (case, line)
    assert 50 < refused < len(cases) - 50  # both verdicts are well represented


@needs_nvcc
def test_c_header_compiles_as_c(tmp_path):
    (tmp_path / "k.h").write_text(launcher.module_header(GEMM, b"x"))
    (tmp_path / "use.c").write_text('#include "k.h"\nint main(void) { return gemm_bf16_launch('
                                    "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) "
                                    "== cudaSuccess; }\n")
    r = _run([NVCC, "-c", str(tmp_path / "use.c"), "-o", str(tmp_path / "use.o"),
              "-Xcompiler", "-std=c99,-Wall,-Werror"])  # nvcc hands .c files to the C compiler
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------- the CLI and the CMake package

def test_cmake_dir_holds_the_package_at_the_cakec_version():
    r = _run([sys.executable, "-c", "from cakec.cli import main; main()", "--cmake-dir"])
    assert r.returncode == 0, r.stderr
    cmake_dir = Path(r.stdout.strip())
    assert (cmake_dir / "CakeConfig.cmake").is_file()
    version = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)',
                        (cmake_dir / "CakeConfigVersion.cmake").read_text())
    assert version and version.group(1) == __version__


GEMM_CAKE = ROOT / "examples" / "gemm_bf16.cake"
APPS = ("gemm_aot_cuda", "gemm_aot_cubin")
needs_build = pytest.mark.skipif(None in (CMAKE, NVCC, CAKEC),
                                 reason="needs cmake, nvcc and cakec on PATH")


@pytest.fixture(scope="module")
def aot(tmp_path_factory) -> SimpleNamespace:
    """examples/aot configured (Ninja where installed) and built once, on a copy of its .cake
    file that the tests may touch."""
    work = tmp_path_factory.mktemp("aot")
    cake = work / "gemm_bf16.cake"
    shutil.copy(GEMM_CAKE, cake)
    cmake_dir = _run([CAKEC, "--cmake-dir"]).stdout.strip()
    ninja = shutil.which("ninja") is not None
    build = work / "build"
    r = _run([CMAKE, "-S", str(ROOT / "examples" / "aot"), "-B", str(build),
              *(["-G", "Ninja"] if ninja else []), f"-DCake_DIR={cmake_dir}",
              f"-DGEMM_CAKE={cake}"])
    assert r.returncode == 0, r.stdout + r.stderr
    state = SimpleNamespace(cake=cake, build=build, ninja=ninja)
    r = _build_aot(state)
    assert r.returncode == 0, r.stdout + r.stderr
    return state


def _build_aot(state: SimpleNamespace) -> subprocess.CompletedProcess:
    return _run([CMAKE, "--build", str(state.build), "-j", "4"])


def _stamps(state: SimpleNamespace) -> dict[str, int]:
    """mtime of every generated and built file."""
    files = [*(state.build / "cake").rglob("*"), *(state.build / a for a in APPS)]
    return {str(f): f.stat().st_mtime_ns for f in files if f.is_file()}


def _work_done(state: SimpleNamespace, output: str) -> list[str]:
    """The build steps a build log reports (Ninja's [i/n] lines, Make's 'Building'/custom
    command lines)."""
    pattern = r"^\[\d+/\d+\] " if state.ninja else r"^(\[ *\d+%\] )?(Building|Linking|cakec:)"
    return [line for line in output.splitlines() if re.match(pattern, line)]


@needs_build
def test_examples_aot_builds_both_launcher_variants(aot):
    for app in APPS:
        assert (aot.build / app).is_file()
    generated = aot.build / "cake"
    assert (generated / "gemm_aot_cuda" / "sm_90a" / "gemm_bf16.cu").is_file()
    assert (generated / "gemm_aot_cubin" / "sm_90a" / "gemm_bf16.cubin").is_file()
    for app in APPS:
        assert "cudaError_t gemm_bf16_launch(" in (generated / app / "sm_90a" /
                                                   "gemm_bf16.h").read_text()


@needs_build
def test_an_unchanged_tree_rebuilds_nothing(aot):
    before = _stamps(aot)
    r = _build_aot(aot)
    assert r.returncode == 0 and _work_done(aot, r.stdout) == [], r.stdout
    assert _stamps(aot) == before


@needs_build
def test_touching_the_cake_file_reruns_cakec_and_relinks(aot):
    before = _stamps(aot)
    time.sleep(1)  # newer than every output even where timestamps have 1 s resolution
    os.utime(aot.cake)
    r = _build_aot(aot)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = _work_done(aot, r.stdout)
    assert sum("cakec: gemm_bf16 for sm_90a" in s for s in steps) == 2, r.stdout
    after = _stamps(aot)
    for app in APPS:
        assert after[str(aot.build / app)] > before[str(aot.build / app)]
    r = _build_aot(aot)
    assert _work_done(aot, r.stdout) == [], r.stdout  # and settles again
