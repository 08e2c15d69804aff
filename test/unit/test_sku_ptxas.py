"""`cakec targets` and the docs agree with what ptxas accepts.

One tiny raw-PTX kernel per instruction family is assembled for every target; ptxas must accept it
exactly where the capability table (targets/sku.py) says the target has the family. The family's
minimum `.version` is checked too: the kernel assembles at `ptx_version_for(sku, [family])`, and,
where the family raises the target's minimum, not one version lower.
"""

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cakec.targets.sku import FAMILIES, PTX_MIN_VERSION, SKUS, Sku, ptx_version_for

Version = tuple[int, int]
NEWEST = (9, 0)  # the newest .version ptxas 13.0 accepts
PTX_VERSIONS: list[Version] = [(7, m) for m in range(9)] + [(8, m) for m in range(9)] + [NEWEST]


def _find_ptxas() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    fallback = Path("/usr/local/cuda/bin/ptxas")
    return str(fallback) if fallback.exists() else None


PTXAS = _find_ptxas()

MMA_F32 = "{%f0, %f1, %f2, %f3}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%f4, %f5, %f6, %f7}"
MMA_S32 = "{%r11, %r12, %r13, %r14}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12, %r13, %r14}"
TMA_LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"

# Every kernel sees: %rd1 a generic global address (also used as the tensor map), %r1 the shared
# address of an 8-byte mbarrier, %r2 a 1024-aligned shared buffer, %r3/%r4 zero coordinates, %p1 a
# predicate. Other registers are left undefined; ptxas checks them only for type and declaration.
KERNELS: dict[str, str] = {
    "mma_sync": f"""
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {MMA_F32};
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {MMA_F32};
  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {MMA_F32};
  mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {MMA_S32};
""",
    "mma_sync_fp8": f"""
  mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {MMA_F32};
  mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 {MMA_F32};
""",
    # An FP4 operand: ptxas 13.0 also takes .kind::f8f6f4 with two fp8 operands on sm_100a/103a, so
    # only FP6/FP4 tells the consumer-Blackwell family apart.
    "mma_sync_f8f6f4": f"""
  mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e2m1.f32 {MMA_F32};
""",
    "ldmatrix": """
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r5, %r6, %r7, %r8}, [%r2];
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r5, %r6}, [%r2];
""",
    "cp_async": """
  cp.async.cg.shared.global [%r2], [%rd1], 16;
  cp.async.ca.shared.global [%r2], [%rd1], 4, %r3;
  cp.async.commit_group;
  cp.async.wait_group 0;
""",
    "mbarrier": """
  mbarrier.init.shared.b64 [%r1], 1;
  mbarrier.arrive.shared.b64 %rd2, [%r1];
WAIT:
  mbarrier.test_wait.parity.shared.b64 %p2, [%r1], 0;
  @!%p2 bra WAIT;
""",
    "mbarrier_tx": """
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 1024;
  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], 1024;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], 0;
  @!%p2 bra WAIT;
""",
    "tma": f"""
  {TMA_LOAD} [%r2], [%rd1, {{%r3, %r4}}], [%r1];
""",
    "tma_store": """
  fence.proxy.async.shared::cta;
  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r3, %r4}], [%r2];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
""",
    "cluster": """
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  mov.u32 %r5, %cluster_ctarank;
  mapa.shared::cluster.u32 %r6, %r1, %r5;
  ld.shared::cluster.u32 %r7, [%r6];
""",
    "multicast": f"""
  mov.b16 %h1, 3;
  {TMA_LOAD}.multicast::cluster [%r2], [%rd1, {{%r3, %r4}}], [%r1], %h1;
""",
    "wgmma": """
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
    {%f0, %f1, %f2, %f3}, %rd2, %rd3, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
""",
    "setmaxnreg": """
  setmaxnreg.dec.sync.aligned.u32 40;
  setmaxnreg.inc.sync.aligned.u32 232;
""",
    "tcgen05": """
  tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd2, %rd3, %r9, %p1;
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r8];
  tcgen05.wait::ld.sync.aligned;
  tcgen05.fence::before_thread_sync;
""",
    "tmem": """
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 32;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r8, 32;
""",
    "cta_group2": """
  mov.b16 %h1, 3;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r2], 32;
  tcgen05.mma.cta_group::2.kind::f16 [%r8], %rd2, %rd3, %r9, %p1;
  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
    [%r1], %h1;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r8, 32;
""",
    "tcgen05_ld_red": """
  tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32 {%f0, %f1}, %f2, [%r8];
  tcgen05.wait::ld.sync.aligned;
""",
    "stmatrix": """
  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r2], {%r5, %r6, %r7, %r8};
""",
    "elect_sync": """
  elect.sync %r5|%p2, 0xffffffff;
""",
}


