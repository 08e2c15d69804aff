"""One launch of an example at a small shape, with nothing else in the process:
the program compute-sanitizer (racecheck, synccheck) runs, since timing loops and
baselines would only slow the sanitizer down.

    compute-sanitizer --tool racecheck python3 bench/sanitize_small.py examples/gemm_bf16.cake M=300,N=520,K=136
"""

from __future__ import annotations

import sys


def main(path: str, shape_text: str) -> int:
    import torch

    from cakec import api

    example = api.load_example(path)
    kernel = api.compile(path)
    shape = api.parse_shape(shape_text, dict(example.shapes[0]))
    inputs = list(example.make_inputs(shape, "cuda"))
    kernel(*inputs)
    torch.cuda.synchronize()  # correctness is the GPU tests' job; this run is for the sanitizer
    print(f"{path} {shape}: launched")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""))
