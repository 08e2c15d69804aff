"""KDA decode at B = 256: where the time goes, and candidate schedules. Variants of
kda_decode_wide.cake's text at 16 / 32 / 64 value columns per CTA: the step cut down to a
prefix (copy: S in, S out; decay: S·exp(g); u: + Sᵀk and the rank-1 update; full: + o; the
cut bodies are not the recurrence and are timed only), the full step at a raised
blocks_per_sm, and two persistent forms (bench/kda_decode_pipe*.cake.txt: `pN_C` loads the
next block of S before the current block's arithmetic, `qN_C` also the next block's k, q,
v, g, β; N columns, C CTAs per SM). The full-step variants are checked against the float32
recurrence; all are timed beside fla `fused_recurrent_kda` and a device copy.

    python3 bench/kda_decode_probe.py [--b 256,8] [--only A,B]   timing (an sm_90a GPU, fla)
    python3 bench/kda_decode_probe.py --static [--only A,B]      CPU only (NVRTC, cuobjdump)
    ncu --section SpeedOfLight --section Occupancy --section WarpStateStats ... \
        python3 bench/kda_decode_probe.py --ncu --only 16c_full,q32_3   one launch each
    compute-sanitizer --tool racecheck python3 bench/kda_decode_probe.py --sanitize q32_3

--static prints, per variant, ptxas's registers, the CTAs one SM holds (registers
alone: 128 threads, 8-register steps), the state bytes in flight per SM when every CTA has
its block's loads out, the SASS a warp runs per block on the in-bounds path (the emitted
CUDA with every tile's `whole` test taken; a persistent form's loop body), and the time
those instructions take at B = 256, HV = 32 if each of the 528 schedulers (132 SMs × 4 at
1.98 GHz) issued one every cycle: a floor that memory latency can only raise.
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
    """kda_decode_wide.cake's text at `cols` columns per CTA, `bps` CTAs per SM asked of
    ptxas, and its step cut to the lines of CUTS[cut] (all of it for "full")."""
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


FUSED_STEP = """        s = s * decay
        qs = q * scale
        u = beta * (v - (s * k).sum(axis=0))
        o = (s * qs).sum(axis=0)
        kq = (k * qs).sum(axis=0)
        s = s + k * u
        Sn.store(s, coords=(bh, vb))
        O.store((o + kq * u).to(lm.bf16), coords=(bh, vb))
