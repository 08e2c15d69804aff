"""Mutation test of the verifier (issue 3): every valid kernel in examples/corpus/ and
examples/ is mutated systematically on its source text (delete a wait, swap a barrier's
producers and consumers, change a stage index, change a trip count, shrink the pool, move a
TMEM region, change a dtype or a swizzle, retarget to each SKU) and run through the whole
`verify` pipeline, whatever gates it holds. Every mutant must be rejected, except those on
LEGAL, each with the reason it is a correct kernel. One case per kernel; run with -s for
the rejected fraction of each.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cakec.driver import read_source, verify_source
from cakec.targets.sku import SKUS
from kernel_files import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
KERNELS = EXAMPLES


@dataclass(frozen=True)
class Mutant:
    key: str  # file:operator:line:detail, the allow-list key
    text: str


# ---- mutation operators (each yields (line, detail, new text)) ---------------------------------


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _replace_line(text: str, i: int, new: str) -> str:
    lines = _lines(text)
    lines[i] = new
    return "\n".join(lines)


def delete_wait(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.match(r"^(\s*)lm\.wait\(", line)
        if m:
            yield i, "", _replace_line(text, i, m.group(1) + "pass")


def swap_roles(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.search(r"prod=(\[[^\]]*\]), cons=(\[[^\]]*\])", line)
        if m and m.group(1) != m.group(2):
            yield i, "", _replace_line(
                text, i, line[:m.start()] + f"prod={m.group(2)}, cons={m.group(1)}" + line[m.end():])


def stage_index(text: str) -> Iterator[tuple[int, str, str]]:
    """Stage arguments, view subscripts and stage counters: pinned to 0 or shifted by one."""
    for i, line in enumerate(_lines(text)):
        if line.lstrip().startswith("#"):
            continue
        for m in re.finditer(r"stage=([^,)]+(?:\([^)]*\))?[^,)]*)(?=[,)])", line):
            if "view(" in line or "pipeline(" in line:
                break  # declarations: `stage=` is the stage count there
            expr = m.group(1)
            for detail, new in (("0", "0"), ("+1", f"({expr}) + 1")):
                if new != expr:
                    yield i, f"stage={expr}->{detail}", _replace_line(
                        text, i, line[:m.start(1)] + new + line[m.end(1):])
        for m in re.finditer(r"\b(\w+)\[([^\]]+)\]", line):
            if m.group(1) in ("warps", "prod", "cons") or "shape" in m.group(1):
                continue
            expr = m.group(2)
            yield i, f"{m.group(1)}[{expr}]->+1", _replace_line(
                text, i, line[:m.start(2)] + f"({expr}) + 1" + line[m.end(2):])
        m = re.match(r"^(\s*\w+ = .*% )(\d+)$", line)
        if m and int(m.group(2)) > 1:
            yield i, f"%{m.group(2)}->%{int(m.group(2)) - 1}", _replace_line(
                text, i, m.group(1) + str(int(m.group(2)) - 1))


def _call_args(line: str, start: int) -> list[tuple[int, int]]:
    """Spans of the top-level arguments of the call whose `(` is at `start`."""
    spans, depth, begin = [], 0, start + 1
    for j in range(start + 1, len(line)):
        c = line[j]
        if c in "([":
            depth += 1
        elif c in ")]" and depth:
            depth -= 1
        elif c in ",)" and not depth:
            spans.append((begin + (line[begin] == " "), j))
            begin = j + 1
            if c == ")":
                break
    return spans


def trip_count(text: str) -> Iterator[tuple[int, str, str]]:
    """The stop of every loop, one more and one less."""
    for i, line in enumerate(_lines(text)):
        m = re.search(r"lm\.range\(", line)
        if not m:
            continue
        args = _call_args(line, m.end() - 1)
        a, b = args[1] if len(args) > 1 else args[0]
        stop = line[a:b]
        for detail, new in (("+1", f"{stop} + 1"), ("-1", f"{stop} - 1")):
            yield i, f"stop{detail}", _replace_line(text, i, line[:a] + new + line[b:])


def shrink_pool(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.search(r"lm\.smem\((\d+)\)", line)
        if m:
            yield i, "half", _replace_line(
                text, i, line[:m.start(1)] + str(int(m.group(1)) // 2) + line[m.end(1):])


def move_tmem(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.search(r"lm\.tmem\(cols=(\d+)", line)
        if m:
            for delta in (64, -64):
                cols = int(m.group(1)) + delta
                if cols >= 0:
                    yield i, f"{delta:+d}", _replace_line(
                        text, i, line[:m.start(1)] + str(cols) + line[m.end(1):])


_OTHER_DTYPE = {"bf16": "f16", "f16": "bf16", "f32": "f16", "e4m3": "bf16", "tf32": "bf16",
                "i8": "bf16", "i32": "f32", "e5m2": "bf16"}


def dtype(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        for m in re.finditer(r"dtype=lm\.(\w+)", line):
            new = _OTHER_DTYPE[m.group(1)]
            yield i, f"{m.group(1)}->{new}", _replace_line(
                text, i, line[:m.start(1)] + new + line[m.end(1):])


def swizzle(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.search(r"swizzle=(\w+)", line)
        if m:
            for new in ("64b", "None"):
                if new != m.group(1):
                    yield i, f"{m.group(1)}->{new}", _replace_line(
                        text, i, line[:m.start(1)] + new + line[m.end(1):])


def retarget(text: str) -> Iterator[tuple[int, str, str]]:
    for i, line in enumerate(_lines(text)):
        m = re.match(r'^@cake\.schedule\((?:target="(\w+)")?(.*)\)', line)
        if m:
            current, rest = m.group(1) or "sm_100a", m.group(2)
            for sku in SKUS:
                if sku != current:
                    yield i, sku, _replace_line(text, i, f'@cake.schedule(target="{sku}"{rest})')


def cluster(text: str) -> Iterator[tuple[int, str, str]]:
    """Each `multicast=` dropped (a copy or a release then reaches this CTA only), and the
    exit rendezvous `lm.cluster_sync()` deleted."""
    for i, line in enumerate(_lines(text)):
        m = None if line.lstrip().startswith("#") else re.search(r",\s*multicast=[^,)]+", line)
        if m:
            yield i, "local", _replace_line(text, i, line[:m.start()] + line[m.end():])
        if line.strip() == "lm.cluster_sync()":
            yield i, "no_sync", _replace_line(text, i, line[:len(line) - len(line.lstrip())]
                                              + "pass")


OPERATORS = [delete_wait, swap_roles, stage_index, trip_count, shrink_pool, move_tmem, dtype,
             swizzle, retarget, cluster]


def mutants(path: Path) -> Iterator[Mutant]:
    text = path.read_text()
    rel = path.relative_to(ROOT).as_posix()
    seen: set[str] = set()
    for op in OPERATORS:
        for i, detail, new in op(text):
            key = f"{rel}:{op.__name__}:{i + 1}:{detail}".rstrip(":")
            if new != text and key not in seen:
                seen.add(key)
                yield Mutant(key, new)


# ---- the legal survivors ------------------------------------------------------------------------

_TMEM = ("the region moves to other columns inside the 512: it stays disjoint from every other "
         "region, the derived allocation grows to cover it, and the MMA and tcgen05.ld address "
         "it by its new column")
_SWIZZLE = ("128-byte rows with a 64B swizzle: the stage is stored as two 64B-swizzled column "
            "blocks; TMA writes (two boxes) and the MMA descriptor reads the layout of the same "
            "tag, and the stage stays aligned for it")
_DTYPE16 = ("the view feeds both MMA operands, so both become f16 together: f16 x f16 with an f32 "
            "accumulator is as valid as bf16, and the tensor's dtype follows the view")
_SM103 = ("sm_103a offers everything this sm_100a kernel uses (tcgen05 bf16 -> f32, TMEM, TMA, "
          "the same shared memory)")
_MMA_SYNC = ("on sm_100a/sm_103a a register accumulator lowers to mma.sync, which these targets "
             "have for bf16 -> f32; mma.sync completes synchronously, so every release by "
             "lm.commit still follows the reads of its stage")
_MMA_SYNC_F8 = ("on sm_100a/sm_103a a register accumulator lowers to mma.sync, which these "
                "targets have for e4m3 -> f32 (m16n8k32); mma.sync completes synchronously, so "
                "every release by lm.commit still follows the reads of its stage")
_OWN_STAGE = ("a ping-pong consumer's code for its own tiles (math0: j even) or its skip of the "
              "other's (math1's, j even): there j % 2 is 0, the same stage")
_NO_MMA = ("a TMA load and plain loads/stores only: every TMA target (sm_90a onwards) runs "
           "this kernel as written")
_TURN_AFTER_WAIT = ("math1 waits for `turn0` first, which math0 arrives on only after its own wait "
                    "for the same phase of `full[s]` (both roles read every stage): the stage is "
                    "known to have landed, so math1's own wait on it passes at once")
_SUM_SQ_LAYOUT = ("only lm.sum_sq reads the stage, and every swizzle mode (or none) keeps each "
                  "row's bytes inside that row's pitch, so the sum of squares is the same")
_CP_ASYNC = ("cp.async, mbarriers and mma.sync bf16 -> f32 exist on every target, and 64 KiB of "
              "stages fit every target's shared memory")
_CP_ASYNC_WGMMA = ("cp.async and a register accumulator verify here; code generation reports "
                   "copy_load as not yet lowered on sm_90a (CAKE-H100) instead of emitting it "
                   "next to wgmma, an async-proxy reader")

_LOAD16 = ("the tensor is read as f16 instead of bf16: a 16-bit load is widened to f32 as it "
           "is read, and the tensor's dtype follows the load")
_R_STAGE16 = ("the residual's stage becomes f16: TMA brings R as f16 (the tensor's dtype follows "
              "the view) and the (M, N) stage load widens f16 pairs to f32 as bf16 ones")
_R_STAGE_SWIZZLE = ("R's stage is written by TMA (and stmatrix) and read by ldmatrix (and a TMA "
                    "store): all follow the view's swizzle tag (the tensor maps' swizzle, the "
                    "rows' 16-byte chunk XOR)")
_F32_STAGE_SWIZZLE = ("an f32 stage filled by TMA and read by ld.shared at the swizzled address of "
                      "each element: every swizzle mode (or none) reads the same values")
_C_STAGE_SWIZZLE = ("a staging stage written by stmatrix and copied out by a TMA store: both "
                    "follow the view's swizzle tag (the rows' 16-byte chunk XOR, the tensor "
                    "map's swizzle)")
_BLOCKS_ANYWHERE = ("no MMA: plain bounds-checked loads and stores, tile arithmetic and column "
                    "reductions, which every family's tile layout lowers (shuffles, then SMEM "
                    "between named-barrier syncs)")
_TOKENS = ("one token more or fewer: every load and store is bounds-checked (a token past the "
           "end reads zeros, its output is skipped) and no barrier protocol depends on the trip "
           "count; the numbers change, the kernel's safety does not")
_SPLIT_F16 = ("the split_store converts the f32 sum to f16 instead of bf16: C is an f16 tensor, "
              "the partials and their reduction stay f32")
_SWIZZLE_STORE = ("128-byte rows with a 64B swizzle: `view[s].store` writes and the wgmma "
                  "descriptor reads the stage as two 64B-swizzled column blocks, the layout of "
                  "the same tag (the chunked KDA prefill writes every stage with `store`)")
_NO_SWIZZLE_WGMMA = ("an unswizzled stage read K-major by wgmma: a correct schedule whose "
                     "sm_90a code generation is not written yet (CAKE-H100 from verify-lowering, "
                     "not a verdict on the schedule)")
_LEVELS = ("one level of the block inverse more or fewer: 7 adds a level whose mask is empty, 5 "
           "leaves the 32-row halves unjoined (wrong numbers: the float64 model and the GPU tests "
           "see it); no barrier, stage or bound depends on the count")
_LEV_F32 = ("the level table read as f32 and compared with the level as a number: the same "
            "masks; the tensor's dtype follows the load (kda.py's int32 table is then refused at "
            "launch)")
_CHAIN_ANYWHERE = ("bounds-checked register loads, stores into SMEM, named-barrier syncs and "
                   "mma.sync bf16 -> f32 (kept for register accumulators on sm_100a/103a) exist "
                   "on every target from sm_80 on, and 32 KiB of SMEM fits each")
_LOCAL_COPY = ("a centroid stage each CTA copies for itself instead of receiving it by "
               "multicast: every CTA's barrier still gets the whole stage, and the releases to "
               "both CTAs only synchronise the pair more than needed")
#: Mutants that still verify, each with the reason it is a legal kernel. Keys are
#: file:operator:line:detail; an edit to a kernel renumbers its entries.
_TRANSITIVE = ("wg1 waits on `turn1`, which wg0 arrives on only after its own wait on `full` for the "
               "same stage, so wg1's MMA is ordered after the TMA load through wg0 (release/"
               "acquire is transitive), and wg0 consumes every phase of `full`")

_TRANSITIVE_Q = ("wg1 waits on `turn1` before its first MMA of a tile, which wg0 arrives on only "
                 "after its own wait on `q_full` for that tile (whose phase needs both Q loads), "
                 "so wg1's MMA reads sq1 after the TMA load through wg0 (release/acquire is "
                 "transitive), and wg0 consumes every phase of `q_full`")

_Q_BY_K_RING = ("the producer's wait on `q_empty` before refilling a Q stage is also implied by "
                "its wait on `k_empty` just before: that phase completes only once the consumers "
                "released a K stage of the previous tile, after they finished every S (the only "
                "reader of Q) of the tile before it, whose Q stage this is")

_S_BY_P = ("the MMA warp's wait on `s_empty` before S_(j+1) is also implied by its wait on "
           "`p_full` before P_j·V_j: the softmax arrives on `p_full` only after its last read of "
           "S_j from TMEM")
_P_BY_S = ("the softmax's wait on `p_empty` before it overwrites P is also implied by its wait "
           "on `s_full`: that tcgen05.commit fires once every MMA the warp issued before it has "
           "completed, P_(j-1)·V_(j-1) (the reader of P) included")
_P_UNSWIZZLED = ("the P stage is written by `store` and read only by the MMA: unswizzled, the "
                 "store writes and the descriptor reads the same plain layout (docs/language.md, "
                 "stage.store); only bank conflicts differ")
_STAGED_C = ("the C staging view is written by `store` and read only by the TMA store, whose "
             "tensor map takes the view's swizzle: 64B-swizzled or plain rows, the store writes "
             "and the copy reads the same layout; only bank conflicts differ")

_O_STAGE = ("the O staging view is written by `store` and read only by the TMA store, whose "
            "tensor map takes the view's swizzle (and its column blocks): with any swizzle, or "
            "none, the store writes and the copy reads the same layout; only bank conflicts "
            "differ")

_LAST_V_RELEASE = ("the consumers' release of the CTA's last V stage, after the tile loop, is waited "
                   "for by no one: the producer loaded that V last and has nothing more to load, so "
                   "arriving on another stage's `v_empty` there changes no wait (the commit's wgmma "
                   "wait, which the O store needs, is the same for any stage)")

LEGAL: dict[str, str] = {
    "examples/corpus/gemm_ring_dynamic.cake:move_tmem:15:+64": _TMEM,
    "examples/corpus/gemm_ring_dynamic.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/gemm_ring_dynamic.cake:swizzle:13:128b->64b": _SWIZZLE,
    "examples/corpus/gemm_ring_dynamic.cake:swizzle:14:128b->64b": _SWIZZLE,
    "examples/corpus/hopper_gemm.cake:retarget:4:sm_100a": _MMA_SYNC,
    "examples/corpus/hopper_gemm.cake:retarget:4:sm_103a": _MMA_SYNC,
    "examples/corpus/hopper_gemm.cake:swizzle:12:128b->64b": _SWIZZLE,
    "examples/corpus/hopper_gemm.cake:swizzle:13:128b->64b": _SWIZZLE,
    "examples/corpus/long_static_ring.cake:move_tmem:9:+64": _TMEM,
    "examples/corpus/long_static_ring.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/long_static_ring.cake:swizzle:7:128b->64b": _SWIZZLE,
    "examples/corpus/long_static_ring.cake:swizzle:8:128b->64b": _SWIZZLE,
    "examples/corpus/peeled_prologue.cake:move_tmem:10:+64": _TMEM,
    "examples/corpus/peeled_prologue.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/peeled_prologue.cake:swizzle:8:128b->64b": _SWIZZLE,
    "examples/corpus/peeled_prologue.cake:swizzle:9:128b->64b": _SWIZZLE,
    "examples/corpus/persistent_gemm.cake:move_tmem:16:+64": _TMEM,
    "examples/corpus/persistent_gemm.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/persistent_gemm.cake:swizzle:14:128b->64b": _SWIZZLE,
    "examples/corpus/persistent_gemm.cake:swizzle:15:128b->64b": _SWIZZLE,
    "examples/corpus/ring4_static.cake:move_tmem:9:+64": _TMEM,
    "examples/corpus/ring4_static.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/ring4_static.cake:swizzle:7:128b->64b": _SWIZZLE,
    "examples/corpus/ring4_static.cake:swizzle:8:128b->64b": _SWIZZLE,
    "examples/corpus/split_epilogue.cake:move_tmem:12:+64": _TMEM,
    "examples/corpus/split_epilogue.cake:retarget:4:sm_103a": _SM103,
    "examples/corpus/split_epilogue.cake:swizzle:10:128b->64b": _SWIZZLE,
    "examples/corpus/split_epilogue.cake:swizzle:8:128b->64b": _SWIZZLE,
    "examples/corpus/split_epilogue.cake:swizzle:9:128b->64b": _SWIZZLE,
    "examples/seed_fragment.cake:dtype:5:bf16->f16": _DTYPE16,
    "examples/seed_fragment.cake:move_tmem:6:+64": _TMEM,
    "examples/seed_fragment.cake:retarget:1:sm_103a": _SM103,
    "examples/gemm_bf16.cake:retarget:15:sm_100a": _MMA_SYNC,
    "examples/gemm_bf16.cake:retarget:15:sm_103a": _MMA_SYNC,
    "examples/gemm_bf16.cake:swizzle:24:128b->64b": _SWIZZLE,
    "examples/gemm_bf16.cake:swizzle:25:128b->64b": _SWIZZLE,
    # The library's other GEMM routes share gemm_bf16's wgmma + 128b-TMA structure, so its
    # legal mutants (cakec/kernels/gemm_routes.json).
    "examples/gemm_bf16_128x128.cake:retarget:9:sm_100a": _MMA_SYNC,
    "examples/gemm_bf16_128x128.cake:retarget:9:sm_103a": _MMA_SYNC,
    "examples/gemm_bf16_128x128.cake:swizzle:18:128b->64b": _SWIZZLE,
    "examples/gemm_bf16_128x128.cake:swizzle:19:128b->64b": _SWIZZLE,
    "examples/gemm_bf16_skinny.cake:retarget:17:sm_100a": _MMA_SYNC,
    "examples/gemm_bf16_skinny.cake:retarget:17:sm_103a": _MMA_SYNC,
    "examples/gemm_bf16_skinny.cake:swizzle:26:128b->64b": _SWIZZLE,
    "examples/gemm_bf16_skinny.cake:swizzle:27:128b->64b": _SWIZZLE,
    "examples/gemm_bf16_skinny_n64.cake:retarget:5:sm_100a": _MMA_SYNC,
    "examples/gemm_bf16_skinny_n64.cake:retarget:5:sm_103a": _MMA_SYNC,
    "examples/gemm_bf16_skinny_n64.cake:swizzle:15:128b->64b": _SWIZZLE,
    "examples/gemm_bf16_skinny_n64.cake:swizzle:16:128b->64b": _SWIZZLE,
    # The split-K routes share the same wgmma + 128b-TMA structure (swap-AB: the operands'
    # roles exchanged), so the same legal mutants, and the sum may be stored as f16.
    **{f"examples/{f}.cake:{op}": why
       for f, lines in (("gemm_bf16_splitk", (17, 29, 30, 64)),
                        ("gemm_bf16_splitk_decode", (11, 23, 24, 57)),
                        ("gemm_bf16_splitk_swap", (16, 28, 29, 62)))
       for op, why in ((f"retarget:{lines[0]}:sm_100a", _MMA_SYNC),
                       (f"retarget:{lines[0]}:sm_103a", _MMA_SYNC),
                       (f"swizzle:{lines[1]}:128b->64b", _SWIZZLE),
                       (f"swizzle:{lines[2]}:128b->64b", _SWIZZLE),
                       (f"dtype:{lines[3]}:bf16->f16", _SPLIT_F16))},
    # The epilogue GEMMs share gemm_bf16's schedule, so its legal mutants.
    "examples/gemm_bias_gelu_cooperative.cake:retarget:20:sm_100a": _MMA_SYNC,
    "examples/gemm_bias_gelu_cooperative.cake:retarget:20:sm_103a": _MMA_SYNC,
    "examples/gemm_bias_gelu_cooperative.cake:swizzle:30:128b->64b": _SWIZZLE,
    "examples/gemm_bias_gelu_cooperative.cake:swizzle:31:128b->64b": _SWIZZLE,
    "examples/gemm_fp8_cooperative.cake:retarget:20:sm_100a": _MMA_SYNC_F8,
    "examples/gemm_fp8_cooperative.cake:retarget:20:sm_103a": _MMA_SYNC_F8,
    "examples/gemm_fp8_cooperative.cake:swizzle:30:128b->64b": _SWIZZLE,
    "examples/gemm_fp8_cooperative.cake:swizzle:31:128b->64b": _SWIZZLE,
    **{f"examples/gemm_bf16_pingpong.cake:swizzle:{n}:128b->64b": _SWIZZLE for n in (27, 28)},
    **{f"examples/gemm_bf16_pingpong.cake:retarget:17:{t}": _MMA_SYNC
       for t in ("sm_100a", "sm_103a")},
    **{f"examples/{f}.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f in ("gemm_bias_gelu", "gemm_fp8") for n in (22, 23)},
    **{f"examples/gemm_bias_gelu.cake:retarget:12:{t}": _MMA_SYNC for t in ("sm_100a", "sm_103a")},
    # gemm_bias_gelu's staged-epilogue schedule: the same ring, retarget; its C staging view.
    **{f"examples/gemm_bias_gelu_staged.cake:swizzle:{n}:128b->64b": _SWIZZLE for n in (20, 21)},
    **{f"examples/gemm_bias_gelu_staged.cake:swizzle:22:128b->{s}": _STAGED_C
       for s in ("64b", "None")},
    **{f"examples/gemm_bias_gelu_staged.cake:retarget:10:{t}": _MMA_SYNC
       for t in ("sm_100a", "sm_103a")},
    **{f"examples/gemm_fp8.cake:retarget:12:{t}": _MMA_SYNC_F8 for t in ("sm_100a", "sm_103a")},
    **{f"examples/gemm_bias_gelu.cake:stage_index:{n}:stage=j % 2->0": _OWN_STAGE
       for n in (73, 75, 103)},
    **{f"examples/gemm_fp8.cake:stage_index:{n}:stage=j % 2->0": _OWN_STAGE
       for n in (74, 76, 105)},
    # The attention kernels' Q, K and V views (register-A wgmma keeps them on sm_90a), the
    # d64 ping-pong's wg1 wait on `q_full` (its turn orders it after wg0's), and the
    # producer's wait on `q_empty` (its wait on `k_empty` orders it).
    **{f"examples/attention/fmha_fwd_sm90.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (51, 52, 53)},
    **{f"examples/attention/fmha_fwd_sm90_d64.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (27, 28, 29, 30)},
    "examples/attention/fmha_fwd_sm90_d64.cake:delete_wait:167": _TRANSITIVE_Q,
    "examples/attention/fmha_fwd_sm90.cake:delete_wait:91": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm100.cake:delete_wait:81": _S_BY_P,
    "examples/attention/fmha_fwd_sm100.cake:delete_wait:112": _P_BY_S,
    "examples/attention/fmha_fwd_sm100.cake:move_tmem:45:+64": _TMEM,
    "examples/attention/fmha_fwd_sm100.cake:retarget:24:sm_103a": _SM103,
    "examples/attention/fmha_fwd_sm100.cake:swizzle:41:128b->None": _P_UNSWIZZLED,
    **{f"examples/attention/fmha_fwd_sm100.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (40, 41, 42, 43)},
    "examples/attention/fmha_fwd_sm90_d64.cake:delete_wait:73": _Q_BY_K_RING,
    # The overlapped D128 schedules (the tile before's last P·V under the next S_0, or not):
    # the same Q, K, V views and q_empty wait, and their O stage.
    **{f"examples/attention/fmha_fwd_sm90_{f}.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f in ("overlap", "xt") for n in (58, 59, 60)},
    **{f"examples/attention/fmha_fwd_sm90_{f}.cake:delete_wait:99": _Q_BY_K_RING
       for f in ("overlap", "xt")},
    "examples/attention/fmha_fwd_sm90_xt.cake:stage_index:215:stage=last_l->0": _LAST_V_RELEASE,
    # The overlapped D64 ping-pong: fmha_fwd_sm90_d64.cake's views and waits, and its O stages.
    **{f"examples/attention/fmha_fwd_sm90_d64_overlap.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (26, 27, 28, 29)},
    "examples/attention/fmha_fwd_sm90_d64_overlap.cake:delete_wait:74": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm90_d64_overlap.cake:delete_wait:197": _TRANSITIVE_Q,
    **{f"examples/attention/fmha_fwd_sm90_d64_overlap.cake:swizzle:{n}:128b->{to}": _O_STAGE
       for n in (30, 31) for to in ("64b", "None")},
    **{f"examples/attention/fmha_fwd_sm90_{f}.cake:swizzle:61:128b->{to}": _O_STAGE
       for f in ("overlap", "xt") for to in ("64b", "None")},
    # The lazy-rescale forms (`if lm.any(...)`): the same views and waits, fewer header lines.
    **{f"examples/attention/fmha_fwd_sm90_d64_lazy.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (24, 25, 26, 27)},
    "examples/attention/fmha_fwd_sm90_d64_lazy.cake:delete_wait:72": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm90_d64_lazy.cake:delete_wait:198": _TRANSITIVE_Q,
    **{f"examples/attention/fmha_fwd_sm90_d64_lazy.cake:swizzle:{n}:128b->{to}": _O_STAGE
       for n in (28, 29) for to in ("64b", "None")},
    **{f"examples/attention/fmha_fwd_sm90_overlap_lazy.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (16, 17, 18)},
    "examples/attention/fmha_fwd_sm90_overlap_lazy.cake:delete_wait:57": _Q_BY_K_RING,
    **{f"examples/attention/fmha_fwd_sm90_overlap_lazy.cake:swizzle:19:128b->{to}": _O_STAGE
       for to in ("64b", "None")},
    # The head-major candidates (the tile order alone differs): the same views and waits.
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}_hm.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f in ("overlap", "lazy") for n in (18, 19, 20, 21)},
    "examples/attention/fmha_fwd_sm90_d64_overlap_hm.cake:delete_wait:74": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm90_d64_overlap_hm.cake:delete_wait:201": _TRANSITIVE_Q,
    "examples/attention/fmha_fwd_sm90_d64_lazy_hm.cake:delete_wait:74": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm90_d64_lazy_hm.cake:delete_wait:204": _TRANSITIVE_Q,
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}_hm.cake:swizzle:{n}:128b->{to}": _O_STAGE
       for f in ("overlap", "lazy") for n in (22, 23) for to in ("64b", "None")},
    # The same with a three-stage K/V ring: the q_empty wait now guards Q (the K ring no
    # longer implies it), the other survivors are the head-major kernels'.
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}_hm3.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f in ("overlap", "lazy") for n in (20, 21, 22, 23)},
    "examples/attention/fmha_fwd_sm90_d64_overlap_hm3.cake:delete_wait:204": _TRANSITIVE_Q,
    "examples/attention/fmha_fwd_sm90_d64_lazy_hm3.cake:delete_wait:207": _TRANSITIVE_Q,
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}_hm3.cake:swizzle:{n}:128b->{to}": _O_STAGE
       for f in ("overlap", "lazy") for n in (24, 25) for to in ("64b", "None")},
    # The one-compare-mask candidates (MASK_CANDIDATES): the views, waits and O stages of the
    # kernels they copy, at their own lines.
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f, first in (("lazy_hm3m", 22), ("lazy_hm4m", 19), ("overlap_m", 22))
       for n in range(first, first + 4)},
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}.cake:swizzle:{n}:128b->{to}": _O_STAGE
       for f, first in (("lazy_hm3m", 26), ("lazy_hm4m", 23), ("overlap_m", 26))
       for n in (first, first + 1) for to in ("64b", "None")},
    **{f"examples/attention/fmha_fwd_sm90_d64_{f}.cake:delete_wait:{n}": _TRANSITIVE_Q
       for f, n in (("lazy_hm3m", 208), ("lazy_hm4m", 205), ("overlap_m", 192))},
    "examples/attention/fmha_fwd_sm90_d64_overlap_m.cake:delete_wait:70": _Q_BY_K_RING,
    **{f"examples/attention/fmha_fwd_sm90_{f}.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for f in ("overlap_lazy_m", "overlap_lazy_hm_m") for n in (19, 20, 21)},
    **{f"examples/attention/fmha_fwd_sm90_{f}.cake:swizzle:22:128b->{to}": _O_STAGE
       for f in ("overlap_lazy_m", "overlap_lazy_hm_m") for to in ("64b", "None")},
    "examples/attention/fmha_fwd_sm90_overlap_lazy_m.cake:delete_wait:60": _Q_BY_K_RING,
    "examples/attention/fmha_fwd_sm90_overlap_lazy_hm_m.cake:delete_wait:65": _Q_BY_K_RING,
    **{f"examples/attention/fmha_fwd_sm90_overlap_lazy_hm.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in (16, 17, 18)},
    "examples/attention/fmha_fwd_sm90_overlap_lazy_hm.cake:delete_wait:62": _Q_BY_K_RING,
    **{f"examples/attention/fmha_fwd_sm90_overlap_lazy_hm.cake:swizzle:19:128b->{to}": _O_STAGE
       for to in ("64b", "None")},
    "examples/gemm_sm80.cake:retarget:13:sm_100a": _CP_ASYNC,
    "examples/gemm_sm80.cake:retarget:13:sm_103a": _CP_ASYNC,
    "examples/gemm_sm80.cake:retarget:13:sm_120a": _CP_ASYNC,
    "examples/gemm_sm80.cake:retarget:13:sm_121a": _CP_ASYNC,
    "examples/gemm_sm80.cake:retarget:13:sm_89": _CP_ASYNC,
    "examples/gemm_sm80.cake:retarget:13:sm_90a": _CP_ASYNC_WGMMA,
    # The SMEM-staged chain: register loads, stores and mma.sync, which every target from sm_80
    # on lowers; an extra K step reads only columns past K, which T.load fills with zeros.
    **{f"examples/chain_sm80.cake:dtype:{n}:bf16->f16": _LOAD16 for n in (24, 28, 30)},
    **{f"examples/chain_sm80.cake:retarget:10:{t}": _CHAIN_ANYWHERE
       for t in ("sm_89", "sm_100a", "sm_103a", "sm_120a", "sm_121a")},
    "examples/chain_sm80.cake:trip_count:26:stop+1": ("one K step more reads only columns past "
                                                      "K, which T.load fills with zeros: the "
                                                      "sum is unchanged"),
    "examples/gemm_tcgen05.cake:move_tmem:24:+64": _TMEM,
    "examples/gemm_tcgen05.cake:retarget:13:sm_103a": _SM103,
    "examples/gemm_tcgen05.cake:swizzle:22:128b->64b": _SWIZZLE,
    "examples/gemm_tcgen05.cake:swizzle:23:128b->64b": _SWIZZLE,
    "examples/corpus/kmeans_pingpong.cake:delete_wait:80": _TRANSITIVE,
    "examples/corpus/kmeans_pingpong.cake:swizzle:17:128b->64b": _SWIZZLE,
    "examples/corpus/kmeans_pingpong.cake:swizzle:18:128b->64b": _SWIZZLE,
    "examples/corpus/kmeans_pingpong.cake:swizzle:19:128b->64b": _SWIZZLE,
    "examples/corpus/kmeans_pairs.cake:swizzle:23:128b->64b": _SWIZZLE,
    "examples/corpus/kmeans_pairs.cake:swizzle:24:128b->64b": _SWIZZLE,
    "examples/kmeans_assign.cake:swizzle:32:128b->64b": _SWIZZLE,
    "examples/kmeans_assign.cake:swizzle:33:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_d64.cake:swizzle:15:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_d64.cake:swizzle:16:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_r128.cake:swizzle:17:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_r128.cake:swizzle:18:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_k32.cake:swizzle:20:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_k32.cake:swizzle:21:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_pp.cake:swizzle:30:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_pp.cake:swizzle:31:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_pp.cake:swizzle:32:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_pp.cake:delete_wait:106": _TURN_AFTER_WAIT,
    "examples/kmeans_assign_mc.cake:swizzle:36:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_mc.cake:swizzle:37:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_mc.cake:cluster:62:local": _LOCAL_COPY,
    "examples/kmeans_assign_mc.cake:cluster:63:local": _LOCAL_COPY,
    "examples/kmeans_assign_sm100.cake:move_tmem:41:+64": _TMEM,
    "examples/kmeans_assign_sm100.cake:retarget:28:sm_103a": _SM103,
    "examples/kmeans_assign_sm100.cake:swizzle:37:128b->64b": _SWIZZLE,
    "examples/kmeans_assign_sm100.cake:swizzle:38:128b->64b": _SWIZZLE,
    "examples/kmeans_csq.cake:retarget:7:sm_100a": _NO_MMA,
    "examples/kmeans_csq.cake:retarget:7:sm_103a": _NO_MMA,
    "examples/kmeans_csq.cake:retarget:7:sm_120a": _NO_MMA,
    "examples/kmeans_csq.cake:retarget:7:sm_121a": _NO_MMA,
    "examples/kmeans_csq.cake:swizzle:14:128b->64b": _SUM_SQ_LAYOUT,
    "examples/kmeans_csq.cake:swizzle:14:128b->None": _SUM_SQ_LAYOUT,
    "examples/ring_pipeline.cake:dtype:13:bf16->f16": _DTYPE16,
    "examples/ring_pipeline.cake:move_tmem:14:+64": _TMEM,
    "examples/ring_pipeline.cake:retarget:7:sm_103a": _SM103,
    # gemm_residual: gemm_bias_gelu's ping-pong schedule; R comes into SMEM by TMA and is read
    # back by `sr[0].load()` through the layout of the view's own swizzle tag.
    "examples/gemm_residual.cake:dtype:29:bf16->f16": _R_STAGE16,
    "examples/gemm_residual.cake:swizzle:27:128b->64b": _SWIZZLE,
    "examples/gemm_residual.cake:swizzle:28:128b->64b": _SWIZZLE,
    **{f"examples/gemm_residual.cake:swizzle:29:128b->{to}": _R_STAGE_SWIZZLE
       for to in ("64b", "None")},
    # gemm_fp8_staged: gemm_fp8's schedule with C staged in one shared stage, copied by TMA.
    **{f"examples/gemm_fp8_staged.cake:retarget:11:{t}": _MMA_SYNC_F8 for t in ("sm_100a", "sm_103a")},
    **{f"examples/gemm_fp8_staged.cake:swizzle:{n}:128b->64b": _SWIZZLE for n in (21, 22)},
    **{f"examples/gemm_fp8_staged.cake:swizzle:23:128b->{to}": _C_STAGE_SWIZZLE
       for to in ("64b", "None")},
    # gemm_residual_staged: the same, C written back through R's stage and copied out by TMA.
    "examples/gemm_residual_staged.cake:swizzle:18:128b->64b": _SWIZZLE,
    "examples/gemm_residual_staged.cake:swizzle:19:128b->64b": _SWIZZLE,
    **{f"examples/gemm_residual_staged.cake:swizzle:20:128b->{to}": _R_STAGE_SWIZZLE
       for to in ("64b", "None")},
    # gemm_residual_cooperative has gemm_bf16's schedule; its residual is an (M, N) load.
    "examples/gemm_residual_cooperative.cake:dtype:59:bf16->f16": _LOAD16,
    "examples/gemm_residual_cooperative.cake:retarget:15:sm_100a": _MMA_SYNC,
    "examples/gemm_residual_cooperative.cake:retarget:15:sm_103a": _MMA_SYNC,
    "examples/gemm_residual_cooperative.cake:swizzle:25:128b->64b": _SWIZZLE,
    "examples/gemm_residual_cooperative.cake:swizzle:26:128b->64b": _SWIZZLE,
    # The KDA kernels: one warpgroup, register state, no MMA.
    **{f"examples/kda/kda_decode.cake:dtype:{n}:bf16->f16": _LOAD16 for n in (52, 53, 54)},
    **{f"examples/kda/kda_decode.cake:retarget:35:{t}": _BLOCKS_ANYWHERE
       for t in ("sm_100a", "sm_103a", "sm_120a", "sm_121a", "sm_80", "sm_89")},
    **{f"examples/kda/kda_decode_wide.cake:dtype:{n}:bf16->f16": _LOAD16 for n in (32, 33, 34)},
    **{f"examples/kda/kda_decode_wide.cake:retarget:15:{t}": _BLOCKS_ANYWHERE
       for t in ("sm_100a", "sm_103a", "sm_120a", "sm_121a", "sm_80", "sm_89")},
    # The TMA ring's f32 stage is written by TMA and read back by ld.shared at the address the
    # view's swizzle puts each element, so any swizzle (or none) reads the same values (only
    # the bank conflicts differ); `vb = w % 4` is the item's value-column block, not a stage
    # counter: % 3 reads and writes other columns under the same protocol (wrong values,
    # which test_kda_gpu.py catches; no schedule error for the verifier to find).
    **{f"examples/kda/kda_decode_ring.cake:swizzle:35:128b->{to}": _F32_STAGE_SWIZZLE
       for to in ("64b", "None")},
    "examples/kda/kda_decode_ring.cake:stage_index:68:%4->%3": "an item index, not a stage",
    **{f"examples/kda/kda_prefill_recurrent.cake:dtype:{n}:bf16->f16": _LOAD16
       for n in (39, 40, 42)},
    **{f"examples/kda/kda_prefill_recurrent.cake:retarget:19:{t}": _BLOCKS_ANYWHERE
       for t in ("sm_100a", "sm_103a", "sm_120a", "sm_121a", "sm_80", "sm_89")},
    "examples/kda/kda_prefill_recurrent.cake:trip_count:36:stop+1": _TOKENS,
    "examples/kda/kda_prefill_recurrent.cake:trip_count:36:stop-1": _TOKENS,
    **{f"examples/kda/kda_prefill_chunked.cake:swizzle:{n}:128b->64b": _SWIZZLE_STORE
       for n in (52, 53, 54, 55, 56, 57, 59, 60, 61, 62, 63, 64, 65, 67, 68, 69, 70)},
    **{f"examples/kda/kda_prefill_chunked.cake:swizzle:{n}:128b->None": _NO_SWIZZLE_WGMMA
       for n in (54, 59, 60, 61, 65, 67, 68)},
    "examples/kda/kda_prefill_chunked.cake:trip_count:115:stop+1": _LEVELS,
    "examples/kda/kda_prefill_chunked.cake:trip_count:115:stop-1": _LEVELS,
    "examples/kda/kda_prefill_chunked.cake:dtype:118:i32->f32": _LEV_F32,
    # The sequence-split pair: the prep kernel is the chunked kernel's prep role (stages
    # written with `store`); the state kernel's ring is filled by TMA, its own S and U stages
    # by `store`.
    **{f"examples/kda/kda_prefill_prep.cake:swizzle:{n}:128b->64b": _SWIZZLE_STORE
       for n in range(30, 36)},
    "examples/kda/kda_prefill_prep.cake:swizzle:32:128b->None": _NO_SWIZZLE_WGMMA,
    "examples/kda/kda_prefill_prep.cake:trip_count:89:stop+1": _LEVELS,
    "examples/kda/kda_prefill_prep.cake:trip_count:89:stop-1": _LEVELS,
    # kda_prefill_prep_3cta.cake: the same tiles (`sx` in `skn`'s bytes, each in its own
    # layout: a reusing view holds its own data, docs/language.md)
    **{f"examples/kda/kda_prefill_prep_3cta.cake:swizzle:{n}:128b->64b": _SWIZZLE_STORE
       for n in (25, 26, 27, 28, 29, 31)},
    "examples/kda/kda_prefill_prep_3cta.cake:swizzle:27:128b->None": _NO_SWIZZLE_WGMMA,
    "examples/kda/kda_prefill_prep_3cta.cake:trip_count:85:stop+1": _LEVELS,
    "examples/kda/kda_prefill_prep_3cta.cake:trip_count:85:stop-1": _LEVELS,
    **{f"examples/kda/kda_prefill_state.cake:swizzle:{n}:128b->64b": _SWIZZLE
       for n in range(55, 61)},
    **{f"examples/kda/kda_prefill_state.cake:swizzle:{n}:128b->64b": _SWIZZLE_STORE
       for n in (63, 64)},
    "examples/kda/kda_prefill_state.cake:swizzle:63:128b->None": _NO_SWIZZLE_WGMMA,
    "examples/kda/kda_prefill_state.cake:stage_index:46:%2->%1": (
        "`half = j % 1`: every column group reads V's and writes O's first 64 values, a wrong "
        "value mapping but no stage or barrier of the ring changes"),
}


# ---- the test -----------------------------------------------------------------------------------


def _run(m: Mutant) -> bool:
    """Whether the mutant is rejected (any error, from any gate). The lowering's refusal
    (CAKE-H100, verify-lowering) is not a verdict on the schedule: a correct kernel on a target
    whose code generation lacks one of its constructs stays a legal mutant."""
    diags = verify_source(read_source(m.key.split(":")[0], m.text)).sink.diagnostics
    return any(d.severity == "error" and d.code != "CAKE-H100" for d in diags)


ALL = [m for path in KERNELS for m in mutants(path)]


def _file(key: str) -> str:
    return key.split(":")[0]


# One case per kernel (a few seconds to a minute each), so parallel test workers share the
# walk; together they check every mutant against the whole allow-list.
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_misbehaving_mutant_is_rejected(path: Path):
    rel = path.relative_to(ROOT).as_posix()
    mine = [m for m in ALL if _file(m.key) == rel]
    survivors = {m.key for m in mine if not _run(m)}
    by_op = Counter(m.key.split(":")[1] for m in mine)
    rejected_by_op = Counter(m.key.split(":")[1] for m in mine if m.key not in survivors)
    print(f"\nmutation test: {len(mine) - len(survivors)} of {len(mine)} mutants of {rel} "
          f"rejected ({(len(mine) - len(survivors)) / max(len(mine), 1):.1%})")
    for op in sorted(by_op):
        print(f"  {op:12} {rejected_by_op[op]:4} / {by_op[op]:4}")
    for key in sorted(survivors):
        print(f"  legal: {key}: {LEGAL.get(key, '??')}")
    legal = {key for key in LEGAL if _file(key) == rel}
    unexplained = sorted(survivors - legal)
    assert not unexplained, "mutants that verify but are not known to be legal:\n" + "\n".join(
        unexplained)
    # A mutant known to be legal that is now rejected is a false positive (or a stale entry).
    stale = sorted(legal - survivors)
    assert not stale, "allow-listed mutants that do not verify:\n" + "\n".join(stale)


def test_every_allow_listed_mutant_is_generated():
    # The per-kernel cases above only see entries of their kernel: an entry naming a kernel,
    # operator, line or detail that no longer yields a mutant is stale too.
    stale = sorted(LEGAL.keys() - {m.key for m in ALL})
    assert not stale, "allow-listed mutants that are never generated:\n" + "\n".join(stale)


def test_mutants_are_generated_for_every_operator():
    ops = {m.key.split(":")[1] for m in ALL}
    assert ops == {op.__name__ for op in OPERATORS}
    assert len(KERNELS) >= 7
