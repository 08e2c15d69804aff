"""Kimi Delta Attention on the H200: ours (cakec.kernels.kda) against fla (fla-core 0.6.0),
with a device copy of the same bytes timed in the same run as the bandwidth yardstick.

Decode (issue 15): one token per sequence against a [B, HV, 128, 128] f32 state, at
B ∈ {1, 8, 64, 256} and HV ∈ {16, 32} (H = HV): `kda_decode` (new state into its own buffer)
vs fla `fused_recurrent_kda` (which does the same), and `dst.copy_(src)` of a tensor the size
of the state (reads and writes what a decode step must). Correctness first against the
float32 recurrence (examples/kda/kda_decode.py), on fresh inputs with realistic gates
(g = −softplus(·), β = sigmoid(·)). Prints ms, ours / fla, GB/s of the step's bytes and
that as a share of the copy's GB/s.

Prefill: every prefill kernel but the token-by-token one (cakec.kernels.kda.PREFILL_KERNELS)
vs fla `chunk_kda` at (B, T, H) ∈ {(1, 8192, 16), (1, 8192, 32), (4, 4096, 32), (1, 32768, 8),
(8, 2048, 16)} (HV = H) and variable-length batches (VARLEN_ROWS; there also kda_prefill's
default, grouped and with every sequence padded to the longest), each checked against
chunk_kda (o, final state) and, at 8x2048x16, the float32 recurrence. Prints ms, fla / ours and TFLOP/s by
the chunked-form count of ../shared/notes/KDA.md (6·C·D² + 8·C²·D per chunk of C = 64 and
head). First, short sequences (T ∈ SHORT_T, B = 8, H = 16) for every prefill kernel, the
recurrent one included, kda_prefill's default pick and fla side by side
(cakec.kernels.kda.CHUNKED_MIN_T and SPLIT_MIN_T are chosen from these rows). At the long
shapes the split kernel's launches are also timed alone (prep / state, and the state
pass in cakec.kernels.kda.state_segments' count of segments, checked against chunk_kda). Every row is
printed as soon as it is measured.

    python3 bench/kda.py [--out DIR] [--decode-only | --prefill-only] [--no-short]
        [--kernels kda_prefill_split,...] [--shapes 1x32768x8,varlen5x16,...]
    compute-sanitizer --tool racecheck python3 bench/kda.py --sanitize
    (needs torch, fla-core and an sm_90a GPU)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
O_TOL, S_TOL = 2e-2, 1e-2


def example():
    from cakec.api import load_example

    return load_example(ROOT / "examples" / "kda" / "kda_decode.cake")


def rel(a, b) -> float:
    return float((a.float() - b.float()).norm() / b.float().norm())


def decode_rows(ex) -> list[dict]:
    import torch
    from fla.ops.kda import fused_recurrent_kda

    from cakec.api import time_ms
    from cakec.kernels.kda import kda_decode

    rows = []
    for hv in (16, 32):
        for b in (1, 8, 64, 256):
            shape = {"B": b, "H": hv, "HV": hv}
            x = ex.decode_inputs(b, hv, hv, "cuda")
            new = torch.empty_like(x["state"])
            out = torch.empty_like(x["v"])
            o = kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"], out=out,
                           out_state=new)
            ref_o, ref_s = ex.reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
            err_o, err_s = rel(o, ref_o), rel(new, ref_s)
            src = torch.empty_like(x["state"])
            dst = torch.empty_like(src)
            fns = {
                "cake": lambda: kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                           x["state"], out=out, out_state=new),
                "fla": lambda: fused_recurrent_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                                   initial_state=x["state"],
                                                   output_final_state=True),
                "copy": lambda: dst.copy_(src),
            }
            ms = time_ms(fns)
            nbytes = ex.state_bytes(shape)
            copy_bytes = 2 * src.numel() * 4
            gbs = nbytes / ms["cake"] / 1e6
            copy_gbs = copy_bytes / ms["copy"] / 1e6
            rows.append({**shape, "cake_ms": ms["cake"], "fla_ms": ms["fla"],
                         "copy_ms": ms["copy"], "x_fla": ms["fla"] / ms["cake"],
                         "gbs": gbs, "copy_gbs": copy_gbs, "pct_copy": 100 * gbs / copy_gbs,
                         "err_o": err_o, "err_s": err_s,
                         "ok": err_o <= O_TOL and err_s <= S_TOL})
    return rows


def show_decode(rows: list[dict]) -> None:
    print("\ndecode: one token, state [B, HV, 128, 128] f32 (H = HV); ms are CUDA-event medians")
    print(f"{'B':>4} {'HV':>3} | {'cake ms':>8} {'fla ms':>8} {'x fla':>6} | {'GB/s':>7} "
          f"{'copy GB/s':>9} {'% copy':>6} | {'err o':>8} {'err S':>8}")
    for r in rows:
        print(f"{r['B']:>4} {r['HV']:>3} | {r['cake_ms']:8.4f} {r['fla_ms']:8.4f} "
              f"{r['x_fla']:6.2f} | {r['gbs']:7.0f} {r['copy_gbs']:9.0f} {r['pct_copy']:5.1f}% | "
              f"{r['err_o']:8.1e} {r['err_s']:8.1e}{'' if r['ok'] else '  WRONG'}")
    geo = math.exp(sum(math.log(r["x_fla"]) for r in rows) / len(rows))
    print(f"geomean ours/fla speedup: {geo:.2f}x (issue 15 asks ≥ 1.3x; ≥ 80% of the copy "
          "at B = 256)")


PREFILL_SHAPES = [(1, 8192, 16), (1, 8192, 32), (4, 4096, 32), (1, 32768, 8), (8, 2048, 16)]
#: Variable-length batches by row name (H = 16 each: fla autotunes once per head count, not
#: per length): the issue's ragged row (one sequence shorter than a chunk), many short
#: sequences (16..515 tokens), one long among short and mid ones, one sequence alone.
VARLEN_ROWS = {"varlen5x16": [3000, 17, 1024, 4000, 129],
               "varlen64x16": [16 + (37 * i) % 500 for i in range(64)],
               "varlen9x16": [6000, 700, 300, 64, 65, 33, 1, 900, 100],
               "varlen1x16": [8170]}
#: At the varlen rows, besides each kernel named (as VARLEN_GROUPED says): kda_prefill's
#: default grouped (cakec/kernels/kda_varlen.py), and the same with VARLEN_GROUPED off (every sequence padded
#: to the longest, the path before 2026-12-05).
VARLEN_EXTRA = ("default", "default_padded")
#: Chunked-form FLOP per token and head at C = 64, D = 128 (KDA.md).
FLOP_PER_TOKEN = 6 * 128 * 128 + 8 * 64 * 128
#: The kernels timed at the long shapes: every prefill kernel but the token-by-token one,
#: which takes seconds there (it is timed at the short rows, where it may win).
SLOW = "kda_prefill_recurrent"


#: The split kernel's launches, timed alone at the long shapes beside the whole entry: the
#: prep, the state pass in one segment and in state_segments' count (the same when that is 1).
PHASES = ("split:prep", "split:state", "split:state_segments")
#: Interleaved timing rounds per shape (fla's autotuning and the builds take most of a run).
ROUNDS = 2
#: The prefill kernels a run measures (--kernels narrows it).
KERNELS: list[str] = []
#: The long prefill rows a run measures by name (`1x8192x16`, `varlen5x16`; --shapes narrows
#: them; empty: every one). fla autotunes at each new shape (over a minute at the first), so a
#: short device call can take the rows it owes a few at a time.
SHAPES: list[str] = []


def long_kernels() -> tuple[str, ...]:
    return tuple(k for k in KERNELS if k != SLOW)


def say(text: str) -> None:
    """Print at once: a run cut short by its time limit still shows every finished row."""
    print(text, flush=True)


def prefill_inputs(b: int, t: int, h: int) -> dict:
    """Fresh inputs with realistic gates: g = −softplus(·), β = sigmoid(·)."""
    import torch
    import torch.nn.functional as F

    return {"q": F.normalize(torch.randn(b, t, h, 128, device="cuda"), dim=-1).bfloat16(),
            "k": F.normalize(torch.randn(b, t, h, 128, device="cuda"), dim=-1).bfloat16(),
            "v": torch.randn(b, t, h, 128, device="cuda").bfloat16(),
            "g": -F.softplus(torch.randn(b, t, h, 128, device="cuda") - 2.0),
            "beta": torch.sigmoid(torch.randn(b, t, h, device="cuda"))}


def call(kda, x: dict, cu_seqlens, kernel: str):
    """kda_prefill with `kernel` named, or one of VARLEN_EXTRA: (o, final state)."""
    if kernel not in VARLEN_EXTRA:
        return kda.kda_prefill(**x, cu_seqlens=cu_seqlens, output_final_state=True,
                               kernel=kernel)
    before = kda.VARLEN_GROUPED
    kda.VARLEN_GROUPED = kernel == "default"
    try:
        return kda.kda_prefill(**x, cu_seqlens=cu_seqlens, output_final_state=True)
    finally:
        kda.VARLEN_GROUPED = before


def prefill_rows(ex, started: float) -> list[dict]:
    """Each long shape: every kernel of long_kernels() checked against chunk_kda (and, at
    8x2048x16, the float32 recurrence), then timed beside chunk_kda in the same rounds;
    each row printed as soon as it is measured."""
    import time

    import torch
    from fla.ops.kda import chunk_kda

    from cakec.api import time_ms
    from cakec.kernels import checks
    from cakec.kernels.kda import sm_count, split_launches, state_segments

    kernels = long_kernels()
    from cakec.kernels import kda

    cases = [(f"{b}x{t}x{h}", (b, t, h), None, b * t * h) for b, t, h in PREFILL_SHAPES]
    for name, lens in VARLEN_ROWS.items():
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), device="cuda")
        cases.append((name, (1, sum(lens), 16), cu, sum(lens) * 16))
    if SHAPES:  # in the order asked: a run cut short has the rows that matter most
        cases = sorted((c for c in cases if c[0] in SHAPES), key=lambda c: SHAPES.index(c[0]))
    say("\nprefill (H = HV; ms are CUDA-event medians; x = fla ms / ours; TFLOP/s by the "
        "chunked-form count; errors vs chunk_kda)")
    say(f"{'shape':>14} {'kernel':>22} | {'ms':>8} {'TFLOP/s':>7} {'x fla':>6} | "
        f"{'err o':>8} {'err S':>8} | fla ms  (elapsed s)")
    rows = []
    for name, shape, cu_seqlens, token_heads in cases:
        x = prefill_inputs(*shape)
        fo, fs = chunk_kda(**x, cu_seqlens=cu_seqlens, output_final_state=True)
        ref = ex.reference_kda(**x) if name == "8x2048x16" else None
        fns = {"fla": lambda: chunk_kda(**x, cu_seqlens=cu_seqlens, output_final_state=True)}
        errs = {}
        entries = kernels + (VARLEN_EXTRA if cu_seqlens is not None else ())
        for kernel in entries:
            o, s = call(kda, x, cu_seqlens, kernel)
            errs[kernel] = {"err_o_fla": rel(o, fo), "err_s_fla": rel(s, fs)}
            if ref is not None:
                errs[kernel] |= {"err_o_ref": rel(o, ref[0]), "err_s_ref": rel(s, ref[1]),
                                 "err_o_fla_ref": rel(fo, ref[0])}
            fns[kernel] = (lambda kernel=kernel: call(kda, x, cu_seqlens, kernel))
        segments = state_segments(*shape, sm_count(x["q"].device))  # H = HV
        if "kda_prefill_split" in kernels and cu_seqlens is None:
            launch = [split_launches(x["q"], x["k"], x["v"], x["g"], x["beta"], None,
                                     128 ** -0.5, checks.target("bench", x["q"]),
                                     segments=n) for n in sorted({1, segments})]
            launch[0][0]()  # the state pass reads what the prep wrote: time it on real tiles
            fns |= {PHASES[0]: launch[0][0], PHASES[1]: launch[0][1],
                    PHASES[2]: launch[-1][1]}
            launch[-1][0]()
            launch[-1][1]()
            seg_o, seg_s = launch[-1][2]()
            seg_err = f"o {rel(seg_o, fo):.1e} S {rel(seg_s, fs):.1e}"
        ms = time_ms(fns, rounds=ROUNDS)
        if PHASES[0] in ms:
            say(f"{name:>14} {'split: prep / state':>22} | {ms[PHASES[0]]:8.3f} / "
                f"{ms[PHASES[1]]:.3f} ms alone (the kernels without the entry's host work); "
                f"state in {segments} segments {ms[PHASES[2]]:.3f} ms ({seg_err})")
            rows.append({"shape": name, "kernel": "split_phases", "prep_ms": ms[PHASES[0]],
                         "state_ms": ms[PHASES[1]], "segments": segments,
                         "state_segmented_ms": ms[PHASES[2]],
                         "ok": rel(seg_o, fo) <= O_TOL and rel(seg_s, fs) <= S_TOL})
        flop = token_heads * FLOP_PER_TOKEN
        for kernel in entries:
            row = {"shape": name, "kernel": kernel, **errs[kernel], "cake_ms": ms[kernel],
                   "fla_ms": ms["fla"], "x_fla": ms["fla"] / ms[kernel],
                   "cake_tflops": flop / ms[kernel] / 1e9, "fla_tflops": flop / ms["fla"] / 1e9}
            row["ok"] = all(v <= (O_TOL if "_o" in k else S_TOL) for k, v in row.items()
                            if k.startswith("err_") and k != "err_o_fla_ref")
            rows.append(row)
            say(f"{name:>14} {kernel:>22} | {row['cake_ms']:8.3f} {row['cake_tflops']:7.2f} "
                f"{row['x_fla']:6.3f} | {row['err_o_fla']:8.1e} {row['err_s_fla']:8.1e} | "
                f"{row['fla_ms']:.3f}  ({time.time() - started:.0f}){'' if row['ok'] else '  WRONG'}")
            if "err_o_ref" in row:
                say(f"{'':>14}   vs the f32 recurrence: o {row['err_o_ref']:.1e}, S "
                    f"{row['err_s_ref']:.1e} (chunk_kda's o: {row['err_o_fla_ref']:.1e})")
    for kernel in kernels:
        mine = [r for r in rows if r["kernel"] == kernel]  # not the phase rows
        geo = math.exp(sum(math.log(r["x_fla"]) for r in mine) / len(mine))
        say(f"{kernel}: geomean fla/ours {geo:.3f}x, lowest {min(r['x_fla'] for r in mine):.3f}x "
            "(issue 15 asks ≥ 2.5x, none below 1.5x)")
    return rows


#: Short sequences (B = 8, H = 16): where each kernel wins (cakec.kernels.kda.CHUNKED_MIN_T
#: and SPLIT_MIN_T are chosen from these rows).
SHORT_T = [1, 16, 32, 64, 128, 256, 1024]


def short_rows(started: float) -> list[dict]:
    import time

    from fla.ops.kda import chunk_kda

    from cakec.api import time_ms
    from cakec.kernels.kda import default_kernel, kda_prefill

    say("\nshort sequences, B = 8, H = 16 (ms; the default is what kda_prefill picks)")
    say(f"{'T':>6} | " + " ".join(f"{k:>22}" for k in KERNELS)
        + f" {'default':>9} {'fla':>9}  picks")
    rows = []
    for t in SHORT_T:
        x = prefill_inputs(8, t, 16)
        fns = {name: (lambda name=name: kda_prefill(**x, output_final_state=True, kernel=name))
               for name in KERNELS}
        fns["default"] = lambda: kda_prefill(**x, output_final_state=True)
        fns["fla"] = lambda: chunk_kda(**x, output_final_state=True)
        row = {"T": t, **time_ms(fns, rounds=3), "picks": default_kernel(x["g"], 16)}
        rows.append(row)
        say(f"{t:>6} | " + " ".join(f"{row[k]:22.4f}" for k in KERNELS)
            + f" {row['default']:9.4f} {row['fla']:9.4f}  {row['picks']}  "
            f"({time.time() - started:.0f} s)")
    return rows


def sanitize_small() -> int:
    """One launch of each prefill kernel at a small ragged shape (B = 2, T = 130, H = 2,
    HV = 4, an initial state), and of the split state pass in 3 segments, and nothing else,
    for compute-sanitizer:
    `compute-sanitizer --tool racecheck python3 bench/kda.py --sanitize`."""
    import torch

    from cakec.kernels import checks
    from cakec.kernels.kda import kda_prefill, split_launches

    x = prefill_inputs(2, 130, 4)
    x["q"], x["k"] = x["q"][:, :, :2].contiguous(), x["k"][:, :, :2].contiguous()
    s0 = torch.randn(2, 4, 128, 128, device="cuda") * 0.1
    for kernel in KERNELS:
        kda_prefill(**x, initial_state=s0, output_final_state=True, kernel=kernel)
        torch.cuda.synchronize()
        say(f"{kernel}: launched")
    if "kda_prefill_split" in KERNELS:  # and its state pass in 3 segments of one chunk
        for launch in split_launches(x["q"], x["k"], x["v"], x["g"], x["beta"], s0, 128 ** -0.5,
                                     checks.target("bench", x["q"]), segments=3)[:2]:
            launch()
        torch.cuda.synchronize()
        say("kda_prefill_split, state pass in 3 segments: launched")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="folder for kda.json")
    part = ap.add_mutually_exclusive_group()
    part.add_argument("--decode-only", action="store_true")
    part.add_argument("--prefill-only", action="store_true")
    part.add_argument("--sanitize", action="store_true",
                      help="launch each prefill kernel once at a small shape, for "
                           "compute-sanitizer")
    ap.add_argument("--no-short", action="store_true",
                    help="skip the short-sequence rows (the long shapes and varlen only)")
    ap.add_argument("--shapes", default=None,
                    help="comma-separated long prefill rows to measure, in this order "
                         "(1x8192x16, ..., varlen5x16; default: every one)")
    ap.add_argument("--kernels", default=None,
                    help="comma-separated prefill kernels to measure (default: every one "
                         "of cakec.kernels.kda.PREFILL_KERNELS)")
    args = ap.parse_args()
    from cakec.kernels.kda import PREFILL_KERNELS

    KERNELS[:] = PREFILL_KERNELS if args.kernels is None else args.kernels.split(",")
    unknown = set(KERNELS) - set(PREFILL_KERNELS)
    if unknown:
        ap.error(f"unknown prefill kernels {sorted(unknown)}; choose from {PREFILL_KERNELS}")
    rows_known = [f"{b}x{t}x{h}" for b, t, h in PREFILL_SHAPES] + list(VARLEN_ROWS)
    SHAPES[:] = [] if args.shapes is None else args.shapes.split(",")
    if set(SHAPES) - set(rows_known):
        ap.error(f"unknown shapes {sorted(set(SHAPES) - set(rows_known))}; choose from "
                 f"{rows_known}")
    if args.sanitize:
        return sanitize_small()
    import time

    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    started = time.time()
    say(f"KDA on {torch.cuda.get_device_name()}")
    ex = example()
    rows = [] if args.prefill_only else decode_rows(ex)
    if rows:
        show_decode(rows)
    short = [] if args.decode_only or args.no_short else short_rows(started)
    pre = [] if args.decode_only else prefill_rows(ex, started)
    ok = all(r["ok"] for r in rows + pre)
    print("\ncorrectness:", "ok at every shape" if ok else "FAILED")
    if args.out:
        Path(args.out, "kda.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "decode": rows, "prefill": pre,
             "short": short, "ok": ok},
            indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
