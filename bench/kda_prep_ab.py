"""Revisions of the KDA prefill's prep kernel side by side on the GPU, in one process: each
.cake file given is built in place of cakec/kernels/kda_prefill_prep.cake, checked through
`kda_prefill(kernel="kda_prefill_split")` against fla `chunk_kda` (o and final state), and
timed alone and as the whole split prefill beside chunk_kda in the same interleaved rounds
(CUDA-event medians), at bench/kda.py's long shapes. For a change to the prep kernel that
must be proven against the revision before it:

    git show REV:cakec/kernels/kda_prefill_prep.cake > /tmp/before.cake
    python3 bench/kda_prep_ab.py /tmp/before.cake cakec/kernels/kda_prefill_prep.cake
    (needs torch, fla-core and an sm_90a GPU)

With no file given it compares the shipped prep with the candidate behind
kda_prefill_launch.PREP_3CTA (cakec/kernels/kda_prefill_prep_3cta.cake: 72 KiB of SMEM, three
CTAs an SM):

    python3 bench/kda_prep_ab.py --no-fla --shapes 1x8192x16,1x32768x8

fla autotunes at each new shape, which takes most of a run: a short device call can name
the shapes first (`--shapes 1x8192x16,1x32768x8 A.cake B.cake`; default: every one of
bench/kda.py's long shapes), or leave fla out (`--no-fla`, first: errors then against the
first revision given, no fla column).
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from kda import PREFILL_SHAPES, prefill_inputs, rel

NAME, TARGET = "kda_prefill_prep", "sm_90a"
KERNELS = Path(__file__).resolve().parents[1] / "cakec" / "kernels"
#: What runs without files named: the shipped prep, then the candidate it might give way to.
DEFAULT = [str(KERNELS / f"{NAME}.cake"), str(KERNELS / f"{NAME}_3cta.cake")]
_shipped = None  # build.source as shipped, once replaced


def _use(path: str | None) -> None:
    """Make build.kernel(NAME) read `path` (None: the shipped file) from now on."""
    from cakec.kernels import build

    global _shipped
    _shipped = _shipped or build.source
    build._loaded.pop((NAME, TARGET), None)
    build.source = _shipped if path is None else (
        lambda name, shipped=_shipped: Path(path) if name == NAME else shipped(name))


def _build(path: str) -> str:
    """Compile one revision into build's disk cache (a worker process: they run at once)."""
    from cakec.kernels import build

    _use(path)
    build.kernel(NAME, TARGET)
    return path


def main(argv: list[str]) -> int:
    with_fla = argv[:1] != ["--no-fla"]
    argv = argv if with_fla else argv[1:]
    shapes = PREFILL_SHAPES
    if argv[:1] == ["--shapes"]:
        shapes = [tuple(map(int, name.split("x"))) for name in argv[1].split(",")]
        argv = argv[2:]
    paths = argv or DEFAULT
    with ProcessPoolExecutor(len(paths)) as pool:
        list(pool.map(_build, paths))
    from cakec.api import time_ms
    from cakec.kernels import build
    from cakec.kernels.kda import kda_prefill, split_launches

    kernels = {}
    for i, path in enumerate(paths):
        _use(path)
        kernels[f"{i}:{Path(path).stem}"] = build.kernel(NAME, TARGET)  # from the disk cache
    _use(None)
    print(f"ms (CUDA-event medians); x = {'fla' if with_fla else 'the first revision'} / "
          "ours; prep = the prep kernel alone")
    for b, t, h in shapes:
        x = prefill_inputs(b, t, h)
        fns, fo, fs = {}, None, None
        if with_fla:
            from fla.ops.kda import chunk_kda

            fo, fs = chunk_kda(**x, output_final_state=True)
            fns["fla"] = lambda: chunk_kda(**x, output_final_state=True)
        errors = []
        for name, kernel in kernels.items():
            build._loaded[(NAME, TARGET)] = kernel
            o, s = kda_prefill(**x, output_final_state=True, kernel="kda_prefill_split")
            if fo is None:  # no fla: against the first revision
                fo, fs = o, s
            errors.append(f"{name} o {rel(o, fo):.1e} S {rel(s, fs):.1e}")
            prep, _, _ = split_launches(x["q"], x["k"], x["v"], x["g"], x["beta"], None,
                                        128 ** -0.5, TARGET)

            def whole(kernel=kernel) -> None:
                build._loaded[(NAME, TARGET)] = kernel
                kda_prefill(**x, output_final_state=True, kernel="kda_prefill_split")

            def alone(kernel=kernel, prep=prep) -> None:
                build._loaded[(NAME, TARGET)] = kernel
                prep()

            fns[name], fns[name + " prep"] = whole, alone
        ms = time_ms(fns, rounds=2 if with_fla else 5)
        base = ms.get("fla", ms[next(iter(kernels))])
        print(f"{b}x{t}x{h}: {'fla' if with_fla else 'first'} {base:.3f} | " + " | ".join(
            f"{n} {ms[n]:.3f} ({base / ms[n]:.2f}x) prep {ms[n + ' prep']:.3f}"
            for n in kernels), flush=True)
        print(f"    errors vs {'chunk_kda' if with_fla else 'the first revision'}: "
              + "; ".join(errors), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
