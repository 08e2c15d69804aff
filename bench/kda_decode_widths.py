"""KDA decode on the H200: how many value columns one CTA should take, measured side by side.

kda_decode.cake gives each CTA 16 of a head's 128 value columns (8 CTAs per head),
kda_decode_wide.cake 64 (2 per head); a 32-column form (4 per head) is built here from the
wide kernel's text; kda_decode_ring.cake (persistent, 32-column blocks of the state through a
TMA ring) is timed beside them. Each is checked against the float32 recurrence (examples/kda/
kda_decode.py) and timed beside fla `fused_recurrent_kda`, the shipped entry
`cakec.kernels.kda_decode` (which picks by B·HV, cakec.kernels.kda.DECODE_RING_MIN_HEADS) and
a device copy of the state's bytes, at B ∈ {1, 8, 64, 256} × HV ∈ {16, 32} (H = HV), in
interleaved rounds. Prints ms per width, the entry's ms, fla's, and each as a share of the
copy's GB/s.

    python3 bench/kda_decode_widths.py [--out DIR]   (needs torch, fla-core, an sm_90a GPU)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from kda import O_TOL, S_TOL, example, rel  # noqa: E402

WIDE = ROOT / "cakec" / "kernels" / "kda_decode_wide.cake"


def width_source(cols: int) -> str:
    """The wide kernel's text with `cols` value columns per CTA (128 / cols CTAs per head)."""
    text = WIDE.read_text()
    per_head = 128 // cols
    for old, new in (("lm.grid(BHV * 2)", f"lm.grid(BHV * {per_head})"),
                     ("lm.block_id(0) // 2", f"lm.block_id(0) // {per_head}"),
                     ("lm.block_id(0) % 2", f"lm.block_id(0) % {per_head}"),
                     ("shape=(128, 64)", f"shape=(128, {cols})"),
                     ("shape=(1, 64)", f"shape=(1, {cols})")):
        assert old in text, old
        text = text.replace(old, new)
    return text


def kernels() -> dict[int | str, object]:
    from cakec import api
    from cakec.kernels import build

    return {16: build.kernel("kda_decode", "sm_90a"), 32: api.compile(source=width_source(32)),
            64: build.kernel("kda_decode_wide", "sm_90a"),
            "ring": build.kernel("kda_decode_ring", "sm_90a")}


def rows(ex, ks: dict[int | str, object]) -> list[dict]:
    import torch
    from fla.ops.kda import fused_recurrent_kda

    from cakec.api import time_ms
    from cakec.kernels.kda import kda_decode

    out = []
    for hv in (16, 32):
        for b in (1, 8, 64, 256):
            x = ex.decode_inputs(b, hv, hv, "cuda")
            ref_o, ref_s = ex.reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
            new = torch.empty_like(x["state"])
            o = torch.empty(b * hv, 128, device="cuda", dtype=torch.bfloat16)
            flat = (x["q"].view(b * hv, 128), x["k"].view(b * hv, 128), x["v"].view(b * hv, 128),
                    x["g"].view(b * hv, 128), x["beta"].view(b * hv), x["state"].view(-1, 128),
                    new.view(-1, 128), o, b * hv, hv, hv, 128 ** -0.5)
            row = {"B": b, "HV": hv}
            fns = {}
            for cols, k in ks.items():
                k(*flat)
                torch.cuda.synchronize()
                row[f"err_{cols}"] = max(rel(o.view(b, 1, hv, 128), ref_o) / O_TOL,
                                         rel(new, ref_s) / S_TOL)  # ≤ 1: within both
                fns[cols] = (lambda k=k: k(*flat))
            ent_o = torch.empty_like(x["v"])
            kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"], out=ent_o,
                       out_state=new)
            row["err_entry"] = max(rel(ent_o, ref_o) / O_TOL, rel(new, ref_s) / S_TOL)
            src, dst = torch.empty_like(x["state"]), torch.empty_like(x["state"])
            fns |= {
                "entry": lambda: kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            x["state"], out=ent_o, out_state=new),
                "fla": lambda: fused_recurrent_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                                   initial_state=x["state"],
                                                   output_final_state=True),
                "copy": lambda: dst.copy_(src)}
            ms = time_ms(fns)
            nbytes = ex.state_bytes({"B": b, "H": hv, "HV": hv})
            copy_gbs = 2 * src.numel() * 4 / ms["copy"] / 1e6
            row |= {f"ms_{k}": v for k, v in ms.items()}
            row |= {f"pct_{k}": 100 * nbytes / ms[k] / 1e6 / copy_gbs for k in ms if k != "copy"}
            row["ok"] = all(row[f"err_{c}"] <= 1 for c in ks) and row["err_entry"] <= 1
            out.append(row)
            print(f"{b:>4} {hv:>3} | " + " ".join(f"{ms[c]:7.4f} ({row[f'pct_{c}']:4.1f}%)"
                                                 for c in ks)
                  + f" | {ms['entry']:7.4f} {ms['fla']:7.4f} ({row['pct_fla']:4.1f}%) "
                  f"{ms['fla'] / ms['entry']:5.2f}x | {copy_gbs:5.0f}"
                  + ("" if row["ok"] else "  WRONG"), flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="folder for kda_decode_widths.json")
    args = ap.parse_args()
    import torch

    ex = example()
    ks = kernels()
    print(f"KDA decode widths on {torch.cuda.get_device_name()}: ms (% of the copy's GB/s) per "
          "value columns per CTA; the entry, fla; x = fla / entry; copy GB/s")
    print(f"{'B':>4} {'HV':>3} | " + " ".join(f"{f'{c} cols' if isinstance(c, int) else c:>16}"
                                               for c in ks)
          + f" | {'entry':>7} {'fla':>16} {'x':>6} | copy")
    out = rows(ex, ks)
    geo = math.exp(sum(math.log(r["ms_fla"] / r["ms_entry"]) for r in out) / len(out))
    print(f"entry geomean fla/ours {geo:.2f}x (issue 15: ≥ 1.3x, ≥ 80% of the copy at B = 256)")
    ok = all(r["ok"] for r in out)
    print("correctness:", "ok" if ok else "FAILED")
    if args.out:
        Path(args.out, "kda_decode_widths.json").write_text(json.dumps(out, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
