// Test helpers for examples/aot (reference.cu): random inputs and a plain reference GEMM on
// the GPU, so the example checks the Cake kernel without any other library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

// n bf16 values (stored as uint16_t) uniform in [-1, 1), from a hash of (seed, index).
void fill_random_bf16(uint16_t* p, size_t n, uint32_t seed, cudaStream_t stream);

// R[M, N] = A[M, K] . B[N, K]^T in fp32, all row-major and contiguous.
void reference_gemm(const uint16_t* A, const uint16_t* B, float* R, int M, int N, int K,
                    cudaStream_t stream);

// max |C - R| and max |R| over n elements; an unwritten (NaN) element of C counts as an
// infinite error. Synchronizes the stream.
void compare(const uint16_t* C, const float* R, size_t n, float* max_err, float* max_ref,
             cudaStream_t stream);
