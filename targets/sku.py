"""The target capability table: every hardware fact the gates, the emitter and `cakec targets` use.

One place per fact. A fact marked [V] was checked with ptxas 13.0 (test/unit/test_sku_ptxas.py
re-checks every family on every target); the others come from /work/shared/notes/PTX.md and the
sources it names.
Dtype names are the language's: bf16, f16, tf32, f32, e4m3, e5m2, i8, i32.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

# Instruction families, in display order, with the PTX each one stands for. A target either has a
# family or not; `Sku.families` is the set it has.
FAMILIES: Mapping[str, str] = MappingProxyType({
    "mma_sync": "mma.sync m16n8k16 bf16/f16, m16n8k8 tf32, m16n8k32 s8 (warp-wide, registers)",
    "mma_sync_fp8": "mma.sync m16n8k32 e4m3/e5m2",
    "mma_sync_f8f6f4": "mma.sync m16n8k32 .kind::f8f6f4 with FP6/FP4 operands",
    "ldmatrix": "ldmatrix.m8n8 (.trans) shared -> registers",
    "cp_async": "cp.async 4/8/16 B global -> shared, commit_group/wait_group",
    "mbarrier": "mbarrier.init/arrive/test_wait.parity (.shared)",
    "mbarrier_tx": "mbarrier expect_tx, try_wait.parity, fence.mbarrier_init",
    "tma": "cp.async.bulk.tensor global -> shared (TMA load, complete_tx)",
    "tma_store": "cp.async.bulk.tensor shared -> global, bulk commit/wait_group",
    "cluster": "barrier.cluster, mapa, %cluster_ctarank, distributed shared memory",
    "multicast": "TMA .multicast::cluster",
    "wgmma": "wgmma.mma_async and its fence/commit_group/wait_group (one warpgroup)",
    "setmaxnreg": "setmaxnreg.inc/dec (warpgroup register rebalancing)",
    "tcgen05": "tcgen05.mma/commit/ld/st/cp/fence (5th-gen tensor core)",
    "tmem": "tcgen05.alloc/dealloc/relinquish_alloc_permit (tensor memory)",
    "cta_group2": "tcgen05 .cta_group::2 (MMA across a CTA pair)",
    "tcgen05_ld_red": "tcgen05.ld.red (TMEM load with min/max reduction)",
    "stmatrix": "stmatrix.m8n8 registers -> shared",
    "elect_sync": "elect.sync (elect one lane)",
})

# Lowest PTX ISA `.version` of the forms Cake emits for each family [V: ptxas 13.0 on the family's
# lowest target, PTX.md section 2]. TMA assumes a `.shared::cluster` destination (`.shared::cta`
# needs 8.6); cluster assumes barrier.cluster with .release/.acquire (bare forms are 7.8).
PTX_MIN_VERSION: Mapping[str, tuple[int, int]] = MappingProxyType({
    "mma_sync": (7, 0),
    "mma_sync_fp8": (8, 4),
    "mma_sync_f8f6f4": (8, 7),
    "ldmatrix": (7, 0),
    "cp_async": (7, 0),
    "mbarrier": (7, 1),  # test_wait.parity; init/arrive alone are 7.0
    "mbarrier_tx": (8, 0),
    "tma": (8, 0),
    "tma_store": (8, 0),
    "cluster": (8, 0),
    "multicast": (8, 0),
    "wgmma": (8, 0),
    "setmaxnreg": (8, 0),
    "tcgen05": (8, 6),
    "tmem": (8, 6),
    "cta_group2": (8, 6),
    "tcgen05_ld_red": (8, 8),
    "stmatrix": (7, 8),
    "elect_sync": (8, 0),
})

WARP_SIZE = 32
WARPGROUP_WARPS = 4  # a warpgroup: 4 consecutive warps, the first a multiple of 4

# TMA: cuTensorMapEncodeTiled and cp.async.bulk.tensor (PTX.md section 5).
TMA_RANK_MIN = 1
TMA_RANK_MAX = 5
TMA_BOX_DIM_MAX = 256  # every boxDim[i] in [1, 256]
TMA_GLOBAL_ALIGN = 16  # global base address and every global stride (bytes) are multiples of this
TMA_INNER_BOX_BYTES_MULTIPLE = 16  # boxDim[0] * elemsize, without interleave
# Swizzle modes by the language's tag: the span (bytes) the inner box must fit in, and the shared
# memory alignment a TMA destination needs (the pattern's repeat, so MMA descriptors get
# base_offset 0).
SWIZZLE_SPAN: Mapping[str, int] = MappingProxyType({"none": 0, "32b": 32, "64b": 64, "128b": 128})
SWIZZLE_SMEM_ALIGN: Mapping[str, int] = MappingProxyType(
    {"none": 128, "32b": 256, "64b": 512, "128b": 1024})

# Tensor memory: 128 lanes x tmem_columns 32-bit cells per CTA; tcgen05.alloc takes a power of two.
TMEM_LANES = 128
TMEM_ALLOC_MIN_COLUMNS = 32
TMEM_ALLOC_MAX_COLUMNS = 512

SETMAXNREG_MIN = 24
SETMAXNREG_MAX = 256
SETMAXNREG_STEP = 8

# mbarrier per-phase limits (PTX ISA mbarrier contents; [U] in PTX.md).
MBARRIER_MAX_ARRIVALS = (1 << 20) - 1
MBARRIER_MAX_TX_BYTES = (1 << 20) - 1
# A limit of cakec's lowering, not of the hardware: a role keeps the wait parities of a
# barrier's mbarriers in one 64-bit register (docs/codegen.md), so a barrier that is waited on
# has at most this many. verify-conformance refuses more (CAKE-H018) before emit sees it.
MAX_WAITED_MBARRIERS = 64


def tma_inner_box_fits(swizzle: str, inner_box_bytes: int) -> bool:
    """Whether the innermost box extent (bytes) is legal for the swizzle mode."""
    if inner_box_bytes % TMA_INNER_BOX_BYTES_MULTIPLE:
        return False
    span = SWIZZLE_SPAN[swizzle]
    return span == 0 or inner_box_bytes <= span


def is_valid_tmem_alloc(columns: int) -> bool:
    """tcgen05.alloc's column count: a power of two in [32, 512] [V]."""
    return (TMEM_ALLOC_MIN_COLUMNS <= columns <= TMEM_ALLOC_MAX_COLUMNS
            and columns & (columns - 1) == 0)


