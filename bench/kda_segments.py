"""The KDA prefill's routing switches (segments, varlen groups) timed end to end, no fla.

fla is left out because its autotuning takes a short device call most of its time. One
process, CUDA-event medians in interleaved rounds (cakec.api.time_ms), every contender
checked against the path it would replace.

Segments (`--shapes 1x32768x8,...`): `kda_prefill(kernel="kda_prefill_split")` with
cakec.kernels.kda_prefill_launch.SEGMENTED_STATE_PASS off and on (the module the launches
read: setting the name re-exported by cakec.kernels.kda changes nothing), the split pair at
each P of a small sweep (split_launches: prep, state pass in P segments, result; no entry
checks), the state pass alone in one segment and in state_segments' P, the host chain
alone (its copy and P − 2 f32 matmuls on tensors of their shapes: a segment's cost besides
its CTAs), and the host's submission time of a call (perf_counter over back-to-back calls,
before the final sync): if it exceeds the GPU's time the timing is host-bound. Prints each
result's relative difference from the one-segment entry's.

Varlen (`--varlen varlen5x16,...`, bench/kda.py's VARLEN_ROWS): kda_prefill's default with
cakec.kernels.kda.VARLEN_GROUPED off (every sequence padded to the longest) and on (groups,
cakec/kernels/kda_varlen.py), the grouped result's difference from the padded one.

    python3 bench/kda_segments.py [--shapes 1x32768x8,1x8192x16] [--varlen varlen5x16]
    (needs torch and an sm_90a GPU)
"""

from __future__ import annotations

import argparse
import sys
import time

from kda import VARLEN_ROWS, prefill_inputs, rel

#: The segment counts swept end to end besides 1 and state_segments' own pick.
SWEEP = (2, 3, 4, 6, 9, 12)


def say(text: str) -> None:
    print(text, flush=True)


def host_ms(fn, calls: int = 20) -> float:
    """Milliseconds of host time per call submitted back to back (the GPU's queue is deep
    enough not to block), after one warm call."""
    import torch

    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) * 1e3 / calls
    torch.cuda.synchronize()
    return host


def chain(heads: int, parts: int):
    """The P-segment state pass's host chain on its own (split_launches' `state` between its
    two launches: one copy, then P − 2 f32 baddbmm over the heads), on tensors of its shapes:
    the part of a segment's cost that is not its CTAs."""
    import torch

    ends = torch.randn(parts - 1, heads, 2, 128, 128, device="cuda") * 0.01
    starts = torch.empty(parts - 1, heads, 128, 128, device="cuda")

    def run():
        starts[0].copy_(ends[0, :, 0])
        for i in range(1, parts - 1):
            torch.baddbmm(ends[i, :, 0], starts[i - 1], ends[i, :, 1], out=starts[i])
    return run


def segment_rows(shapes: list[str]) -> None:
    import torch

    from cakec.api import time_ms
    from cakec.kernels import checks, kda_prefill_launch as launch
    from cakec.kernels.kda import kda_prefill

    sms = launch.sm_count(torch.device("cuda"))
    for name in shapes:
        b, t, h = map(int, name.split("x"))
        x = prefill_inputs(b, t, h)
        model = launch.state_segments(b, t, h, sms)
        chunks = -(-t // 64)

        def entry(segmented: bool):
            def run():
                # on: state_segments' pick at any length (the entry's floor, which this
                # bench measures, set aside)
                before = launch.SEGMENTED_STATE_PASS, launch.SEGMENTED_FROM_CHUNKS
                launch.SEGMENTED_STATE_PASS, launch.SEGMENTED_FROM_CHUNKS = segmented, 1
                try:
                    return kda_prefill(**x, output_final_state=True, kernel="kda_prefill_split")
                finally:
                    launch.SEGMENTED_STATE_PASS, launch.SEGMENTED_FROM_CHUNKS = before
            return run

        args = (x["q"], x["k"], x["v"], x["g"], x["beta"], None, 128 ** -0.5,
                checks.target("bench", x["q"]))

        def pair(p: int):
            def run():
                prep, state, result = launch.split_launches(*args, segments=p)
                prep()
                state()
                return result()
            return run

        fns = {"entry P=1": entry(False), f"entry P={model} (switch on)": entry(True)}
        ps = sorted({1, model, *(p for p in SWEEP if chunks // p >= 2)})
        fns |= {f"pair P={p}": pair(p) for p in ps}
        one = launch.split_launches(*args, segments=1)
        seg = launch.split_launches(*args, segments=model)
        one[0]()
        seg[0]()  # each state pass reads the tiles its own prep wrote
        fns |= {"state alone P=1": one[1], f"state alone P={model}": seg[1]}
        if model > 2:  # what the segments add besides their CTAs: the host chain's matmuls
            fns[f"chain alone P={model}"] = chain(b * h, model)
        ref_o, ref_s = entry(False)()
        errs = {}
        for label, fn in fns.items():
            if label.startswith(("state", "chain")):
                continue
            o, s = fn()
            errs[label] = f"o {rel(o, ref_o):.1e} S {rel(s, ref_s):.1e}"
        ms = time_ms(fns, rounds=5)
        hosts = {label: host_ms(fns[label]) for label in fns if label.startswith("entry")}
        say(f"\n{name}: {chunks} chunks, state_segments picks P = {model} ({sms} SMs)")
        for label, value in ms.items():
            extra = f"  host {hosts[label]:.3f} ms/call" if label in hosts else ""
            say(f"  {label:>28}: {value:8.4f} ms  {errs.get(label, '')}{extra}")
        say(f"  end to end, switch on / off: {ms['entry P=1'] / ms[list(fns)[1]]:.3f}x")


def varlen_rows(rows: list[str]) -> None:
    import torch

    from cakec.api import time_ms
    from cakec.kernels import kda

    for name in rows:
        lens = VARLEN_ROWS[name]
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), device="cuda")
        x = prefill_inputs(1, sum(lens), 16)

        def entry(grouped: bool):
            def run():
                before, kda.VARLEN_GROUPED = kda.VARLEN_GROUPED, grouped
                try:
                    return kda.kda_prefill(**x, cu_seqlens=cu, output_final_state=True)
                finally:
                    kda.VARLEN_GROUPED = before
            return run

        fns = {"padded": entry(False), "grouped": entry(True)}
        (po, ps), (go, gs) = fns["padded"](), fns["grouped"]()
        ms = time_ms(fns, rounds=5)
        hosts = {label: host_ms(fn) for label, fn in fns.items()}
        say(f"\n{name} ({len(lens)} sequences, {sum(lens)} tokens, H = 16): padded "
            f"{ms['padded']:.4f} ms (host {hosts['padded']:.3f}), grouped {ms['grouped']:.4f} "
            f"ms (host {hosts['grouped']:.3f}): {ms['padded'] / ms['grouped']:.3f}x; grouped vs "
            f"padded o {rel(go, po):.1e} S {rel(gs, ps):.1e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="", help="BxTxH rows for the segment A/B")
    ap.add_argument("--varlen", default="", help=f"varlen rows: {', '.join(VARLEN_ROWS)}")
    args = ap.parse_args()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    say(f"KDA routing switches on {torch.cuda.get_device_name()}")
    if args.shapes:
        segment_rows(args.shapes.split(","))
    if args.varlen:
        varlen_rows(args.varlen.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main())
