// tests/ops/fast/gemm_bf16_test.cpp — the bfloat16 GEMM (float32 sums), on the vdpbf16ps path
// where this CPU has it and on the widening path everywhere, and the plain loop, all held to
// the bound of ops/fast/gemm.h against a float64 sum of the same bfloat16 inputs:
//
//   |c - (alpha sum_p a_ip b_pj + beta c0)| <= gamma_(k+2) (|alpha| sum_p |a_ip b_pj| + |beta c0|)
//
// with gamma_n = n u / (1 - n u), u = 2^-24 (products of bfloat16 are exact in float32, so
// only the float32 sums round).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ops/fast/gemm.h"
#include "test_util.h"

namespace tg {
namespace {

using detail::GemmPath;

/// Turns the dot path on or off for one scope.
class DotGuard {
 public:
  explicit DotGuard(bool on) : previous_(detail::set_gemm_bf16_dot(on)) {}
  ~DotGuard() { detail::set_gemm_bf16_dot(previous_); }

 private:
  bool previous_;
};

/// Forces a float gemm path (the one the widening path hands its panels to) for one scope.
class PathGuard {
 public:
  explicit PathGuard(GemmPath path) : previous_(detail::set_gemm_path(path)) {}
  ~PathGuard() { detail::set_gemm_path(previous_); }

 private:
  GemmPath previous_;
};

/// Which code computes C: the plain loop, or gemm() with the dot path on or off.
enum class Route { kReference, kDot, kWiden };

const char* name_of(Route r) {
  return r == Route::kReference ? "reference" : r == Route::kDot ? "dot" : "widen";
}

/// One case: op(A) is (m, k), op(B) (k, n); `pad` extra columns in every stored row.
struct Case {
  bool ta, tb;
  int64_t m, n, k;
  int64_t pad = 0;
  float alpha = 1, beta = 0;
};

/// A case's inputs: padding (and C, when beta == 0) holds NaN, which must be neither read
/// nor written.
struct Problem {
  Case c;
  int64_t lda, ldb, ldc;
  std::vector<BFloat16> a, b;
  std::vector<float> c0;
};

Problem make_problem(const Case& c, uint32_t seed = 1) {
  Problem p{c, (c.ta ? c.m : c.k) + c.pad, (c.tb ? c.k : c.n) + c.pad, c.n + c.pad, {}, {}, {}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  auto fill = [&](int64_t rows, int64_t cols, int64_t ld) {
    std::vector<float> v(static_cast<size_t>(std::max<int64_t>(rows * ld, 1)), nan);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) v[i * ld + j] = normal(rng);
    }
    return v;
  };
  auto to_bf16 = [](const std::vector<float>& v) {
    std::vector<BFloat16> out;
    for (float x : v) out.push_back(BFloat16(x));
    return out;
  };
  p.a = to_bf16(fill(c.ta ? c.k : c.m, c.ta ? c.m : c.k, p.lda));
  p.b = to_bf16(fill(c.tb ? c.n : c.k, c.tb ? c.k : c.n, p.ldb));
  p.c0 = fill(c.m, c.n, p.ldc);
  if (c.beta == 0) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) p.c0[i * p.ldc + j] = nan;
    }
  }
  return p;
}

std::vector<float> run(const Problem& p, Route route) {
  const Case& c = p.c;
  std::vector<float> out = p.c0;
  if (route == Route::kReference) {
    gemm_reference(c.ta, c.tb, c.m, c.n, c.k, c.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, c.beta,
                   out.data(), p.ldc);
    return out;
  }
  DotGuard dot(route == Route::kDot);
  gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, c.beta, out.data(),
       p.ldc);
  return out;
}

/// Every element of C: the float64 answer, and the bound on a float32 result's distance to it.
struct Expected {
  std::vector<double> want, bound;
};

