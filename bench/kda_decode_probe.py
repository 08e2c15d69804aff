"""KDA decode at B = 256: where the time goes, by ablation. Variants of kda_decode_wide.cake's
text at 16 / 32 / 64 value columns per CTA, each with its body cut down to a prefix of the
step (copy: S in, S out; decay: S·exp(g); u: + Sᵀk and the rank-1 update; full: + o), and
the full step at a raised blocks_per_sm; timed beside fla and a device copy. Timing only (the
cut-down bodies are not the recurrence).

    python3 bench/kda_decode_probe.py [--ncu]   (needs torch, fla-core, an sm_90a GPU)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from kda import O_TOL, S_TOL, example, rel  # noqa: E402
from kda_decode_widths import width_source  # noqa: E402

CUTS = {
    "copy": ["s = S.load", "Sn.store"],
    "decay": ["s = S.load", "decay = ", "s = s * decay", "Sn.store"],
    "u": ["s = S.load", "beta = ", "k = K.load", "v = V.load", "decay = ", "s = s * decay",
          "u = beta", "s = s + k * u", "Sn.store"],
}


def variant(cols: int, cut: str = "full", bps: int = 1) -> str:
    text = width_source(cols)
    if bps > 1:
        text = text.replace('@cake.schedule(target="sm_90a")',
                            f'@cake.schedule(target="sm_90a", blocks_per_sm={bps})')
    if cut != "full":
        lines = text.splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "with step:")
        body = [i for i in range(start + 1, len(lines)) if not lines[i].strip().startswith("#")]
        keep = [i for i in body if any(ln in lines[i] for ln in CUTS[cut])]
        text = "\n".join(ln for i, ln in enumerate(lines) if i not in body or i in keep)
    return text


def pipe(cols: int, bps: int, form: str = "pipe") -> str:
    """A persistent form: bps CTAs per SM, each looping over blocks and loading the next
    block of S (pipe2: and the next block's vectors) before the current one's arithmetic."""
    text = (ROOT / "bench" / f"kda_decode_{form}.cake.txt").read_text()
    for old, new in (("COLS", cols), ("PER", 128 // cols), ("BPS", bps), ("CPS", bps)):
        text = text.replace(old, str(new))
    return text


VARIANTS = {f"{c}c_{cut}": (lambda c=c, cut=cut: variant(c, cut))
            for c in (16, 64) for cut in ("copy", "decay", "u", "full")}
VARIANTS |= {"32c_full": lambda: variant(32), "16c_bps8": lambda: variant(16, bps=8),
             "32c_bps6": lambda: variant(32, bps=6), "64c_bps4": lambda: variant(64, bps=4),
             "p16_5": lambda: pipe(16, 5), "p16_6": lambda: pipe(16, 6),
             "p16_7": lambda: pipe(16, 7), "p32_4": lambda: pipe(32, 4),
             "p64_2": lambda: pipe(64, 2), "q16_4": lambda: pipe(16, 4, "pipe2"),
             "q16_5": lambda: pipe(16, 5, "pipe2"), "q32_3": lambda: pipe(32, 3, "pipe2"),
             "q64_2": lambda: pipe(64, 2, "pipe2")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ncu", action="store_true", help="one launch of each, for ncu")
    ap.add_argument("--only", default=None, help="comma-separated variant names")
    args = ap.parse_args()
    import torch
    from fla.ops.kda import fused_recurrent_kda

    from cakec import api
    from cakec.api import time_ms
    ex = example()

    names = args.only.split(",") if args.only else list(VARIANTS)
    ks = {n: api.compile(source=VARIANTS[n]()) for n in names}
    for hv in ((32,) if args.ncu else (32, 16)):
        b = 256
        x = ex.decode_inputs(b, hv, hv, "cuda")
        new = torch.empty_like(x["state"])
        o = torch.empty(b * hv, 128, device="cuda", dtype=torch.bfloat16)
        flat = (x["q"].view(b * hv, 128), x["k"].view(b * hv, 128), x["v"].view(b * hv, 128),
                x["g"].view(b * hv, 128), x["beta"].view(b * hv), x["state"].view(-1, 128),
                new.view(-1, 128), o, b * hv, hv, hv, 128 ** -0.5)
        src, dst = torch.empty_like(x["state"]), torch.empty_like(x["state"])
        fns = {n: (lambda k=k: k(*flat)) for n, k in ks.items()}
        fns |= {"fla": lambda: fused_recurrent_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                                   initial_state=x["state"],
                                                   output_final_state=True),
                "copy": lambda: dst.copy_(src)}
        if not args.ncu:  # the full step's variants must be the recurrence
            ref_o, ref_s = ex.reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
            for n, k in ks.items():
                if "copy" in n or "decay" in n or n.endswith("_u"):
                    continue
                new.zero_()
                k(*flat)
                err = max(rel(o.view(b, 1, hv, 128), ref_o) / O_TOL, rel(new, ref_s) / S_TOL)
                print(f"  {n}: error {err:.3f} of the tolerance" + ("" if err <= 1 else " WRONG"))
        if args.ncu:
            for fn in fns.values():
                fn()
            torch.cuda.synchronize()
            continue
        ms = time_ms(fns)
        gbs = 2 * src.numel() * 4 / ms["copy"] / 1e6
        print(f"B={b} HV={hv}: copy {ms['copy']:.4f} ms ({gbs:.0f} GB/s)")
        for n, t in ms.items():
            print(f"  {n:>12} {t:8.4f} ms {100 * ms['copy'] / t:5.1f}% of copy", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
