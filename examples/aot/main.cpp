// Ahead-of-time Cake from C++: no Python at run time. cake_add_kernel (CMakeLists.txt) compiled
// examples/gemm_bf16.cake into gemm_bf16.h and its launcher (gemm_bf16.cu, or a cubin that the
// header's implementation loads); this program calls it:
// C[M, N] = A[M, K] . B[N, K]^T in bf16 with fp32 accumulation, checks C against a simple
// reference kernel, times it, and shows that bad arguments come back as errors, not launches.
//
//   gemm_aot_cuda [M N K]   (or gemm_aot_cubin; default 4096 4096 4096, plus a ragged 1000 x 3000 x 1000 check)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime_api.h>

#include "gemm_bf16.h"
#include "reference.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    const cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)

namespace {

constexpr float kTolerance = 1e-2f;  // of max |C|; bf16 rounding of C alone is ~4e-3

struct Problem {
  int M, N, K;
  uint16_t *A, *B, *C;  // bf16, row-major, contiguous
  float* R;             // the reference result
};

// Row-major contiguous matrices: shape (rows, cols), strides (cols, 1) in elements.
cudaError_t gemm(const Problem& p, const uint16_t* A, int K, cudaStream_t stream) {
  return gemm_bf16_launch((void*)A, p.M, K, K, 1, p.B, p.N, K, K, 1, p.C, p.M, p.N, p.N, 1,
                          p.M, p.N, K, stream);
}

Problem allocate(int M, int N, int K, cudaStream_t stream) {
  Problem p{M, N, K, nullptr, nullptr, nullptr, nullptr};
  CHECK(cudaMalloc((void**)&p.A, sizeof(uint16_t) * M * K));
  CHECK(cudaMalloc((void**)&p.B, sizeof(uint16_t) * N * K));
  CHECK(cudaMalloc((void**)&p.C, sizeof(uint16_t) * M * N));
  CHECK(cudaMalloc((void**)&p.R, sizeof(float) * M * N));
  fill_random_bf16(p.A, (size_t)M * K, 1, stream);
  fill_random_bf16(p.B, (size_t)N * K, 2, stream);
  CHECK(cudaMemsetAsync(p.C, 0xff, sizeof(uint16_t) * M * N, stream));  // NaN: unwritten shows
  reference_gemm(p.A, p.B, p.R, M, N, K, stream);
  return p;
}

void release(Problem& p) {
  for (void* ptr : {(void*)p.A, (void*)p.B, (void*)p.C, (void*)p.R}) CHECK(cudaFree(ptr));
}

void launch(const Problem& p, cudaStream_t stream) {
  if (gemm(p, p.A, p.K, stream) != cudaSuccess) {
    fprintf(stderr, "gemm_bf16_launch failed: %s\n", gemm_bf16_last_error());
    exit(2);
  }
}

// Launch once and compare with the reference; true if within tolerance.
bool check(const Problem& p, cudaStream_t stream) {
  launch(p, stream);
  float err = 0, ref = 0;
  compare(p.C, p.R, (size_t)p.M * p.N, &err, &ref, stream);
  CHECK(cudaStreamSynchronize(stream));  // a fault in any kernel so far surfaces here
  const bool ok = err <= kTolerance * ref;
  printf("%d x %d x %d: max error %.4g (max |C| %.4g, relative %.2e) %s\n", p.M, p.N, p.K, err,
         ref, err / ref, ok ? "OK" : "FAIL");
  return ok;
}

void time_it(const Problem& p, cudaStream_t stream) {
  constexpr int kWarmup = 5, kRuns = 50;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kWarmup; ++i) launch(p, stream);
  CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < kRuns; ++i) launch(p, stream);
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  ms /= kRuns;
  printf("%d x %d x %d: %.3f ms per launch, %.1f TFLOP/s (mean of %d)\n", p.M, p.N, p.K, ms,
         2.0 * p.M * p.N * p.K / (ms * 1e9), kRuns);
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
}

// Bad arguments: the launcher returns an error and a message, and launches nothing.
bool refuse(const char* what, cudaError_t e) {
  printf("%s: %s: %s\n", what, cudaGetErrorName(e), gemm_bf16_last_error());
  return e != cudaSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  const int M = argc == 4 ? atoi(argv[1]) : 4096, N = argc == 4 ? atoi(argv[2]) : 4096,
            K = argc == 4 ? atoi(argv[3]) : 4096;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  bool ok = true;

  Problem big = allocate(M, N, K, stream);
  ok &= check(big, stream);
  time_it(big, stream);
  if (argc != 4) {
    Problem ragged = allocate(1000, 3000, 1000, stream);
    ok &= check(ragged, stream);
    release(ragged);
  }

  // A pointer 2 bytes into A: TMA needs 16-byte alignment.
  ok &= refuse("misaligned A", gemm(big, (const uint16_t*)((const char*)big.A + 2), big.K, stream));
  // K = 100: a row of A is 200 bytes, not a multiple of 16, so no tensor map describes it.
  ok &= refuse("K = 100", gemm(big, big.A, 100, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());  // the refused calls left no CUDA error behind
  ok &= check(big, stream);   // and the launcher still works

  release(big);
  CHECK(cudaStreamDestroy(stream));
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
