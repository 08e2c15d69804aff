# The C interface of `cakec emit --header` (docs/aot.md): header, nvcc launcher, depfile.
# RUN: cakec emit %s -o %t.cu --header %t.h -MD -MF %t.d
# RUN: filecheck %s --check-prefix=HEADER --input-file %t.h
# RUN: filecheck %s --check-prefix=LAUNCH --input-file %t.cu
# RUN: filecheck %s --check-prefix=DEPS --input-file %t.d
# RUN: cakec emit %s -o %t.cu -MD
# RUN: filecheck %s --check-prefix=MD --input-file %t.cu.d
@cake.schedule(target="sm_90a")
def tile_gemm(lm, X: LM.tma2d, W: LM.tma2d, Y: LM.tma2d, rows: LM.i32, cols: LM.i32,
              depth: LM.i32):
    lm.grid(lm.cdiv(rows, 64), lm.cdiv(cols, 128))
    m = lm.block_id(0)
    n = lm.block_id(1)
    steps = lm.max(lm.cdiv(depth, 64), 1)

    pool = lm.smem(49152)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sw = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, steps):
            lm.wait(empty, stage=k % 2)
            sx.tma_load(X, coords=(m, k), stage=k % 2, barrier=full)
            sw.tma_load(W, coords=(n, k), stage=k % 2, barrier=full)

    with math:
        for k in lm.range(0, steps):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sx[k % 2], sw[k % 2], init=(k == 0))
            lm.commit(empty, stage=k % 2)
        Y.tma_store(acc.to(lm.bf16), coords=(m, n))

# HEADER:      #ifndef CAKE_TILE_GEMM_H
# HEADER:      #include <cuda_runtime_api.h>
# HEADER:      extern "C" {
# The extents the scalars tile (docs/abi.md, "Scalars tied to extents").
# HEADER:       *   X  bf16 [rows, depth]  (TMA)
# HEADER-NEXT:  *   W  bf16 [cols, depth]  (TMA)
# HEADER-NEXT:  *   Y  bf16 [rows, cols]
# HEADER-NEXT:  * Scalars: rows (int32_t), cols (int32_t), depth (int32_t).
# HEADER-NEXT:  * Grid: cdiv(rows, 64), cdiv(cols, 128), 1.
# HEADER-NEXT:  * Block: 256, 1, 1; {{[0-9]+}} B of dynamic shared memory; sm_90a.
# HEADER:      cudaError_t tile_gemm_launch(
# HEADER-NEXT:     void* X, int64_t X_shape0, int64_t X_shape1, int64_t X_stride0, int64_t X_stride1,
# HEADER-NEXT:     void* W, int64_t W_shape0, int64_t W_shape1, int64_t W_stride0, int64_t W_stride1,
# HEADER-NEXT:     void* Y, int64_t Y_shape0, int64_t Y_shape1, int64_t Y_stride0, int64_t Y_stride1,
# HEADER-NEXT:     int32_t rows, int32_t cols, int32_t depth,
# HEADER-NEXT:     cudaStream_t stream);
# HEADER:      const char* tile_gemm_last_error(void);
# HEADER-NOT:  tile_gemm_load
# HEADER:      #endif /* CAKE_TILE_GEMM_H */

# The kernel first, then the launcher: checks, once-per-device setup, grid, tensor maps, launch.
# LAUNCH:      extern "C" __global__
# LAUNCH-NEXT: {{^}}tile_gemm(
# LAUNCH:      cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled"
# LAUNCH:      cudaError_t tile_gemm_setup(int device, cake_host::Device& d) {
# LAUNCH:        if (!(major == 9 && minor == 0))
# LAUNCH:        if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, {{[0-9]+}})))
# LAUNCH:      extern "C" cudaError_t tile_gemm_launch(
# LAUNCH:        check_tensor(cake_msg, cake_k, "X", X, 2, cake_t_X.shape, cake_t_X.stride, 2, true)
# LAUNCH:        check_tensor(cake_msg, cake_k, "Y", Y, 2, cake_t_Y.shape, cake_t_Y.stride, 2, false)
# LAUNCH:        if ((long long)rows != cake_t_X.shape[0])
# LAUNCH-NEXT:     {{.*}}argument 'rows' = %lld but X.shape[0] = %lld (they must agree)
# LAUNCH:        std::call_once(cake_dev.once,
# LAUNCH:        const long long cake_grid[3] = {cake_host::cdiv(cake_ev, (int64_t)rows, INT64_C(64)), cake_host::cdiv(cake_ev, (int64_t)cols, INT64_C(128)), INT64_C(1)};
# LAUNCH:        static const unsigned cake_b_X_0[2] = {64, 64};
# LAUNCH-NEXT:   encode_tmap(cake_msg, cake_k, "X", &cake_m_X_0, 9, 2, X, cake_t_X.shape, cake_t_X.stride, 2, cake_b_X_0, 3, 3, 0)
# LAUNCH:        void* cake_args[] = {(void*)&cake_m_X_0, (void*)&cake_t_X, (void*)&cake_m_W_0, (void*)&cake_t_W, (void*)&cake_t_Y, (void*)&rows, (void*)&cols, (void*)&depth};
# LAUNCH-NEXT:   cudaLaunchKernel(cake_fn, {{.*}}, dim3(256, 1, 1), cake_args, {{[0-9]+}}, stream);

# DEPS:      {{.*}}launcher.cake.tmp.cu {{.*}}launcher.cake.tmp.h: \
# DEPS-NEXT: {{^}}  {{.*}}launcher.cake{{$}}

# MD:      {{.*}}launcher.cake.tmp.cu: \
# MD-NEXT: {{^}}  {{.*}}launcher.cake{{$}}
