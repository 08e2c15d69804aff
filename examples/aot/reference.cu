// Reference side of examples/aot: deliberately simple kernels (one thread per element, a
// 16 x 16 shared-memory tile for the GEMM) that are easy to trust.
#include "reference.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>

namespace {

__device__ uint32_t hash(uint32_t x) {  // a 32-bit integer mix (xorshift-multiply)
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

__global__ void fill(uint16_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float u = hash(hash((uint32_t)i) ^ seed ^ (uint32_t)(i >> 32)) * (2.0f / 4294967296.0f) - 1.0f;
    p[i] = __bfloat16_as_ushort(__float2bfloat16(u));
  }
}

constexpr int kTile = 16;

__global__ void gemm(const uint16_t* A, const uint16_t* B, float* R, int M, int N, int K) {
  __shared__ float a[kTile][kTile + 1], b[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  const int brow = blockIdx.x * kTile + threadIdx.y;  // the B row this thread loads
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int k = k0 + threadIdx.x;
    a[threadIdx.y][threadIdx.x] =
        row < M && k < K ? __bfloat162float(__ushort_as_bfloat16(A[(size_t)row * K + k])) : 0.0f;
    b[threadIdx.y][threadIdx.x] =
        brow < N && k < K ? __bfloat162float(__ushort_as_bfloat16(B[(size_t)brow * K + k])) : 0.0f;
    __syncthreads();
    for (int j = 0; j < kTile; ++j) acc += a[threadIdx.y][j] * b[threadIdx.x][j];
    __syncthreads();
  }
  if (row < M && col < N) R[(size_t)row * N + col] = acc;
}

// Non-negative floats order like their bit patterns, so atomicMax on the bits is a float max.
__global__ void max_errors(const uint16_t* C, const float* R, size_t n, unsigned* out) {
  float err = 0.0f, ref = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float c = __bfloat162float(__ushort_as_bfloat16(C[i]));
    const float d = fabsf(c - R[i]);
    err = fmaxf(err, isnan(d) ? INFINITY : d);
    ref = fmaxf(ref, fabsf(R[i]));
  }
  atomicMax(&out[0], __float_as_uint(err));
  atomicMax(&out[1], __float_as_uint(ref));
}

}  // namespace

void fill_random_bf16(uint16_t* p, size_t n, uint32_t seed, cudaStream_t stream) {
  fill<<<1024, 256, 0, stream>>>(p, n, seed);
}

void reference_gemm(const uint16_t* A, const uint16_t* B, float* R, int M, int N, int K,
                    cudaStream_t stream) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm<<<grid, dim3(kTile, kTile), 0, stream>>>(A, B, R, M, N, K);
}

void compare(const uint16_t* C, const float* R, size_t n, float* max_err, float* max_ref,
             cudaStream_t stream) {
  unsigned* out = nullptr;
  unsigned host[2] = {0, 0};
  cudaMallocAsync((void**)&out, sizeof host, stream);
  cudaMemsetAsync(out, 0, sizeof host, stream);
  max_errors<<<1024, 256, 0, stream>>>(C, R, n, out);
  cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(out, stream);
  cudaStreamSynchronize(stream);
  memcpy(max_err, &host[0], sizeof *max_err);
  memcpy(max_ref, &host[1], sizeof *max_ref);
}
