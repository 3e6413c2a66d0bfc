// tests/ops/fast/gemm_test.cpp — the blocked GEMM against the plain triple loop, on every path
// this CPU supports, every transpose case, ragged sizes, strided leading dims, alpha/beta.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "core/parallel.h"
#include "ops/fast/gemm.h"
#include "test_util.h"

namespace tg {
namespace {

using detail::GemmPath;

/// Forces a gemm path for one scope.
class PathGuard {
 public:
  explicit PathGuard(GemmPath path) : previous_(detail::set_gemm_path(path)) {}
  ~PathGuard() { detail::set_gemm_path(previous_); }

 private:
  GemmPath previous_;
};

std::vector<GemmPath> supported_paths() {
  std::vector<GemmPath> paths;
  for (GemmPath p : {GemmPath::kPortable, GemmPath::kAvx2, GemmPath::kAvx512}) {
    if (detail::gemm_path_supported(p)) paths.push_back(p);
  }
  return paths;
}

/// One test case: op(A) is (m, k), op(B) (k, n); `pad` extra columns in every stored row.
struct Case {
  bool ta, tb;
  int64_t m, n, k;
  int64_t pad = 0;
  double alpha = 1, beta = 0;
};

/// Runs gemm on random data and checks every element against a float64 triple loop, with
/// the worst-case rounding bound of any summation order: |err| <= (k + 2) eps (|alpha| *
/// sum_p |a_ip b_pj| + |beta c_ij|). Padding must be neither read (it holds NaN) nor written.
template <class T>
void check_case(const Case& c, bool plain = false, uint32_t seed = 1) {
  SCOPED_TRACE(::testing::Message()
               << "ta=" << c.ta << " tb=" << c.tb << " m=" << c.m << " n=" << c.n << " k=" << c.k
               << " pad=" << c.pad << " alpha=" << c.alpha << " beta=" << c.beta);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
  const int64_t b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  auto fill = [&](int64_t rows, int64_t cols, int64_t ld) {
    std::vector<T> v(static_cast<size_t>(std::max<int64_t>(rows * ld, 1)), nan);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) v[i * ld + j] = static_cast<T>(normal(rng));
    }
    return v;
  };
  const std::vector<T> a = fill(a_rows, a_cols, lda), b = fill(b_rows, b_cols, ldb);
  std::vector<T> c0 = fill(c.m, c.n, ldc);
  if (c.beta == 0) {  // C is write-only when beta == 0: garbage in it must not leak out
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) c0[i * ldc + j] = nan;
    }
  }
  std::vector<T> out = c0;
  // the plain triple loop, or the blocked GEMM
  using Gemm = void (*)(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,
                        int64_t, T, T*, int64_t);
  const Gemm run = plain ? static_cast<Gemm>(&gemm_reference) : static_cast<Gemm>(&gemm);
  run(c.ta, c.tb, c.m, c.n, c.k, static_cast<T>(c.alpha), a.data(), lda, b.data(), ldb,
      static_cast<T>(c.beta), out.data(), ldc);
  const double eps = std::numeric_limits<T>::epsilon();
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = c.ta ? a[p * lda + i] : a[i * lda + p];
        const double y = c.tb ? b[j * ldb + p] : b[p * ldb + j];
        exact += x * y;
        magnitude += std::abs(x * y);
      }
      const double old = c.beta == 0 ? 0.0 : static_cast<double>(c0[i * ldc + j]);
      const double want = c.alpha * exact + c.beta * old;
      const double bound =
          double(c.k + 2) * eps * (std::abs(c.alpha) * magnitude + std::abs(c.beta * old));
      const double got = out[i * ldc + j];
      if (!(std::abs(got - want) <= bound + 1e-300) && ++bad <= 5) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", want " << want << " within "
                      << bound;
      }
    }
    for (int64_t j = c.n; j < ldc; ++j) {
      EXPECT_TRUE(std::isnan(out[i * ldc + j])) << "padding of row " << i << " was written";
    }
  }
  EXPECT_EQ(bad, 0);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const int64_t sizes[][3] = {{1, 1, 1},     {7, 5, 3},      {1, 129, 7},
                              {129, 1, 257}, {257, 129, 65}, {13, 33, 400},
                              {40, 70, 800}, {3, 4500, 5},   {31, 63, 1}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const auto& s : sizes) cases.push_back({ta, tb, s[0], s[1], s[2]});
      cases.push_back({ta, tb, 37, 45, 29, /*pad=*/3, /*alpha=*/-0.5, /*beta=*/1.5});
      cases.push_back({ta, tb, 50, 33, 270, /*pad=*/5, /*alpha=*/2.0, /*beta=*/1.0});
    }
  }
  return cases;
}

TEST(Gemm, EveryPathEveryCaseFloat32) {
  for (GemmPath path : supported_paths()) {
    SCOPED_TRACE(detail::gemm_path_name(path));
    PathGuard guard(path);
    for (const Case& c : all_cases()) check_case<float>(c);
  }
}

