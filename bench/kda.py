"""Kimi Delta Attention on the H200: ours (cakec.kernels.kda) against fla (fla-core 0.6.0),
with a device copy of the same bytes timed in the same run as the bandwidth yardstick.

Decode (issue 15): one token per sequence against a [B, HV, 128, 128] f32 state, at
B ∈ {1, 8, 64, 256} and HV ∈ {16, 32} (H = HV): `kda_decode` (new state into its own buffer)
vs fla `fused_recurrent_kda` (which does the same), and `dst.copy_(src)` of a tensor the size
of the state (reads and writes what a decode step must). Correctness first against the
float32 recurrence (examples/kda/kda_decode.py), on fresh inputs with realistic gates
(g = −softplus(·), β = sigmoid(·)). Prints ms, ours / fla, GB/s of the step's bytes and
that as a share of the copy's GB/s.

    python3 bench/kda.py [--out DIR]      (needs torch, fla-core and an sm_90a GPU)
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="folder for kda.json")
    args = ap.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"KDA on {torch.cuda.get_device_name()}")
    rows = decode_rows(example())
    show_decode(rows)
    ok = all(r["ok"] for r in rows)
    print("\ncorrectness:", "ok at every shape" if ok else "FAILED")
    if args.out:
        Path(args.out, "kda.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "decode": rows, "ok": ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