def tmem_alloc_columns(highest_column: int) -> int:
    """Columns to allocate so that [0, highest_column) is covered: the next legal power of two."""
    columns = TMEM_ALLOC_MIN_COLUMNS
    while columns < highest_column:
        columns *= 2
    if columns > TMEM_ALLOC_MAX_COLUMNS:
        raise ValueError(f"{highest_column} TMEM columns exceed {TMEM_ALLOC_MAX_COLUMNS}")
    return columns


def tmem_lanes_for_warp(warp: int) -> range:
    """TMEM lanes warp `warp` may touch with tcgen05.ld/st: the quarter 32*(warp % 4) .. +31."""
    first = WARP_SIZE * (warp % WARPGROUP_WARPS)
    return range(first, first + WARP_SIZE)


def is_warpgroup(warps: Iterable[int]) -> bool:
    """Whether `warps` is exactly one warpgroup: 4 consecutive warps starting at a multiple of 4."""
    ws = sorted(warps)
    return (len(ws) == WARPGROUP_WARPS and ws[0] % WARPGROUP_WARPS == 0
            and ws == list(range(ws[0], ws[0] + WARPGROUP_WARPS)))


def is_valid_setmaxnreg(count: int) -> bool:
    """setmaxnreg's register count: in [24, 256] and a multiple of 8 [V]."""
    return SETMAXNREG_MIN <= count <= SETMAXNREG_MAX and count % SETMAXNREG_STEP == 0


@dataclass(frozen=True)
class NRange:
    """The N values min, min+step, ..., max."""
    min: int
    max: int
    step: int

    def __contains__(self, n: int) -> bool:
        return self.min <= n <= self.max and (n - self.min) % self.step == 0

    def __str__(self) -> str:
        return str(self.min) if self.min == self.max else f"{self.min}..{self.max}/{self.step}"


# Who issues an MMA, and how many threads that is.
ISSUER_THREADS: Mapping[str, int] = MappingProxyType(
    {"thread": 1, "warp": WARP_SIZE, "warpgroup": WARP_SIZE * WARPGROUP_WARPS})


