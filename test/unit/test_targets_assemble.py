"""Every example assembles for every target it declares (issue 6 acceptance, no GPU needed).

For each (example, target): the emitted CUDA builds with NVRTC to PTX and to a cubin; the PTX
carries the lowest `.version` its instructions need and ptxas 13.0 (which knows nothing newer
than 9.0) assembles it; the sm_100a/103a cubins of the tcgen05 examples (gemm_tcgen05,
kmeans_assign_sm100) contain the tcgen05 MMA (UTC*MMA) and TMEM loads (LDTM) in their SASS (cuobjdump + nvdisasm from `pip install nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm`; skipped when absent).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import shared_builds
from kernel_files import EXAMPLES

from cakec import api
from cakec.targets.host.ptx_version import families_used, lower_ptx_version, lowest_version

ROOT = Path(__file__).resolve().parents[2]
#: Targets an example is also built for beyond the one its decorator names.
ALSO = {"gemm_tcgen05": ("sm_103a",), "seed_fragment": ("sm_103a",),
        "gemm_bf16": ("sm_100a", "sm_103a"),  # a register accumulator: mma.sync on Blackwell
        "gemm_sm80": ("sm_89", "sm_120a", "sm_121a", "sm_100a", "sm_103a"),
        "kmeans_assign_sm100": ("sm_103a",),
        "kmeans_csq": ("sm_100a", "sm_103a")}  # tile ops in the row-per-thread layout
#: Known not to emit yet, with the reason (a strict xfail: fixing it must update this table).
BLOCKED: dict[str, str] = {}
#: SASS the tcgen05 path must produce on sm_100a / sm_103a.
TCGEN05_SASS = (r"\bUTC[A-Z]*MMA", r"\bLDTM\b")


def _declared_target(path: Path) -> str:
    m = re.search(r'@cake\.schedule\(target="(sm_\w+)"', path.read_text())
    return m.group(1) if m else "sm_100a"  # the language's default target


def _cases() -> list:
    cases = []
    for path in EXAMPLES:
        for target in (_declared_target(path), *ALSO.get(path.stem, ())):
            marks = ([pytest.mark.xfail(reason=BLOCKED[path.stem], strict=True)]
                     if path.stem in BLOCKED else [])
            cases.append(pytest.param(path, target, marks=marks, id=f"{path.relative_to(ROOT / 'examples').with_suffix('')}-{target}"))
    return cases


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia.cu13  # the pip packages' bin/ directory
    except ImportError:
        return None
    for base in nvidia.cu13.__path__:
        candidate = Path(base) / "bin" / name
        if candidate.exists():
            return str(candidate)
    return None


@pytest.mark.parametrize("path, target", _cases())
def test_example_assembles(path: Path, target: str) -> None:
    unit = shared_builds.unit(path, target)
    ptx = api.binary(unit, "ptx").decode()
    version = re.search(r"^\.version (\d+)\.(\d+)$", ptx, re.MULTILINE)
    assert version is not None
    assert (int(version.group(1)), int(version.group(2))) == lowest_version(ptx, target)
    # One NVRTC cubin build with ptxas's report, shared with the modules that read the
    # report; it leaves the cubin in NVRTC's cache, where `api.binary` must find it.
    cubin, _ = shared_builds.cubin_and_report(unit.source, target)
    assert cubin[:4] == b"\x7fELF"
    assert api.binary(unit, "cubin") == cubin
    ptxas = _tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not found")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        run = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", os.devnull],
                             capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("target", ["sm_100a", "sm_103a"])
@pytest.mark.parametrize("example", ["gemm_tcgen05", "kmeans_assign_sm100"])
def test_tcgen05_sass(example: str, target: str) -> None:
    cuobjdump, nvdisasm = _tool("cuobjdump"), _tool("nvdisasm")
    if cuobjdump is None or nvdisasm is None:
        pytest.skip("cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump "
                    "nvidia-cuda-nvdisasm)")
    cubin = api.binary(shared_builds.unit(ROOT / "examples" / f"{example}.cake", target), "cubin")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        env = dict(os.environ, PATH=f"{Path(nvdisasm).parent}{os.pathsep}{os.environ['PATH']}")
        sass = subprocess.run([cuobjdump, "-sass", str(path)], capture_output=True, text=True,
                              env=env, check=True).stdout
    for pattern in TCGEN05_SASS:
        assert re.search(pattern, sass), f"no {pattern} in the {example} {target} SASS"


def test_version_is_lowered_never_raised() -> None:
    ptx = b".version 9.5\n.target sm_100a\n\ttcgen05.alloc.cta_group::1.sync.aligned\n"
    assert lower_ptx_version(ptx, "sm_100a").startswith(b".version 8.6\n")
    old = b".version 8.0\n.target sm_100a\n"
    assert lower_ptx_version(old, "sm_100a") == old  # below the target minimum: keep as is


def test_families_read_off_the_instructions() -> None:
    ptx = ("cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;\n"
           "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n"
           "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};\n"
           "mbarrier.test_wait.parity.shared.b64 %p1, [%r1], %r2;\n")
    assert families_used(ptx) == {"cp_async", "ldmatrix", "mma_sync", "mbarrier"}
    assert lowest_version(ptx, "sm_80") == (7, 1)
    assert lowest_version(ptx + "mbarrier.init.shared::cta.b64 [%r1], 1;\n", "sm_80") == (7, 8)


def test_two_cta_mma_is_reported_not_emitted() -> None:
    """cta_group::2 needs clusters and paired CTAs the emitter does not build yet: a clear
    CAKE-H100 at the MMA, never wrong code (forced here: the frontend caps TMEM at 128 rows)."""
    from xdsl.dialects.builtin import StringAttr

    from cakec.dialects.cake import MmaOp
    from cakec.driver import verify_source
    from cakec.targets.codegen import emit_cuda

    comp = verify_source(api.load(str(ROOT / "examples" / "gemm_tcgen05.cake")), None)
    assert comp.ok and comp.module is not None
    mma = next(op for op in comp.module.walk() if isinstance(op, MmaOp))
    mma.attributes["cake.instr"] = StringAttr("tcgen05.mma.cta_group::2.kind::f16")
    assert emit_cuda(comp.module, comp.ctx, comp.sources) is None
    diag = comp.sink.diagnostics[-1]
    assert diag.code == "CAKE-H100" and "cta_group::2" in diag.message
    assert diag.span is not None and diag.span.line == 52
