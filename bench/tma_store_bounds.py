"""What the TMA unit does with a bulk tensor store whose box starts outside the tensor — the
fact behind the emitter's guard (targets/emit/barriers.py `tma_store_stage` issues only boxes
that start inside). One 128×128 bf16 tile of a 128×128 O is staged and stored at tile
(row, col) by a kernel built WITHOUT that guard (the emitted test is removed from the CUDA
text before NVRTC), each start in its own process, since a fault loses the CUDA context:

    (0, 0)   inside (the control)        (1, 0)  rows start at O's end (128)
    (0, 1)   columns start at O's end    (-1, 0) rows start at -128     (0, -1) columns at -128

Prints one line per start: `ok` (nothing written outside the 128×128 box's clip) or the
error the launch raised.

    python3 bench/tma_store_bounds.py   (torch, an sm_90a GPU)
"""

from __future__ import annotations

import subprocess
import sys

STARTS = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)]

SOURCE = '''@cake.schedule(target="sm_90a")
def unguarded(lm, A: LM.tma2d, O: LM.tma2d, R: LM.i32, C: LM.i32):
    lm.grid(1)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    so = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sa, init=True)
        so[0].store((acc * 0.0 + 1.0).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so[0], coords=(R, C))
'''


def probe(row: int, col: int) -> str:
    import torch

    from cakec import api
    from cakec.runtime import Kernel
    from cakec.targets.host.nvrtc import compile_cuda

    unit = api.emit_unit(source=SOURCE)
    text = unit.source.replace("if (cake_in && ", "if (true || ")
    assert text != unit.source, "the emitted guard was not found"
    kernel = Kernel(compile_cuda(text, target=unit.target, output="cubin",
                                 name="unguarded.cu"), unit.metadata)
    a = torch.randn(128, 64, device="cuda").to(torch.bfloat16)
    buf = torch.full((256, 256), 7.0, device="cuda", dtype=torch.bfloat16)
    o = buf[:128, :128]
    kernel(a, o, row, col)
    torch.cuda.synchronize()
    inside = bool((o == 1.0).all()) if (row, col) == (0, 0) else bool((o == 7.0).all())
    outside = bool((buf[128:] == 7.0).all()) and bool((buf[:128, 128:] == 7.0).all())
    return "ok" if inside and outside else f"wrong (inside {inside}, outside {outside})"


def main(argv: list[str]) -> int:
    if argv:
        try:
            print(probe(int(argv[0]), int(argv[1])), flush=True)
        except Exception as e:  # noqa: BLE001 (the launch's fault is the measurement)
            print(f"fault: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
            return 1
        return 0
    for row, col in STARTS:
        r = subprocess.run([sys.executable, __file__, str(row), str(col)], capture_output=True,
                           text=True, timeout=300)
        last = (r.stdout.strip().splitlines() or r.stderr.strip().splitlines() or ["?"])[-1]
        print(f"tile ({row:2d}, {col:2d}): exit {r.returncode}: {last[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