def kernel_ptx(family: str, target: str, version: Version) -> str:
    return f""".version {version[0]}.{version[1]}
.target {target}
.address_size 64

.visible .entry probe(.param .u64 arg)
{{
  .reg .b16 %h<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<8>;
  .reg .pred %p<3>;
  .shared .align 1024 .b8 buf[1024];
  .shared .align 8 .b64 bar;

  ld.param.u64 %rd1, [arg];
  mov.u32 %r1, bar;
  mov.u32 %r2, buf;
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
  setp.ne.b32 %p1, %r3, 0;
{KERNELS[family]}
  ret;
}}
"""


Job = tuple[str, str, Version]  # family, target, .version


def _lowest_target(family: str) -> Sku:
    return next(s for s in SKUS.values() if family in s.families)


def _previous(version: Version) -> Version:
    return max(v for v in PTX_VERSIONS if v < version)


# Families whose minimum is above their lowest target's: the version just below must be rejected.
TIGHT = [f for f in FAMILIES if PTX_MIN_VERSION[f] > _lowest_target(f).min_ptx_version]


def _jobs() -> set[Job]:
    jobs = {(f, s.name, NEWEST) for f in FAMILIES for s in SKUS.values()}
    jobs |= {(f, s.name, ptx_version_for(s, [f])) for s in SKUS.values() for f in s.families}
    jobs |= {(f, _lowest_target(f).name, _previous(PTX_MIN_VERSION[f])) for f in TIGHT}
    return jobs


def _assemble(job: Job, workdir: str) -> tuple[bool, str]:
    family, target, version = job
    path = Path(workdir) / f"{family}-{target}-{version[0]}{version[1]}.ptx"
    path.write_text(kernel_ptx(family, target, version))
    assert PTXAS is not None
    done = subprocess.run([PTXAS, f"-arch={target}", str(path), "-o", os.devnull],
                          capture_output=True, text=True, timeout=60)
    return done.returncode == 0, done.stderr.strip()


@pytest.fixture(scope="module")
def verdicts() -> dict[Job, tuple[bool, str]]:
    """Assemble every job once, in parallel: (accepted, ptxas diagnostics) per job."""
    if PTXAS is None:
        pytest.skip("ptxas not found on PATH or in /usr/local/cuda/bin")
    jobs = sorted(_jobs())
    with tempfile.TemporaryDirectory() as workdir, ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: _assemble(job, workdir), jobs))
    return dict(zip(jobs, results))


def test_one_kernel_per_family() -> None:
    assert KERNELS.keys() == FAMILIES.keys()


@pytest.mark.parametrize(("family", "target"),
                         [(f, s) for f in FAMILIES for s in SKUS],
                         ids=[f"{f}-{s}" for f in FAMILIES for s in SKUS])
def test_ptxas_accepts_exactly_the_table(verdicts: dict[Job, tuple[bool, str]], family: str,
                                         target: str) -> None:
    accepted, log = verdicts[(family, target, NEWEST)]
    claimed = family in SKUS[target].families
    assert accepted == claimed, (
        f"table says {target} {'has' if claimed else 'lacks'} {family}, ptxas "
        f"{'accepts' if accepted else 'rejects'} it:\n{log}")


@pytest.mark.parametrize(("family", "target"),
                         [(f, n) for n, s in SKUS.items() for f in FAMILIES if f in s.families],
                         ids=[f"{f}-{n}" for n, s in SKUS.items() for f in FAMILIES
                              if f in s.families])
def test_minimum_version_suffices(verdicts: dict[Job, tuple[bool, str]], family: str,
                                  target: str) -> None:
    version = ptx_version_for(SKUS[target], [family])
    accepted, log = verdicts[(family, target, version)]
    assert accepted, f"{family} on {target} at .version {version[0]}.{version[1]}:\n{log}"


@pytest.mark.parametrize("family", TIGHT)
def test_minimum_version_is_tight(verdicts: dict[Job, tuple[bool, str]], family: str) -> None:
    target = _lowest_target(family).name
    version = _previous(PTX_MIN_VERSION[family])
    accepted, log = verdicts[(family, target, version)]
    assert not accepted, f"{family} assembles on {target} at {version}: PTX_MIN_VERSION is too high"
    assert "requires PTX ISA .version" in log, log
