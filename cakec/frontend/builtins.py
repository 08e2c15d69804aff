"""Signatures of the language's vocabulary: `lm.*` builtins, resource methods, parameter
types and dtypes. The frontend binds calls against these tables and docs/language.md
is checked against them, so a builtin's contract lives in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Argument kinds. Each is described to users by KIND_NAMES in diagnostics.
KIND_NAMES: dict[str, str] = {
    "int": "an integer constant",
    "scalar": "an integer (constant or runtime i32)",
    "bool": "a boolean (constant or runtime)",
    "dtype": "a dtype such as lm.bf16",
    "swizzle": "a swizzle tag (32b, 64b, 128b or None)",
    "shape": "a tuple of positive integer constants",
    "ints": "a list of integer constants",
    "coords": "a tuple of integers",
    "role": "a role",
    "roles": "a list of roles",
    "pipeline": "a pipeline",
    "barrier": "a barrier",
    "view": "an SMEM view",
    "stage": "an SMEM view stage such as view[s]",
    "mma_a": "an SMEM view stage such as view[s] or view[s].T, or a 16-bit register tile "
             "(sm_90a)",
    "mma_b": "an SMEM view stage such as view[s] or view[s].T",
    "acc": "an accumulator (a TMEM region or lm.regs tile)",
    "tensor": "a tensor parameter",
    "tile": "a register tile",
    "store_src": "a register tile, or an SMEM view stage such as view[s]",
    "operand": "a register tile or a number",
    "pool": "an SMEM pool",
    "tmem": "a TMEM region",
    "float": "a number",
    "fill": "an out-of-bounds fill: lm.zero or lm.nan",
}


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str
    required: bool = True
    default: object = None
    min: int | None = None  # lower bound for constant integers (inclusive)
    doc: str = ""


@dataclass(frozen=True)
class Builtin:
    name: str
    args: tuple[Arg, ...]
    returns: str | None
    doc: str
    lowers_to: str = ""
    context: str = "any"  # "top": kernel level only; "role": inside `with ROLE:` only
    variadic: str | None = None  # kind of extra positional args (lm.grid)
    aliases: dict[str, str] = field(default_factory=dict)


def _b(name, args, returns, doc, lowers_to="", context="any", variadic=None) -> Builtin:
    return Builtin(name, tuple(args), returns, doc, lowers_to, context, variadic)


def _reductions(of: str, lowers_to: str) -> list[Builtin]:
    """`.sum/.max/.min/.argmax/.argmin(axis)` of a receiver described as `of`."""
    return [_b(k, [Arg("axis", "int", min=0)], "tile",
               f"Each row's {what} of {of}: an (M, 1) {dt} tile"
               + ("; with axis=0 each column's, a (1, N) tile." if dt == "f32" else "."),
               lowers_to, "role")
            for k, what, dt in (("sum", "sum", "f32"), ("max", "maximum", "f32"),
                                ("min", "minimum", "f32"),
                                ("argmax", "column of the first maximum", "i32"),
                                ("argmin", "column of the first minimum", "i32"))]


#: Elementwise functions of an f32 tile: (name, doc, lowering).
_UNARY = (
    ("exp2", "2ˣ of every element.", "ex2.approx.ftz.f32"),
    ("exp", "eˣ of every element.", "ex2.approx.ftz.f32 of x·log2(e)"),
    ("log2", "log₂ of every element.", "lg2.approx.ftz.f32"),
    ("log", "Natural log of every element.", "lg2.approx.ftz.f32 · ln(2)"),
    ("sqrt", "√x of every element.", "sqrt.approx.ftz.f32"),
    ("rsqrt", "1/√x of every element.", "rsqrt.approx.ftz.f32"),
    ("abs", "|x| of every element.", "abs.f32"),
    ("neg", "-x of every element (also spelled `-x`).", "neg.f32"),
    ("tanh", "tanh of every element.", "tanh.approx.f32"),
    ("sigmoid", "1 / (1 + e⁻ˣ) of every element.", "ex2.approx + rcp.approx"),
    ("relu", "max(x, 0) of every element.", "max.f32"),
    ("gelu", "x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³))) of every element (tanh form).",
     "fma + tanh.approx.f32"),
    ("silu", "x / (1 + e⁻ˣ) of every element.", "ex2.approx + rcp.approx"),
)

#: `lm.NAME(...)` functions.
LM_FUNCTIONS: dict[str, Builtin] = {b.name: b for b in [
    _b("smem", [Arg("bytes", "int", min=1)], "pool",
       "A dynamic shared-memory pool of `bytes` bytes.", "extern __shared__ buffer", "top"),
    _b("tmem", [Arg("cols", "int", min=0), Arg("width", "int", min=1), Arg("shape", "shape"),
                Arg("dtype", "dtype")], "tmem",
       "A TMEM region: lanes 0-127, columns [cols, cols+width).", "tcgen05.alloc (derived size)",
       "top"),
    _b("regs", [Arg("shape", "shape"), Arg("dtype", "dtype"), Arg("role", "role")], "tile",
       "A register accumulator owned by `role` (wgmma / mma.sync fragments).", "registers", "top"),
    _b("role", [Arg("warps", "ints"), Arg("regs", "int", required=False, min=24)], "role",
       "A warp role: the listed warps run the role's `with` blocks.",
       "warp-index dispatch; setmaxnreg when regs= is given", "top"),
    _b("pipeline", [Arg("stages", "int", min=1)], "pipeline",
       "A software pipeline of `stages` ring slots.", "(bookkeeping only)", "top"),
    _b("barrier", [Arg("count", "int", min=1), Arg("prod", "roles"), Arg("cons", "roles"),
                   Arg("init_count", "int", required=False, default=1, min=1),
                   Arg("pipeline", "pipeline", required=False)], "barrier",
       "An array of `count` mbarriers; each phase completes after `init_count` producer events.",
       "mbarrier.init", "top"),
    _b("grid", [], None, "Launch geometry: blocks per dimension (1 to 3 integers).",
       "grid dimensions in the launch metadata", "top", variadic="scalar"),
    _b("block_id", [Arg("dim", "int", required=False, default=0, min=0)], "scalar",
       "This block's index along `dim`.", "%ctaid"),
    _b("num_blocks", [Arg("dim", "int", required=False, default=0, min=0)], "scalar",
       "Blocks in the grid along `dim`.", "%nctaid"),
    _b("sm_count", [], "scalar", "Multiprocessors on the device (for persistent grids).",
       "a launch-time value"),
    _b("cluster_rank", [], "scalar",
       "This block's rank in its cluster (`cluster=` of `@cake.schedule`): x + cx·(y + cy·z).",
       "%cluster_ctarank"),
    _b("cluster_sync", [], None,
       "Every thread of every block of the cluster meets here: the kernel's last statement, "
       "after its role blocks, so that no block exits while a peer may still write into its "
       "SMEM or arrive on its barriers.",
       "barrier.cluster.arrive.release + barrier.cluster.wait.acquire", "top"),
    _b("cdiv", [Arg("a", "scalar"), Arg("b", "scalar")], "scalar", "Ceiling division a / b.",
       "arith.ceildivsi"),
    _b("min", [Arg("a", "operand"), Arg("b", "operand")], "scalar",
       "Minimum of two integers, or elementwise of tiles (and numbers).",
       "arith.minsi; fminf on tiles"),
    _b("max", [Arg("a", "operand"), Arg("b", "operand")], "scalar",
       "Maximum of two integers, or elementwise of tiles (and numbers).",
       "arith.maxsi; fmaxf on tiles"),
    _b("range", [Arg("start", "scalar"), Arg("stop", "scalar", required=False),
                 Arg("step", "scalar", required=False, default=1, min=1)], "range",
       "Loop bounds for `for x in lm.range(...)` (Python `range` semantics).", "a loop"),
    _b("wait", [Arg("barrier", "barrier"), Arg("stage", "scalar", required=False, default=0)],
       None, "Wait for the next phase of barrier[stage] this role has not consumed.",
       "mbarrier.try_wait.parity (derived parity)", "role"),
    _b("skip", [Arg("barrier", "barrier"), Arg("stage", "scalar", required=False, default=0),
                Arg("count", "scalar", required=False, default=1, min=0)],
       None, "Pass over the next `count` phases this role would wait for on barrier[stage], "
       "barrier[stage + 1], ... (ring positions another consumer takes), without waiting.",
       "a phase-bit update (no instruction on the barrier)", "role"),
    _b("arrive", [Arg("barrier", "barrier"), Arg("stage", "scalar", required=False, default=0),
                  Arg("multicast", "ints", required=False)],
       None, "One arrival of this role on barrier[stage]; with multicast=axes on barrier[stage] "
       "of every block of the cluster along those axes (this one included).",
       "mbarrier.arrive; with multicast=, mapa + mbarrier.arrive.shared::cluster per member",
       "role"),
    _b("commit", [Arg("barrier", "barrier"), Arg("stage", "scalar", required=False, default=0),
                  Arg("multicast", "ints", required=False)],
       None, "Arrive on barrier[stage] once this role's MMAs issued so far have completed; "
       "with multicast=axes on barrier[stage] of every block of the cluster along those axes "
       "(this one included).",
       "wgmma.wait_group + mbarrier.arrive (sm_90a; with multicast=, mapa + "
       "mbarrier.arrive.shared::cluster per member); tcgen05.commit (sm_100a)", "role"),
    _b("fence_proxy", [], None,
       "Order generic-proxy SMEM writes before async-proxy reads (TMA store, MMA).",
       "fence.proxy.async.shared::cta", "role"),
    _b("mma", [Arg("acc", "acc"), Arg("a", "mma_a"), Arg("b", "mma_b"),
               Arg("init", "bool", required=False, default=False)], None,
       "acc[M,N] (+)= a[M,K] · b[N,K]ᵀ; init=True overwrites; `view[s].T` reads a stage "
       "stored [K, M] or [K, N] as a (MN-major).",
       "mma.sync (sm_80/89/120), wgmma (sm_90a), tcgen05.mma (sm_100a/103a)", "role"),
    _b("sum_sq", [Arg("source", "stage"), Arg("axis", "int", min=1)], "tile",
       "Σ x² along each row of an SMEM stage: an (M, 1) f32 register tile.",
       "ld.shared.v4 + fma + shfl.bfly within each row's quad", "role"),
    _b("argmin", [Arg("value", "tile"), Arg("index", "tile"), Arg("source", "tile"),
                  Arg("axis", "int", min=1),
                  Arg("base", "scalar", required=False, default=0),
                  Arg("init", "bool", required=False, default=False)], None,
       "Merge each row's (min, argmin) of `source` (column c is index base + c) into the "
       "lm.regs tiles `value` (M, 1) f32 and `index` (M, 1) i32; ties go to the lowest index.",
       "per-thread compare/select, shfl.bfly merge across the row's quad when read", "role"),
    *(_b(k, [Arg("x", "operand")], "tile", doc, low, "role") for k, doc, low in _UNARY),
    _b("where", [Arg("pred", "tile"), Arg("a", "operand"), Arg("b", "operand")], "tile",
       "Elementwise `pred ? a : b` of a predicate tile (a comparison), broadcasting.",
       "selp", "role"),
    _b("any", [Arg("pred", "tile")], "bool",
       "`if lm.any(pred):` — a branch each warp takes when `pred` holds at any element it "
       "holds (the condition of an `if` only; its body register arithmetic only).",
       "per-thread or + vote.sync.any", "role"),
    _b("row_index", [Arg("tile", "operand"), Arg("base", "scalar", required=False, default=0)],
       "tile", "Each row's index within `tile`, plus `base`: an (M, 1) i32 tile.",
       "lane/warp arithmetic (no loads)", "role"),
    _b("col_index", [Arg("tile", "operand"), Arg("base", "scalar", required=False, default=0)],
       "tile", "Each column's index within `tile`, plus `base`: a (1, N) i32 tile.",
       "lane arithmetic (no loads)", "role"),
]}

#: `RESOURCE.NAME(...)` methods, by receiver kind.
METHODS: dict[str, dict[str, Builtin]] = {
    "pool": {b.name: b for b in [
        _b("view", [Arg("offset", "int", min=0), Arg("shape", "shape"), Arg("dtype", "dtype"),
                    Arg("stage", "int", required=False, default=1, min=1),
                    Arg("swizzle", "swizzle", required=False, default="auto"),
                    Arg("reuses", "view", required=False)], "view",
           "`stage` consecutive buffers of `shape` at byte `offset` of the pool; with "
           "`reuses=`, inside the bytes of that earlier view once it is dead.",
           "SMEM addresses (derived)", "top"),
    ]},
    "view": {b.name: b for b in [
        _b("tma_load", [Arg("tensor", "tensor"), Arg("coords", "coords"),
                        Arg("stage", "scalar", required=False, default=0),
                        Arg("barrier", "barrier"),
                        Arg("fill", "fill", required=False, default="zero"),
                        Arg("multicast", "ints", required=False)], None,
           "Async copy of one tile of `tensor` (tile coords, outermost first) into "
           "view[stage], completing on barrier[stage]; elements outside the tensor read 0, "
           "or NaN with fill=lm.nan (float tensors). multicast=axes: one block of each group "
           "of the cluster along those axes copies the tile into view[stage] of every block "
           "of its group.",
           "mbarrier.arrive.expect_tx + cp.async.bulk.tensor (.multicast::cluster with "
           "multicast=)", "role"),
        _b("copy_load", [Arg("tensor", "tensor"), Arg("coords", "coords"),
                         Arg("stage", "scalar", required=False, default=0),
                         Arg("barrier", "barrier")], None,
           "Async copy of one tile of `tensor` (tile coords, outermost first) into "
           "view[stage] by every thread of the role, completing on barrier[stage].",
           "cp.async (16-byte chunks, zero fill) + cp.async.mbarrier.arrive.noinc", "role"),
    ]},
    "tensor": {b.name: b for b in [
        _b("tma_store", [Arg("value", "store_src"), Arg("coords", "coords")], None,
           "Store a register tile, or a staged SMEM view stage by TMA, to the tile of this "
           "tensor at `coords` (bounds-checked or clipped).",
           "st.global with bounds (tails) / cp.async.bulk.tensor store", "role"),
        _b("load", [Arg("coords", "coords"), Arg("shape", "shape"), Arg("dtype", "dtype"),
                    Arg("other", "float", required=False, default=0.0)], "tile",
           "A (1, L) or (L, 1) vector from L elements along the last dimension at tile "
           "`coords`, or an (M, N) tile of the last two dimensions; elements outside the "
           "tensor read `other`.", "ld.global with bounds",
           "role"),
        _b("store", [Arg("value", "tile"), Arg("coords", "coords")], None,
           "Store a register tile: an (L, 1) or (1, L) vector to L elements along the last "
           "dimension at tile `coords`, an (M, N) tile to the tile at `coords` "
           "(bounds-checked).",
           "st.global with bounds", "role"),
        _b("split_store", [Arg("value", "tile"), Arg("coords", "coords"),
                           Arg("part", "scalar", min=0), Arg("parts", "scalar", min=1),
                           Arg("workspace", "tensor"), Arg("counters", "tensor"),
                           Arg("dtype", "dtype", required=False, default="f32"),
                           Arg("transpose", "bool", required=False, default=False)], None,
           "Split-K: one of `parts` f32 partial sums of the tile at `coords`. The partial "
           "goes to workspace[part]; the CTA that arrives last on counters[tile] adds the "
           "partials in part order, stores the sum as `dtype` (bounds-checked) and resets "
           "the counter to 0. transpose=True stores the (M, N) partial as the (N, M) tile "
           "of the tensor (swap-AB: Cᵀ = B·Aᵀ computed).",
           "st.global + fence + atom.add on the tile's counter; the last arrival ld.global.cg "
           "of the partials + st.global", "role"),
    ]},
    "stage": {b.name: b for b in [
        _b("load", [], "tile",
           "The stage of a (1, L) or (L, 1) f32 or i32 view as a register vector, read by "
           "every thread of the role (wait for the load that fills it first).",
           "ld.shared", "role"),
        _b("store", [Arg("value", "tile")], None,
           "Write a register tile of the stage's shape and dtype into the stage (convert "
           "with `.to(dtype)` first), in the view's layout and swizzle, so a later MMA or TMA "
           "store reads it; an async-proxy reader needs `lm.fence_proxy()` after it.",
           "st.shared of column pairs at the view's swizzled addresses (stmatrix on sm_90a)",
           "role"),
    ]},
    "tile": {b.name: b for b in [
        _b("to", [Arg("dtype", "dtype")], "tile", "Convert every element to `dtype`.",
           "cvt", "role"),
        *_reductions("an (M, N) f32 tile", "per-thread reduction, then shfl.bfly within each "
                     "row's quad"),
    ]},
    "tmem": {b.name: b for b in [
        _b("to", [Arg("dtype", "dtype")], "tile",
           "Load the region into registers (tcgen05.ld) and convert to `dtype`.",
           "tcgen05.ld + tcgen05.wait::ld + cvt", "role"),
        *_reductions("an f32 TMEM accumulator (read as by `.to(lm.f32)`)",
                     "tcgen05.ld, then a per-thread reduction (a thread holds whole rows)"),
    ]},
}

#: Kernel parameter annotations `LM.NAME` → (kind, rank, tma, scalar dtype).
PARAM_TYPES: dict[str, tuple[str, int, bool, str | None]] = {
    **{f"tma{r}d": ("tensor", r, True, None) for r in range(1, 6)},
    **{f"tensor{r}d": ("tensor", r, False, None) for r in range(1, 6)},
    "i32": ("scalar", 0, False, "i32"),
    "f32": ("scalar", 0, False, "f32"),
}

#: `lm.NAME` dtype constants.
DTYPE_NAMES = ("bf16", "f16", "f32", "tf32", "e4m3", "e5m2", "i8", "i32")

#: `@cake.schedule(...)` keyword arguments.
SCHEDULE_ARGS = (Arg("target", "str", required=False),
                 Arg("blocks_per_sm", "int", required=False, min=1),
                 Arg("cluster", "shape", required=False))