Expected expected(const Problem& p) {
  const Case& c = p.c;
  const double u = std::ldexp(1.0, -24);
  const double n = double(c.k + 2), gamma = n * u / (1 - n * u);
  Expected e;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      // Exact products (16 bits each); the double sum's own error, below k 2^-53 magnitude,
      // is counted in the slack of the bound.
      double sum = 0, magnitude = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        const double x = static_cast<float>(c.ta ? p.a[q * p.lda + i] : p.a[i * p.lda + q]);
        const double y = static_cast<float>(c.tb ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j]);
        sum += x * y;
        magnitude += std::abs(x * y);
      }
      const double old = c.beta == 0 ? 0.0 : double(p.c0[i * p.ldc + j]);
      const double scaled = std::abs(c.alpha) * magnitude + std::abs(c.beta * old);
      e.want.push_back(c.alpha * sum + c.beta * old);
      e.bound.push_back(gamma * scaled + double(c.k) * std::ldexp(1.0, -52) * scaled);
    }
  }
  return e;
}

/// How many elements of `got` lie outside the bound (reported as failures when `report`), or
/// in the padding of C, which must stay NaN.
int count_outside(const Problem& p, const std::vector<float>& got, const Expected& e,
                  bool report = true) {
  const Case& c = p.c;
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const size_t at = static_cast<size_t>(i * c.n + j);
      const double g = got[i * p.ldc + j];
      if (!(std::abs(g - e.want[at]) <= e.bound[at]) && ++bad <= 5 && report) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << g << ", want " << e.want[at]
                      << " within " << e.bound[at];
      }
    }
    for (int64_t j = c.n; j < p.ldc; ++j) {
      if (!std::isnan(got[i * p.ldc + j]) && ++bad <= 5 && report) {
        ADD_FAILURE() << "padding of row " << i << " was written";
      }
    }
  }
  return bad;
}

void check_case(const Case& c, Route route) {
  SCOPED_TRACE(::testing::Message()
               << name_of(route) << " ta=" << c.ta << " tb=" << c.tb << " m=" << c.m << " n=" << c.n
               << " k=" << c.k << " pad=" << c.pad << " alpha=" << c.alpha << " beta=" << c.beta);
  const Problem p = make_problem(c);
  EXPECT_EQ(count_outside(p, run(p, route), expected(p)), 0);
}

std::vector<Case> all_cases() {
  // Odd k everywhere (a half pair at the end), m and n no multiples of any tile, k past one
  // KC block of either path (768 pairs: 1537 is three blocks of the dot path, four of the
  // float one).
  const int64_t sizes[][3] = {{1, 1, 1},      {7, 5, 3},     {1, 129, 7},   {129, 1, 257},
                              {257, 129, 65}, {13, 33, 401}, {40, 70, 801}, {3, 4500, 5},
                              {31, 63, 1},    {15, 47, 1537}};
  std::vector<Case> cases;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const auto& s : sizes) cases.push_back({ta, tb, s[0], s[1], s[2]});
      cases.push_back({ta, tb, 37, 45, 29, /*pad=*/3, /*alpha=*/-0.5f, /*beta=*/1.5f});
      cases.push_back({ta, tb, 50, 33, 271, /*pad=*/5, /*alpha=*/2.0f, /*beta=*/1.0f});
      cases.push_back({ta, tb, 29, 35, 64, /*pad=*/1, /*alpha=*/0.25f, /*beta=*/0.0f});
    }
  }
  return cases;
}

std::vector<GemmPath> float_paths() {
  std::vector<GemmPath> paths;
  for (GemmPath p : {GemmPath::kPortable, GemmPath::kAvx2, GemmPath::kAvx512}) {
    if (detail::gemm_path_supported(p)) paths.push_back(p);
  }
  return paths;
}

TEST(GemmBf16Test, TheBoundCheckCatchesAPerturbedResult) {
  // The check is only worth something if it can fail: a result moved by twice its bound
  // must be caught, one moved by half of it must not.
  const Problem p = make_problem({false, true, 9, 11, 77, /*pad=*/2, /*alpha=*/1.5f, 0.5f});
  const Expected e = expected(p);
  std::vector<float> got = run(p, Route::kReference);
  ASSERT_EQ(count_outside(p, got, e), 0);
  const int64_t i = 4, j = 7, at = i * p.c.n + j;
  got[i * p.ldc + j] = static_cast<float>(e.want[at] + 2 * e.bound[at]);
  EXPECT_EQ(count_outside(p, got, e, /*report=*/false), 1);
  got[i * p.ldc + j] = static_cast<float>(e.want[at] - 0.5 * e.bound[at]);
  EXPECT_EQ(count_outside(p, got, e), 0);
  got[i * p.ldc + p.c.n] = 0.0f;  // a write into the padding is caught too
  EXPECT_EQ(count_outside(p, got, e, /*report=*/false), 1);
}