"""


def fused(cols: int, bps: int = 1) -> str:
    """The full step with o from the decayed state, o = (S q) + u (k·q): both column
    reductions read the same S, so q is waited for with k, and S is stored before o."""
    text = variant(cols, bps=bps)
    at = text.index("        s = s * decay")
    return text[:at] + FUSED_STEP


def grid3(cols: int) -> str:
    """The full step on a (blocks per head, HV, B) grid: the head indices from the block
    coordinates, one runtime division (by HV / H) where the 1-D grid takes three."""
    per = 128 // cols
    text = width_source(cols)
    for old, new in ((f"lm.grid(BHV * {per})", f"lm.grid({per}, HV, BHV // HV)"),
                     (f"bh = lm.block_id(0) // {per}", "bh = lm.block_id(2) * HV + lm.block_id(1)"),
                     (f"vb = lm.block_id(0) % {per}", "vb = lm.block_id(0)"),
                     ("qk = (bh // HV) * H + (bh % HV) // (HV // H)",
                      "qk = lm.block_id(2) * H + lm.block_id(1) // (HV // H)")):
        assert old in text, old
        text = text.replace(old, new)
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
             "q64_2": lambda: pipe(64, 2, "pipe2"), "16c_grid3": lambda: grid3(16),
             "64c_grid3": lambda: grid3(64)}
RING = ROOT / "cakec" / "kernels" / "kda_decode_ring.cake"


def ring(cps: int, stages: int, cols: int = 32) -> str:
    """kda_decode_ring.cake with `cps` CTAs per SM, a ring of `stages` blocks of S, and
    `cols` value columns per block (32: 16 KiB blocks, or 64: 32 KiB)."""
    text = RING.read_text()
    per = 128 // cols
    for old, new in (("lm.sm_count() * 4)", f"lm.sm_count() * {cps})"),
                     ("blocks_per_sm=4", f"blocks_per_sm={cps}"),
                     ("lm.smem(49152)", f"lm.smem({stages * 512 * cols})"),
                     ("stage=3, swizzle", f"stage={stages}, swizzle"),
                     ("stages=3)", f"stages={stages})"), ("count=3,", f"count={stages},"),
                     ("i % 3", f"i % {stages}"), ("BHV * 4", f"BHV * {per}"),
                     ("// 4", f"// {per}"), ("% 4)", f"% {per})"), ("w % 4\n", f"w % {per}\n"),
                     ("(128, 32)", f"(128, {cols})"), ("(1, 32)", f"(1, {cols})")):
        assert old in text, old
        text = text.replace(old, new)
    return text


VARIANTS |= {f"r{c}_{s}": (lambda c=c, s=s: ring(c, s))
             for c, s in ((3, 4), (2, 6), (4, 3), (2, 4), (1, 12))}
VARIANTS |= {"r64_2_3": lambda: ring(2, 3, 64), "r64_1_6": lambda: ring(1, 6, 64)}
VARIANTS |= {f"f{c}_{b}": (lambda c=c, b=b: fused(c, b))
             for c, b in ((16, 1), (16, 8), (32, 1), (32, 6), (64, 1), (64, 4))}


STATIC_HEADS = 8192  # B = 256, HV = 32


def in_bounds_sass(name: str) -> tuple[int, list[str]]:
    """ptxas's register count and the SASS of `name` on its in-bounds path (the emitted CUDA
    with every tile's `whole` test taken), encodings dropped; a persistent form's loop body
    only."""
    import re
    import subprocess
    import tempfile

    from cakec import api
    from cakec.targets.host.nvrtc import compile_cuda, ptxas_report
    from cakec.targets.host.toolkit import find_tool

    unit = api.emit_unit(None, "sm_90a", source=VARIANTS[name]())
    regs = int(re.findall(r"Used (\d+) registers", ptxas_report(unit.source, target="sm_90a"))[0])
    inside = re.sub(r"if \((cake_\w+)\.whole\)", "if (true)", unit.source)
    cubin = compile_cuda(inside, target="sm_90a", output="cubin", name=f"{name}.cu",
                         extra_options=())
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        dump = subprocess.run([find_tool("cuobjdump"), "--dump-sass", f.name],
                              capture_output=True, text=True, check=True).stdout
    lines = [re.sub(r"/\* 0x[0-9a-f]+ \*/", "", ln).strip() for ln in dump.splitlines()
             if re.match(r"\s+/\*[0-9a-f]{4,}\*/", ln)]
    addrs = [int(re.match(r"/\*([0-9a-f]+)\*/", ln).group(1), 16) for ln in lines]
    for at, ln in zip(addrs, lines):
        to = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", ln)
        if to and int(to.group(1), 16) < at:  # the persistent loop's back edge
            lines = [x for a, x in zip(addrs, lines) if int(to.group(1), 16) <= a <= at]
            break
    return regs, lines


def static_facts(name: str) -> str:
    """One --static line (see the module docstring)."""
    regs, sass = in_bounds_sass(name)
    cols = int(name[1:3]) if name[0] in "pq" else int(name[:2])
    ctas = min(16, 65536 // (-(-regs // 8) * 8 * 128))
    blocks = STATIC_HEADS * 128 // cols
    floor_ms = len(sass) * 4 * blocks / (132 * 4 * 1.98e9) * 1e3
    return (f"{name:>10} {regs:4d} regs {ctas:2d} CTAs/SM "
            f"{ctas * 128 * cols * 4 // 1024:3d} KiB/SM in flight {len(sass):5d} SASS/warp/block "
            f"issue floor {floor_ms:.3f} ms")


def time_rows(names: list[str], batches: list[int]) -> None:
    """Each variant checked (full steps) and timed beside fla and a copy."""
    import torch
    from fla.ops.kda import fused_recurrent_kda

    from cakec import api
    from cakec.api import time_ms

    ex = example()
    ks = {n: api.compile(source=VARIANTS[n]()) for n in names}
    for b in batches:
        for hv in (32, 16):
            x = ex.decode_inputs(b, hv, hv, "cuda")
            new = torch.empty_like(x["state"])
            o = torch.empty(b * hv, 128, device="cuda", dtype=torch.bfloat16)
            flat = (x["q"].view(b * hv, 128), x["k"].view(b * hv, 128),
                    x["v"].view(b * hv, 128), x["g"].view(b * hv, 128), x["beta"].view(b * hv),
                    x["state"].view(-1, 128), new.view(-1, 128), o, b * hv, hv, hv, 128 ** -0.5)
            ref_o, ref_s = ex.reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
            bad = []
            for n, k in ks.items():
                if n.endswith(("_copy", "_decay", "_u")):
                    continue
                new.zero_()
                k(*flat)
                err = max(rel(o.view(b, 1, hv, 128), ref_o) / O_TOL, rel(new, ref_s) / S_TOL)
                if not err <= 1:
                    bad.append(f"{n} ({err:.2f} of the tolerance)")
            src, dst = torch.empty_like(x["state"]), torch.empty_like(x["state"])
            fns = {n: (lambda k=k: k(*flat)) for n, k in ks.items()}
            fns |= {"fla": lambda: fused_recurrent_kda(x["q"], x["k"], x["v"], x["g"],
                                                       x["beta"], initial_state=x["state"],
                                                       output_final_state=True),
                    "copy": lambda: dst.copy_(src)}
            ms = time_ms(fns)
            gbs = 2 * src.numel() * 4 / ms["copy"] / 1e6
            print(f"B={b} HV={hv}: copy {ms['copy']:.4f} ms ({gbs:.0f} GB/s); WRONG: "
                  f"{', '.join(bad) or 'none'}")
            for n, t in ms.items():
                print(f"  {n:>10} {t:8.4f} ms {100 * ms['copy'] / t:5.1f}% of the copy",
                      flush=True)


def launch_once(names: list[str], b: int, hv: int) -> None:
    """One launch of each variant (for ncu at B = 256, or the sanitizer at a small B)."""
    import torch

    from cakec import api

    x = example().decode_inputs(b, hv, hv, "cuda")
    new = torch.empty_like(x["state"])
    o = torch.empty(b * hv, 128, device="cuda", dtype=torch.bfloat16)
    flat = (x["q"].view(b * hv, 128), x["k"].view(b * hv, 128), x["v"].view(b * hv, 128),
            x["g"].view(b * hv, 128), x["beta"].view(b * hv), x["state"].view(-1, 128),
            new.view(-1, 128), o, b * hv, hv, hv, 128 ** -0.5)
    for n in names:
        api.compile(source=VARIANTS[n]())(*flat)
        torch.cuda.synchronize()
        print(f"{n} B={b} HV={hv}: launched")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--static", action="store_true", help="registers and SASS, no GPU")
    mode.add_argument("--ncu", action="store_true", help="one launch of each at B=256, HV=32")
    mode.add_argument("--sanitize", action="store_true",
                      help="one launch of each at B=8, HV=16 (1024 blocks: the persistent "
                           "forms loop), for compute-sanitizer")
    ap.add_argument("--only", default=None, help="comma-separated variant names")
    ap.add_argument("--b", default="256", help="comma-separated batch sizes to time")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(VARIANTS)
    unknown = set(names) - set(VARIANTS)
    if unknown:
        ap.error(f"unknown variants {sorted(unknown)}; choose from {list(VARIANTS)}")
    if args.static:
        for n in names:
            print(static_facts(n), flush=True)
    elif args.ncu:
        launch_once(names, 256, 32)
    elif args.sanitize:
        launch_once(names, 8, 16)
    else:
        time_rows(names, [int(b) for b in args.b.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