@dataclass(frozen=True)
class MmaForm:
    """One MMA instruction form: the operand dtypes, shapes and execution contract it accepts."""
    instruction: str  # "mma.sync" | "wgmma" | "tcgen05.mma"
    kind: str  # f16 | tf32 | f8 | f8f6f4 | i8: the dtype class, which fixes K
    family: str  # the family a target needs for this form
    ab_dtypes: tuple[tuple[str, str], ...]  # legal (A, B) dtype pairs
    acc_dtypes: tuple[str, ...]
    m: tuple[int, ...]
    n: tuple[NRange, ...]  # N is legal when any range contains it
    k: int  # K per instruction, in elements
    acc_location: str  # "regs" | "tmem"
    issuer: str  # "warp" | "warpgroup" | "thread" (see ISSUER_THREADS)
    a_from: tuple[str, ...]  # where A may live ("regs", "smem", "tmem"); B: smem, mma.sync: regs
    transpose: bool  # reads MN-major smem operands itself (the descriptor transpose bit)
    cta_group: int = 1

    def allows(self, a: str, b: str, acc: str, m: int, n: int) -> bool:
        return ((a, b) in self.ab_dtypes and acc in self.acc_dtypes and m in self.m
                and any(n in r for r in self.n))


@dataclass(frozen=True)
class Sku:
    """One compilation target and what it can do."""
    name: str  # the ptxas -arch / .target spelling
    sm: int
    arch_suffix: str  # "a": arch-specific features, PTX runs on exactly this GPU
    description: str
    families: frozenset[str]
    smem_per_block_optin: int  # bytes, static + dynamic, after cudaFuncSetAttribute
    max_cluster_size: int  # portable maximum; 0 without clusters
    tmem_columns: int  # 0 without tensor memory
    min_ptx_version: tuple[int, int]  # lowest .version ptxas accepts for this .target [V]
    mma_forms: tuple[MmaForm, ...]
    codegen: str  # the package of targets/ that lowers it (a backend: sm80, sm90, sm100)
    max_threads_per_block: int = 1024
    max_threads_per_sm: int = 2048  # resident threads of all blocks on one SM
    registers_per_sm: int = 65536  # the budget setmaxnreg redistributes
    #: shared memory the system takes per block (cudaDevAttrReservedSharedMemoryPerBlock;
    #: ptxas counts it in a kernel's static size), within the opt-in limit: on the H200 a
    #: 231,920-byte dynamic request with 80 bytes of mbarriers failed cuFuncSetAttribute.
    reserved_smem_per_block: int = 1024
    #: Dense bf16 tensor-core FLOPs per SM per clock with f32 accumulation (0: unknown): the
    #: speed-of-light peak of `cakec run` is this x SMs x the device's clock. NVIDIA's
    #: datasheets: A100 312 TFLOP/s (108 SMs, 1.41 GHz), H100 SXM 989 (132, 1.83 GHz),
    #: B200 2250 (148 SMs) [U: B200's clock].
    tensor_flops_per_sm_clock: int = 0

    def __post_init__(self) -> None:
        unknown = self.families - FAMILIES.keys()
        if unknown:
            raise ValueError(f"{self.name}: unknown families {sorted(unknown)}")
        if ("cluster" in self.families) != (self.max_cluster_size > 0):
            raise ValueError(f"{self.name}: cluster family and max_cluster_size disagree")
        if ("tmem" in self.families) != (self.tmem_columns > 0):
            raise ValueError(f"{self.name}: tmem family and tmem_columns disagree")
        for form in self.mma_forms:
            if form.family not in self.families:
                raise ValueError(f"{self.name}: {form.instruction} {form.kind} needs {form.family}")

    @property
    def smem_per_sm(self) -> int:
        """Shared memory of one SM, what its resident blocks share: the opt-in limit of one
        block plus the system's reservation (H100/H200 228 KB, A100 164 KB, the 99 KB
        targets 100 KB: CUDA programming guide, compute capabilities)."""
        return self.smem_per_block_optin + self.reserved_smem_per_block

    def has(self, family: str) -> bool:
        if family not in FAMILIES:
            raise KeyError(f"unknown instruction family {family!r}")
        return family in self.families

    def mma_forms_for(self, a: str, b: str, acc: str) -> tuple[MmaForm, ...]:
        """The forms that take these dtypes, in table order (the preferred instruction first)."""
        return tuple(f for f in self.mma_forms if (a, b) in f.ab_dtypes and acc in f.acc_dtypes)