TEST(GemmBf16Test, MatchesDoubleWithinTheFloat32SumBound) {
  for (const Case& c : all_cases()) check_case(c, Route::kReference);
  for (GemmPath path : float_paths()) {  // the widening path on every float kernel
    SCOPED_TRACE(detail::gemm_path_name(path));
    PathGuard guard(path);
    for (const Case& c : all_cases()) check_case(c, Route::kWiden);
  }
}

TEST(GemmBf16Test, DotPathMatchesDoubleWithinTheFloat32SumBound) {
  if (!detail::gemm_bf16_dot_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  for (const Case& c : all_cases()) check_case(c, Route::kDot);
}

TEST(GemmBf16Test, AnyThreadCountGivesBitIdenticalResults) {
  // (301, 97) cuts the rows of C, (45, 1000) the columns, into slabs that end in ragged
  // tiles; k = 1537 is several KC blocks on either path and ends in a half pair.
  const int64_t shapes[][3] = {{301, 97, 1537}, {45, 1000, 301}, {5200, 20, 51}};
  std::vector<Route> routes = {Route::kWiden};
  if (detail::gemm_bf16_dot_supported()) routes.push_back(Route::kDot);
  for (Route route : routes) {
    for (const auto& s : shapes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          const Problem p = make_problem({ta, tb, s[0], s[1], s[2], /*pad=*/3, 0.75f, 1.5f});
          auto on = [&](int threads) {
            NumThreadsGuard t(threads);
            return run(p, route);
          };
          const std::vector<float> one = on(1);
          for (int threads : {2, 3}) {
            EXPECT_EQ(std::memcmp(one.data(), on(threads).data(), one.size() * sizeof(float)), 0)
                << name_of(route) << " ta=" << ta << " tb=" << tb << " m=" << s[0] << " n=" << s[1]
                << ": " << threads << " threads differ from 1";
          }
        }
      }
    }
  }
}

TEST(GemmBf16Test, ThreadedCallsPassTheSameChecks) {
  NumThreadsGuard threads(2);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Case c{ta, tb, 301, 97, 701, /*pad=*/2, /*alpha=*/1.0f, /*beta=*/0.5f};
      check_case(c, Route::kWiden);
      if (detail::gemm_bf16_dot_supported()) check_case(c, Route::kDot);
    }
  }
}

TEST(GemmBf16Test, RoundedOutputIsTheFloatResultRoundedOnce) {
  // gemm_round(bias) must give exactly the bits of: C = bias in every row, gemm with beta 1,
  // then each element rounded to bfloat16. Shapes with ragged tiles cut by rows and by
  // columns, k within one KC block of the dot path (rounded in the tile) and k = 1537 beyond
  // it (the float C and a rounding pass), with and without a bias, 1 and 3 threads, on both
  // routes. The rows of C are padded: the padding must stay as it was.
  const int64_t shapes[][3] = {{301, 97, 128}, {45, 1000, 384}, {64, 33, 1537}, {3, 5, 7}};
  std::vector<Route> routes = {Route::kWiden};
  if (detail::gemm_bf16_dot_supported()) routes.push_back(Route::kDot);
  for (Route route : routes) {
    DotGuard dot(route == Route::kDot);
    for (const auto& s : shapes) {
      for (bool tb : {false, true}) {
        for (bool with_bias : {false, true}) {
          const int64_t m = s[0], n = s[1], ldc = n + 3;
          const Problem p = make_problem({false, tb, m, n, s[2], /*pad=*/1});
          std::vector<float> bias(static_cast<size_t>(n));
          for (int64_t j = 0; j < n; ++j) bias[j] = 0.25f * float(j % 7) - 0.5f;
          const float* b = with_bias ? bias.data() : nullptr;
          std::vector<float> y(static_cast<size_t>(m * ldc), 0.0f);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) y[i * ldc + j] = with_bias ? bias[j] : 0.0f;
          }
          gemm(false, tb, m, n, s[2], 1.0f, p.a.data(), p.lda, p.b.data(), p.ldb,
               with_bias ? 1.0f : 0.0f, y.data(), ldc);
          for (int threads : {1, 3}) {
            NumThreadsGuard t(threads);
            std::vector<BFloat16> got(static_cast<size_t>(m * ldc), BFloat16(-7.0f));
            gemm_round(false, tb, m, n, s[2], p.a.data(), p.lda, p.b.data(), p.ldb, b, got.data(),
                       ldc);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < ldc; ++j) {
                const uint16_t want = j < n ? BFloat16(y[i * ldc + j]).bits : BFloat16(-7.0f).bits;
                ASSERT_EQ(got[i * ldc + j].bits, want)
                    << name_of(route) << " m=" << m << " n=" << n << " k=" << s[2] << " tb=" << tb
                    << " bias=" << with_bias << " threads=" << threads << " at (" << i << ", " << j
                    << ")";
              }
            }
          }
        }
      }
    }
  }
}

