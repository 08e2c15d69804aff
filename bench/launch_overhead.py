"""Host microseconds per call of one kernel launch, steady state, against the floor measured in
the same run (../shared/notes/LAUNCH.md): ours (cakec.runtime.Kernel on the 6-argument GEMM
of cakec/kernels/gemm_bf16.cake at a tiny shape, and the library entries), a 3-argument
Triton kernel, torch.matmul, x.add_, CUDA-graph replay of our launch, and the same prepacked
launch through cuda-python's cuLaunchKernel (the floor) and through ctypes into libcuda.

Each figure: the median over ROUNDS of (perf_counter over CALLS calls) / CALLS, with a
synchronize between rounds only, so the host never waits on a full launch queue.

--parts adds the pieces: a signature's tensor attributes, and gemm(a, b)'s steady state (its
plan key, is_compiling, the output's allocation, the plan called directly, its launch).

    python bench/launch_overhead.py [--json PATH] [--parts]   (needs torch and an sm_90a GPU; triton optional)
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import time

import torch

CALLS, ROUNDS = 200, 25


def per_call_us(fn) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        samples.append((time.perf_counter() - t0) / CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def _triton_add():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.zeros(1024, device="cuda")
    return lambda: add_one[(1,)](x, 1024, BLOCK=1024)


def _ctypes_launch():
    lib = ctypes.CDLL("libcuda.so.1")
    f = lib.cuLaunchKernel
    f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    f.restype = ctypes.c_int
    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--parts", action="store_true", help="also time a signature's parts")
    args = parser.parse_args()

    import importlib

    import cakec.kernels as K
    from cakec.kernels import build
    from cakec.runtime import launch

    G = importlib.import_module("cakec.kernels.gemm")  # the package's `gemm` is the function
    bf = dict(device="cuda", dtype=torch.bfloat16)
    m, n, k = 1, 256, 64
    a, b, c = torch.randn(m, k, **bf), torch.randn(n, k, **bf), torch.empty(m, n, **bf)
    gemm = build.kernel("gemm_bf16", "sm_90a")
    gemm(a, b, c, m, n, k)
    bound = gemm._binds[launch.signature(gemm._tensor_mask, (a, b, c, m, n, k),
                                         gemm._with_device)]
    stream = torch.cuda.current_stream().cuda_stream
    drv = launch._drv()
    head, addr = bound.head, bound.address

    def floor():
        drv.cuLaunchKernel(*head, stream, addr, 0)

    cfn = _ctypes_launch()
    chead = (int(head[0]), *head[1:])

    def floor_ctypes():
        cfn(*chead, stream, addr, None)

    x, c_cent = torch.randn(1, 256, 64, **bf), torch.randn(1, 16, 64, **bf)
    K.kmeans_assign(x, c_cent)
    csq = K.csq_buffer(1, 16, "cuda")
    K.kmeans_assign(x, c_cent, csq)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        gemm(a, b, c, m, n, k)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        gemm(a, b, c, m, n, k)
    # A shape the shipped table sends to torch.matmul (its label says the route it took):
    # the dispatcher's host cost on top of the call it makes.
    a2, b2 = torch.randn(1, 4096, **bf), torch.randn(28672, 4096, **bf)
    route2 = K.gemm_route(1, 28672, 4096)
    K.gemm(a2, b2)
    torch_plan = G.plan("torch", a2, b2)  # the torch route's steady state, at the same shape
    y = torch.zeros(1024, device="cuda")
    at, bt = torch.randn(m, k, **bf), torch.randn(k, n, **bf)
    rows = {
        "floor: prepacked cuLaunchKernel, cuda-python": floor,
        "prepacked cuLaunchKernel, ctypes into libcuda": floor_ctypes,
        "ours: Kernel(A, B, C, M, N, K)": lambda: gemm(a, b, c, m, n, k),
        "ours: cakec.kernels.gemm(a, b, out=c)": lambda: K.gemm(a, b, out=c),
        "ours: cakec.kernels.gemm(a, b)": lambda: K.gemm(a, b),
        "ours: torch.ops.cake.gemm(a, b)": lambda: torch.ops.cake.gemm(a, b),
        "ours: cakec.kernels.kmeans_assign (2 launches)": lambda: K.kmeans_assign(x, c_cent),
        "ours: kmeans_assign(x, c, c_sq) (1 launch)": lambda: K.kmeans_assign(x, c_cent, csq),
        "CUDA graph replay of our launch": graph.replay,
        "torch.matmul (tiny bf16)": lambda: torch.matmul(at, bt),
        f"ours: gemm(a, b) at 1x28672x4096 (route {route2})": lambda: K.gemm(a2, b2),
        "torch.matmul(a, b.t()) at 1x28672x4096": lambda: torch.matmul(a2, b2.t()),
        "ours: the torch route's plan at 1x28672x4096": lambda: torch_plan(a2, b2, None),
        "F.linear(a, b) at 1x28672x4096": lambda: torch.nn.functional.linear(a2, b2),
        "x.add_(1.0)": lambda: y.add_(1.0),
        "torch._C._cuda_getCurrentRawStream alone": lambda: torch._C._cuda_getCurrentRawStream(0),
        "torch.cuda.current_stream().cuda_stream alone":
            lambda: torch.cuda.current_stream().cuda_stream,
        "signature alone": lambda: gemm._signature((a, b, c, m, n, k)),
    }
    if args.parts:  # what a signature and gemm(a, b)'s steady state cost, piece by piece
        plan = G.plan(G.route_of(m, n, k), a, b)   # gemm(a, b)'s plan: alloc, stream, launch
        plan(a, b, None)
        go = gemm.prepare((a, b, c, m, n, k), ("C",))  # its launch: one pointer patched
        handle, c_ptr = torch._C._cuda_getCurrentRawStream(0), c.data_ptr()
        rows.update({
            "part: gemm's key (_key_one)": lambda: G._key_one(a, b, None),
            "part: torch.compiler.is_compiling()": torch.compiler.is_compiling,
            "part: a.new_empty(m, n)": lambda: a.new_empty(m, n),
            "part: gemm's plan, called directly": lambda: plan(a, b, None),
            "part: Kernel.prepare'd launch go(stream, C)": lambda: go(handle, c_ptr),
        })
        T = torch.Tensor
        dp, st = T.data_ptr, T.stride
        three = (a, b, c)
        rows.update({
            "part: 3x data_ptr()": lambda: [t.data_ptr() for t in three],
            "part: 3x .shape": lambda: [t.shape for t in three],
            "part: 3x stride()": lambda: [t.stride() for t in three],
            "part: 3x .dtype": lambda: [t.dtype for t in three],
            "part: 3x get_device()": lambda: [t.get_device() for t in three],
            "part: 3x .device": lambda: [t.device for t in three],
            "part: 3x .is_cuda": lambda: [t.is_cuda for t in three],
            "part: empty 3-loop": lambda: [t for t in three],
            "key without device, unbound methods": lambda: (
                dp(a), a.shape, st(a), a.dtype, dp(b), b.shape, st(b), b.dtype,
                dp(c), c.shape, st(c), c.dtype, m, n, k),
            "signature + dict get": lambda: gemm._binds.get(gemm._signature((a, b, c, m, n, k))),
        })
    tri = _triton_add()
    if tri is not None:
        rows["Triton kernel[grid](x, n, BLOCK=)"] = tri
    figures = {name: per_call_us(fn) for name, fn in rows.items()}
    base = figures["floor: prepacked cuLaunchKernel, cuda-python"]
    width = max(map(len, figures))
    print(f"{'call':<{width}}  {'us/call':>8}  {'x floor':>7}")
    for name, us in figures.items():
        print(f"{name:<{width}}  {us:8.2f}  {us / base:7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
