// bench/blas_gemm.cpp — OpenBLAS sgemm on the shapes of `tapegrad-bench gemm`, for comparison.
//
//   tapegrad-bench-blas [threads]
//
// Built only when OpenBLAS is installed (bench/CMakeLists.txt); tapegrad itself never links
// it. Same timing as tapegrad-bench (3 warm-ups, then at least 0.5 s and 5 calls, mean),
// same JSON lines with "framework": "openblas".
#include <cblas.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" void openblas_set_num_threads(int num_threads);

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  openblas_set_num_threads(threads);
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  for (int n : {256, 512, 1024, 2048}) {
    std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    auto call = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                  n, 0.0f, c.data(), n);
    };
    for (int i = 0; i < 3; ++i) call();
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    double s = 0;
    for (int calls = 1;; ++calls) {
      call();
      const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
      if (dt > 0.5 && calls >= 5) {
        s = dt / calls;
        break;
      }
    }
    const double gflops = 2.0 * n * double(n) * n / s / 1e9;
    std::printf(
        "{\"framework\":\"openblas\",\"gflops\":%.2f,\"ms\":%.4f,\"shape\":[%d,%d,%d],"
        "\"threads\":%d,\"workload\":\"sgemm\"}\n",
        gflops, s * 1e3, n, n, n, threads);
  }
  return 0;
}