TEST(GemmBf16Test, KnownSmallProductOnEveryRoute) {
  // [1 2 3; 4 5 6] [7 8; 9 10; 11 12] = [58 64; 139 154]: small integers, exact in bfloat16
  // and in every sum.
  auto bf = [](std::initializer_list<float> v) {
    std::vector<BFloat16> out;
    for (float x : v) out.push_back(BFloat16(x));
    return out;
  };
  const auto a = bf({1, 2, 3, 4, 5, 6}), b = bf({7, 8, 9, 10, 11, 12});
  const auto at = bf({1, 4, 2, 5, 3, 6}), bt = bf({7, 9, 11, 8, 10, 12});
  std::vector<Route> routes = {Route::kWiden};
  if (detail::gemm_bf16_dot_supported()) routes.push_back(Route::kDot);
  for (Route route : routes) {
    DotGuard dot(route == Route::kDot);
    float c[4] = {};
    gemm(false, false, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c, 2);
    EXPECT_THAT(c, ::testing::ElementsAre(58, 64, 139, 154)) << name_of(route);
    gemm(true, true, 2, 2, 3, 1.0f, at.data(), 2, bt.data(), 3, 0.0f, c, 2);
    EXPECT_THAT(c, ::testing::ElementsAre(58, 64, 139, 154)) << name_of(route);
  }
  float c[4] = {};
  gemm_reference(false, false, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c, 2);
  EXPECT_THAT(c, ::testing::ElementsAre(58, 64, 139, 154));
}

TEST(GemmBf16Test, DotPathFlushesDenormalsAsDocumented) {
  // 2^-130 is a bfloat16 denormal (the smallest normal is 2^-126). Widened, it is a float
  // denormal and the product with 1 keeps it; vdpbf16ps reads it as zero.
  if (!detail::gemm_bf16_dot_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  const BFloat16 tiny(std::ldexp(1.0f, -130)), one(1.0f);
  ASSERT_EQ(tiny.bits, 0x0008);
  float c = -1;
  {
    DotGuard dot(false);
    gemm(false, false, 1, 1, 1, 1.0f, &tiny, 1, &one, 1, 0.0f, &c, 1);
    EXPECT_EQ(c, std::ldexp(1.0f, -130));
  }
  DotGuard dot(true);
  gemm(false, false, 1, 1, 1, 1.0f, &tiny, 1, &one, 1, 0.0f, &c, 1);
  EXPECT_EQ(c, 0.0f);
}

TEST(GemmBf16Test, PathNamesAndTheSwitch) {
  {
    DotGuard dot(false);
    EXPECT_THAT(detail::gemm_bf16_path_name(), ::testing::StartsWith("widen+"));
  }
  if (detail::gemm_bf16_dot_supported()) {
    DotGuard dot(true);
    EXPECT_STREQ(detail::gemm_bf16_path_name(), "avx512_bf16");
  } else {
    EXPECT_TG_THROW(detail::set_gemm_bf16_dot(true), ValueError, "set_gemm_bf16_dot",
                    "AVX512-BF16");
  }
}

}  // namespace
}  // namespace tg