TEST(Gemm, EveryPathEveryCaseFloat64) {
  for (GemmPath path : supported_paths()) {
    SCOPED_TRACE(detail::gemm_path_name(path));
    PathGuard guard(path);
    for (const Case& c : all_cases()) check_case<double>(c);
  }
}

TEST(Gemm, ThePlainLoopPassesTheSameChecks) {
  for (const Case& c : all_cases()) check_case<float>(c, /*plain=*/true);
}

TEST(Gemm, SamePathIsBitIdenticalRunToRun) {
  const int64_t m = 131, n = 77, k = 900;
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  for (GemmPath path : supported_paths()) {
    PathGuard guard(path);
    std::vector<float> first(m * n), again(m * n);
    gemm(false, true, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, first.data(), n);
    for (int rep = 0; rep < 3; ++rep) {
      gemm(false, true, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, again.data(), n);
      EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0)
          << detail::gemm_path_name(path);
    }
  }
}

TEST(Gemm, AnyThreadCountGivesBitIdenticalResults) {
  // Big enough to be shared out: (301, 97) cuts the rows of C, (45, 1000) the columns;
  // 301 and 1000 are no multiple of any tile, so slabs end in ragged tiles. k = 700 is two
  // KC blocks (the shared operand is packed twice); on 2 threads a slab of (5200, 20) holds
  // two MC blocks, and one of (45, 1000) two NC blocks.
  const int64_t shapes[][3] = {{301, 97, 700}, {45, 1000, 300}, {5200, 20, 50}};
  for (GemmPath path : supported_paths()) {
    PathGuard guard(path);
    for (const auto& s : shapes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          const int64_t m = s[0], n = s[1], k = s[2], pad = 3;
          const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
          std::vector<float> a((ta ? k : m) * lda), b((tb ? n : k) * ldb), c0(m * ldc);
          std::mt19937 rng(11);
          std::normal_distribution<float> normal;
          for (auto* v : {&a, &b, &c0}) {
            for (float& x : *v) x = normal(rng);
          }
          auto run = [&](int threads) {
            NumThreadsGuard t(threads);
            std::vector<float> c = c0;
            gemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, 1.5f, c.data(), ldc);
            return c;
          };
          const std::vector<float> one = run(1);
          for (int threads : {2, 3, 7}) {
            EXPECT_EQ(std::memcmp(one.data(), run(threads).data(), one.size() * sizeof(float)), 0)
                << detail::gemm_path_name(path) << " ta=" << ta << " tb=" << tb << " m=" << m
                << " n=" << n << ": " << threads << " threads differ from 1";
          }
        }
      }
    }
  }
}

TEST(Gemm, ThreadedCallsPassTheSameChecks) {
  NumThreadsGuard threads(2);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_case<float>({ta, tb, 301, 97, 700, /*pad=*/2, /*alpha=*/1.0, /*beta=*/0.5});
      check_case<double>({ta, tb, 45, 1000, 300});
    }
  }
}

TEST(Gemm, EmptyInnerDimScalesC) {
  std::vector<double> c = {1, 2, 3, 4};
  gemm(false, false, 2, 2, 0, 1.0, nullptr, 1, nullptr, 2, 0.5, c.data(), 2);
  EXPECT_THAT(c, ::testing::ElementsAre(0.5, 1, 1.5, 2));
  gemm(false, false, 2, 2, 0, 1.0, nullptr, 1, nullptr, 2, 0.0, c.data(), 2);
  EXPECT_THAT(c, ::testing::ElementsAre(0, 0, 0, 0));
}

TEST(Gemm, KnownSmallProduct) {
  // [1 2 3; 4 5 6] [7 8; 9 10; 11 12] = [58 64; 139 154], on every path.
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
  for (GemmPath path : supported_paths()) {
    PathGuard guard(path);
    float c[4] = {};
    gemm(false, false, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2);
    EXPECT_THAT(c, ::testing::ElementsAre(58, 64, 139, 154)) << detail::gemm_path_name(path);
    // the same with both operands stored transposed: A^T is (3, 2), B^T is (2, 3)
    const float at[] = {1, 4, 2, 5, 3, 6}, bt[] = {7, 9, 11, 8, 10, 12};
    gemm(true, true, 2, 2, 3, 1.0f, at, 2, bt, 3, 0.0f, c, 2);
    EXPECT_THAT(c, ::testing::ElementsAre(58, 64, 139, 154)) << detail::gemm_path_name(path);
  }
}

TEST(Gemm, UnsupportedPathIsRefused) {
  for (GemmPath p : {GemmPath::kAvx2, GemmPath::kAvx512}) {
    if (detail::gemm_path_supported(p)) continue;
    EXPECT_TG_THROW(detail::set_gemm_path(p), ValueError, "set_gemm_path",
                    detail::gemm_path_name(p));
  }
  EXPECT_TRUE(detail::gemm_path_supported(GemmPath::kPortable));
}

}  // namespace
}  // namespace tg