def ptx_version_for(sku: Sku, families_used: Iterable[str]) -> tuple[int, int]:
    """The `.version` to emit: the target's minimum raised to every used family's minimum."""
    return max([sku.min_ptx_version, *(PTX_MIN_VERSION[f] for f in families_used)])


# --- MMA forms ---

_F16 = (("bf16", "bf16"), ("f16", "f16"))
_TF32 = (("tf32", "tf32"),)
_FP8 = tuple((a, b) for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2"))  # mixing is legal
_I8 = (("i8", "i8"),)
_K = {"f16": 16, "tf32": 8, "f8": 32, "f8f6f4": 32, "i8": 32}  # always 32 bytes of each operand row


def _acc(kind: str) -> tuple[str, ...]:
    # f16 accumulation (f16 inputs only) exists in hardware; the language accumulates in f32.
    return ("i32",) if kind == "i8" else ("f32",)


def _mma_sync(kind: str, ab: tuple[tuple[str, str], ...], family: str) -> MmaForm:
    return MmaForm("mma.sync", kind, family, ab, _acc(kind), m=(16,), n=(NRange(8, 8, 8),),
                   k=_K[kind], acc_location="regs", issuer="warp", a_from=("regs",),
                   transpose=False)


_MMA_SYNC = (
    _mma_sync("f16", _F16, "mma_sync"),
    _mma_sync("tf32", _TF32, "mma_sync"),
    _mma_sync("i8", _I8, "mma_sync"),
)
# .kind::f8f6f4 (sm_120a/121a) only adds FP6/FP4 operands, which the language has no dtype for; its
# fp8 subset is this form.
_MMA_SYNC_FP8 = (_mma_sync("f8", _FP8, "mma_sync_fp8"),)


def _wgmma(kind: str, ab: tuple[tuple[str, str], ...], n: tuple[NRange, ...]) -> MmaForm:
    # The transpose immediates exist only for f16/bf16 [V]; tf32, fp8 and i8 operands are K-major.
    return MmaForm("wgmma", kind, "wgmma", ab, _acc(kind), m=(64,), n=n, k=_K[kind],
                   acc_location="regs", issuer="warpgroup", a_from=("smem", "regs"),
                   transpose=kind == "f16")


_WGMMA_N = (NRange(8, 256, 8),)
_WGMMA = (
    _wgmma("f16", _F16, _WGMMA_N),
    _wgmma("tf32", _TF32, _WGMMA_N),
    _wgmma("f8", _FP8, _WGMMA_N),
    # Integer wgmma: N in {8, 16, 24} and 32..256 in steps of 16 [V: n40, n56, n136 rejected].
    _wgmma("i8", _I8, (NRange(8, 24, 8), NRange(32, 256, 16))),
)


def _tcgen05(kind: str, ab: tuple[tuple[str, str], ...]) -> tuple[MmaForm, ...]:
    # Dense shapes: cta_group::1 M=64 N%8, M=128 N%16 (DeepGEMM/CUTLASS static_asserts);
    # cta_group::2 M=128/256 with N%32 in [32, 256] (CUTLASS 2-SM atoms; conservative where
    # DeepGEMM allows N%16 at M=256).
    shapes = (((64,), NRange(8, 256, 8), 1, "tcgen05"),
              ((128,), NRange(16, 256, 16), 1, "tcgen05"),
              ((128, 256), NRange(32, 256, 32), 2, "cta_group2"))
    return tuple(
        MmaForm("tcgen05.mma", kind, family, ab, _acc(kind), m=m, n=(n,), k=_K[kind],
                acc_location="tmem", issuer="thread", a_from=("smem", "tmem"), transpose=True,
                cta_group=group)
        for m, n, group, family in shapes)


_TCGEN05 = (*_tcgen05("f16", _F16), *_tcgen05("tf32", _TF32), *_tcgen05("f8f6f4", _FP8))
_TCGEN05_I8 = _tcgen05("i8", _I8)  # kind::i8: sm_100a only, not sm_103a [V in PTX.md]

# --- targets ---

_AMPERE = frozenset({"mma_sync", "ldmatrix", "cp_async", "mbarrier"})
_ASYNC = frozenset({"mbarrier_tx", "tma", "tma_store", "cluster", "multicast", "setmaxnreg",
                    "stmatrix", "elect_sync"})  # sm_90a and every later `a` target here
_TCGEN05_FAMILIES = frozenset({"tcgen05", "tmem", "cta_group2"})
_HOPPER_SMEM = 232448  # 227 KB
_CONSUMER_SMEM = 101376  # 99 KB

SKUS: Mapping[str, Sku] = MappingProxyType({s.name: s for s in (
    Sku("sm_80", 80, "", "Ampere A100", _AMPERE,
        smem_per_block_optin=166912, max_cluster_size=0, tmem_columns=0,
        min_ptx_version=(7, 0), mma_forms=_MMA_SYNC, codegen="sm80",
        tensor_flops_per_sm_clock=2048),
    Sku("sm_89", 89, "", "Ada L4/L40S/RTX 40", _AMPERE | {"mma_sync_fp8"},
        smem_per_block_optin=_CONSUMER_SMEM, max_cluster_size=0, tmem_columns=0,
        min_ptx_version=(7, 8), mma_forms=_MMA_SYNC + _MMA_SYNC_FP8, codegen="sm80",
        max_threads_per_sm=1536),
    Sku("sm_90a", 90, "a", "Hopper H100/H200", _AMPERE | _ASYNC | {"mma_sync_fp8", "wgmma"},
        smem_per_block_optin=_HOPPER_SMEM, max_cluster_size=8, tmem_columns=0,
        min_ptx_version=(8, 0), mma_forms=_WGMMA + _MMA_SYNC + _MMA_SYNC_FP8, codegen="sm90",
        tensor_flops_per_sm_clock=4096),
    Sku("sm_100a", 100, "a", "Blackwell B200/GB200",
        _AMPERE | _ASYNC | _TCGEN05_FAMILIES | {"mma_sync_fp8"},
        smem_per_block_optin=_HOPPER_SMEM, max_cluster_size=8, tmem_columns=512,
        min_ptx_version=(8, 6), mma_forms=_TCGEN05 + _TCGEN05_I8 + _MMA_SYNC + _MMA_SYNC_FP8,
        codegen="sm100", tensor_flops_per_sm_clock=8192),
    # Shared memory opt-in on sm_103 is [U] in PTX.md; taken equal to sm_100.
    Sku("sm_103a", 103, "a", "Blackwell Ultra B300/GB300",
        _AMPERE | _ASYNC | _TCGEN05_FAMILIES | {"mma_sync_fp8", "tcgen05_ld_red"},
        smem_per_block_optin=_HOPPER_SMEM, max_cluster_size=8, tmem_columns=512,
        min_ptx_version=(8, 8), mma_forms=_TCGEN05 + _MMA_SYNC + _MMA_SYNC_FP8, codegen="sm100"),
    # Consumer Blackwell: TMA and clusters but no tcgen05/TMEM. Cluster instructions assemble [V];
    # whether GeForce parts launch clusters of 8 is [U].
    Sku("sm_120a", 120, "a", "Blackwell RTX 50/RTX PRO",
        _AMPERE | _ASYNC | {"mma_sync_fp8", "mma_sync_f8f6f4"},
        smem_per_block_optin=_CONSUMER_SMEM, max_cluster_size=8, tmem_columns=0,
        min_ptx_version=(8, 7), mma_forms=_MMA_SYNC + _MMA_SYNC_FP8, codegen="sm80",
        max_threads_per_sm=1536),
    Sku("sm_121a", 121, "a", "Blackwell DGX Spark GB10",
        _AMPERE | _ASYNC | {"mma_sync_fp8", "mma_sync_f8f6f4"},
        smem_per_block_optin=_CONSUMER_SMEM, max_cluster_size=8, tmem_columns=0,
        min_ptx_version=(8, 8), mma_forms=_MMA_SYNC + _MMA_SYNC_FP8, codegen="sm80",
        max_threads_per_sm=1536),
)})

DEFAULT_TARGET = "sm_100a"


def get_sku(name: str) -> Sku:
    """The target called `name` (e.g. "sm_90a")."""
    try:
        return SKUS[name]
    except KeyError:
        raise KeyError(f"unknown target {name!r}; known targets: {', '.join(SKUS)}") from None
