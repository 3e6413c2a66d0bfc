// tests/ops/attention_tiled_test.cpp — attention's tiled kernel (AttentionKernel::kTiled,
// ops/attention_tiled.cpp): the online softmax by hand, the tiled kernel against the row
// kernel over shapes, tile sizes, masks and layouts, gradients against finite differences,
// the backward bit for bit given the same logsumexp, memory, and the algorithm's guard.
#include <cmath>
#include <limits>
#include <thread>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Each;
using testing::leaf;
using ::testing::Pointwise;

constexpr double kInf = std::numeric_limits<double>::infinity();

AttentionAlgorithm tiled(int64_t tile_q, int64_t tile_k) {
  return {AttentionKernel::kTiled, tile_q, tile_k};
}
const AttentionAlgorithm kRowsKernel{};

/// Attention with `algorithm` for this call (forward; its backward follows the node).
Tensor sdpa_with(const AttentionAlgorithm& algorithm, const Tensor& q, const Tensor& k,
                 const Tensor& v, const Tensor& mask = Tensor(), bool causal = false,
                 std::optional<double> scale = std::nullopt) {
  AttentionAlgorithmGuard guard(algorithm);
  return scaled_dot_product_attention(q, k, v, mask, causal, scale);
}

/// A bool (rows, cols) mask in which every query keeps key (i mod cols) and some others.
Tensor ragged_mask(int64_t rows, int64_t cols) {
  Tensor m = empty({rows, cols}, kBool);
  bool* p = m.data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = j == i % cols || (i * 7 + j * 3) % 5 < 2;
  return m;
}

// ---------------------------------------------------------------- forward values by hand
TEST(TiledAttentionTest, TwoKeysInTwoTilesByHand) {
  // Chapter 12's two keys, one key per tile: the second tile's merge rescales the first.
  // q = (1, 0), k_0 = (2, 0), k_1 = (0, 1), scale 1/sqrt(2): s = (sqrt 2, 0).
  const Tensor q = tensor({1.0, 0.0}, {1, 1, 1, 2});
  const Tensor k = tensor({2.0, 0.0, 0.0, 1.0}, {1, 1, 2, 2});
  const Tensor v = tensor({1.0, 0.0, 0.0, 1.0}, {1, 1, 2, 2});
  const double p0 = std::exp(std::sqrt(2.0)) / (std::exp(std::sqrt(2.0)) + 1);
  EXPECT_THAT(as_doubles(sdpa_with(tiled(1, 1), q, k, v)),
              Pointwise(DoubleNear(1e-15), {p0, 1 - p0}));
}

TEST(TiledAttentionTest, AGrowingMaxRescalesWhatCameBefore) {
  // s = (0, 1, 2, 3) (q = 1, k_j = j, scale 1), one key per tile: every merge meets a larger
  // max. out = sum_j e^j v_j / sum_j e^j with v = (1, 10, 100, 1000); L = log sum_j e^j.
  const Tensor q = ones({1, 1, 1, 1}, kFloat64);
  const Tensor k = tensor({0.0, 1.0, 2.0, 3.0}, {1, 1, 4, 1});
  const Tensor v = tensor({1.0, 10.0, 100.0, 1000.0}, {1, 1, 4, 1});
  double num = 0, den = 0;
  for (int j = 0; j < 4; ++j) {
    num += std::exp(j) * std::pow(10.0, j);
    den += std::exp(j);
  }
  for (const AttentionAlgorithm& a : {tiled(1, 1), tiled(1, 3), tiled(1, 4), kRowsKernel}) {
    EXPECT_THAT(as_doubles(sdpa_with(a, q, k, v, {}, false, 1.0)),
                Pointwise(DoubleNear(1e-12), {num / den}))
        << "tile_k " << a.tile_k;
  }
  // A shrinking max (s = 3, 2, 1, 0): merges that keep the old max, the same result.
  const Tensor k_down = tensor({3.0, 2.0, 1.0, 0.0}, {1, 1, 4, 1});
  const Tensor v_down = tensor({1000.0, 100.0, 10.0, 1.0}, {1, 1, 4, 1});
  EXPECT_THAT(as_doubles(sdpa_with(tiled(1, 1), q, k_down, v_down, {}, false, 1.0)),
              Pointwise(DoubleNear(1e-12), {num / den}));
}

TEST(TiledAttentionTest, LargeScoresInSeparateTilesDoNotOverflow) {
  // s = (999, 1000) in two tiles: e^1000 overflows unless every exponent is relative to the
  // running max, which rises from 999 to 1000 at the second tile.
  const Tensor q = full({1, 1, 1, 1}, 1000.0, kFloat64);
  const Tensor k = tensor({0.999, 1.0}, {1, 1, 2, 1});
  const Tensor v = tensor({0.0, 1.0}, {1, 1, 2, 1});
  const double p1 = 1 / (1 + std::exp(-1.0));
  EXPECT_THAT(as_doubles(sdpa_with(tiled(1, 1), q, k, v, {}, false, 1.0)),
              Pointwise(DoubleNear(1e-12), {p1}));
  // In float32 as well, where e^89 already overflows.
  const Tensor out32 =
      sdpa_with(tiled(1, 1), q.to(kFloat32), k.to(kFloat32), v.to(kFloat32), {}, false, 1.0);
  EXPECT_THAT(as_doubles(out32), Pointwise(DoubleNear(1e-6), {p1}));
}

TEST(TiledAttentionTest, ATileWithEveryKeyMaskedChangesNothing) {
  // Keys 0 and 1 (the first tile of two) are masked for query 0: its first partial is empty,
  // and merging it must not turn the row into 0/0.
  const Tensor q = zeros({1, 1, 1, 1}, kFloat64), k = zeros({1, 1, 4, 1}, kFloat64);
  const Tensor v = tensor({100.0, 200.0, 3.0, 5.0}, {1, 1, 4, 1});
  const Tensor keep = tensor({false, false, true, true}, {1, 4});
  EXPECT_THAT(as_doubles(sdpa_with(tiled(1, 2), q, k, v, keep)), Pointwise(DoubleNear(0), {4.0}));
  // And masked last: the empty partial comes after the real ones.
  const Tensor keep_last = tensor({true, true, false, false}, {1, 4});
  EXPECT_THAT(as_doubles(sdpa_with(tiled(1, 2), q, k, v, keep_last)),
              Pointwise(DoubleNear(0), {150.0}));
}

TEST(TiledAttentionTest, FullyMaskedRowOutputsZerosAndZeroGradient) {
  Generator gen(6);
  const Tensor q = leaf({1, 2, 3, 4}, gen), k = leaf({1, 2, 5, 4}, gen),
               v = leaf({1, 2, 5, 3}, gen);
  Tensor m = ragged_mask(3, 5);
  for (int64_t j = 0; j < 5; ++j) m.data<bool>()[5 + j] = false;  // query 1 sees nothing
  const Tensor out = sdpa_with(tiled(2, 2), q, k, v, m);
  EXPECT_THAT(as_doubles(out.select(2, 1)), Each(0.0));
  const auto g = grad({out}, {q, k, v}, {ones({1, 2, 3, 3}, kFloat64)});
  EXPECT_THAT(as_doubles(g[0].select(2, 1)), Each(0.0));
  const Tensor rows = sdpa_with(kRowsKernel, q, k, v, m);
  EXPECT_THAT(as_doubles(out), Pointwise(DoubleNear(1e-14), as_doubles(rows)));
  // Tk = 0: no key tile at all.
  const Tensor none =
      sdpa_with(tiled(2, 2), q, zeros({1, 2, 0, 4}, kFloat64), zeros({1, 2, 0, 6}, kFloat64));
  EXPECT_EQ(none.shape(), (Shape{1, 2, 3, 6}));
  EXPECT_THAT(as_doubles(none), Each(0.0));
}

// ---------------------------------------------------------------- against the row kernel
struct Case {
  int64_t B, H, Tq, Tk, D, Dv;
  int mask;  // 0 none, 1 causal, 2 bool (Tq, Tk), 3 float (B, 1, Tq, Tk) with a gradient
};

const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, 0},   {2, 3, 7, 7, 4, 5, 1},   {1, 2, 5, 13, 3, 2, 0},
    {2, 1, 13, 5, 3, 4, 1},  {1, 2, 9, 11, 4, 3, 2},  {2, 2, 6, 10, 3, 3, 3},
    {1, 1, 33, 70, 8, 8, 1}, {1, 1, 70, 33, 8, 8, 1},
};
const AttentionAlgorithm kTilings[] = {tiled(1, 1), tiled(3, 2), tiled(2, 5), tiled(4, 16),
                                       tiled(64, 64)};

TEST(TiledAttentionTest, AgreesWithTheRowKernelValuesAndGradients) {
  Generator gen(21);
  for (const Case& c : kCases) {
    // q, k, v as a model makes them: (B, T, H, D) transposed, not contiguous.
    auto heads = [&](int64_t t, int64_t d) {
      return randn({c.B, t, c.H, d}, kFloat64, gen).transpose(1, 2).requires_grad_();
    };
    const Tensor q = heads(c.Tq, c.D), k = heads(c.Tk, c.D), v = heads(c.Tk, c.Dv);
    Tensor mask;
    if (c.mask == 2) mask = ragged_mask(c.Tq, c.Tk);
    if (c.mask == 3) mask = leaf({c.B, 1, c.Tq, c.Tk}, gen);
    const bool causal = c.mask == 1;
    std::vector<Tensor> wrt{q, k, v};
    if (c.mask == 3) wrt.push_back(mask);
    const Tensor rows = sdpa_with(kRowsKernel, q, k, v, mask, causal);
    const Tensor gout = randn(rows.shape(), kFloat64, gen);
    const auto grow = grad({rows}, wrt, {gout});
    for (const AttentionAlgorithm& a : kTilings) {
      const std::string where =
          fmt::format("T {}x{} mask {} tiles {}x{}", c.Tq, c.Tk, c.mask, a.tile_q, a.tile_k);
      const Tensor out = sdpa_with(a, q, k, v, mask, causal);
      EXPECT_THAT(as_doubles(out), Pointwise(DoubleNear(1e-13), as_doubles(rows))) << where;
      const auto g = grad({out}, wrt, {gout});
      for (size_t i = 0; i < wrt.size(); ++i) {
        EXPECT_THAT(as_doubles(g[i]), Pointwise(DoubleNear(1e-12), as_doubles(grow[i])))
            << where << " grad " << i;
      }
    }
  }
}

TEST(TiledAttentionTest, Float32AgreesWithTheRowKernel) {
  Generator gen(22);
  const Tensor q = randn({2, 2, 37, 8}, kFloat32, gen).requires_grad_();
  const Tensor k = randn({2, 2, 37, 8}, kFloat32, gen).requires_grad_();
  const Tensor v = randn({2, 2, 37, 8}, kFloat32, gen).requires_grad_();
  const Tensor rows = sdpa_with(kRowsKernel, q, k, v, {}, true);
  const Tensor out = sdpa_with(tiled(8, 8), q, k, v, {}, true);
  EXPECT_EQ(out.dtype(), kFloat32);
  // Both round every product to float32: |p| <= 1 and |v| < 5, so a few ulps of 5 apart.
  EXPECT_THAT(as_doubles(out), Pointwise(DoubleNear(1e-5), as_doubles(rows)));
  const Tensor gout = ones(out.shape(), kFloat32);
  const auto g = grad({out}, {q, k, v}, {gout}), grow = grad({rows}, {q, k, v}, {gout});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_THAT(as_doubles(g[i]), Pointwise(DoubleNear(1e-4), as_doubles(grow[i]))) << i;
  }
}

TEST(TiledAttentionTest, BackwardGivesTheRowKernelsBitsFromTheSameLogsumexp) {
  // Given one L, both backward kernels sum each gradient's terms in the same order: the tiles
  // reorder the work, not the sums (ops/attention_tiled.cpp). Called directly, on the
  // reference kernels, with one lse for both.
  Generator gen(23);
  const kernels::AttentionDims n{2, 2, 11, 13, 3, 4};
  const Tensor q = randn({2, 2, 11, 3}, kFloat64, gen), k = randn({2, 2, 13, 3}, kFloat64, gen);
  const Tensor v = randn({2, 2, 13, 4}, kFloat64, gen), g = randn({2, 2, 11, 4}, kFloat64, gen);
  const Tensor keep = ragged_mask(11, 13);
  kernels::AttentionMask<double> mask;
  mask.keep = keep.data<bool>();
  mask.stride[2] = 13;
  mask.stride[3] = 1;
  auto rows_of = [](const Tensor& t) {
    return kernels::HeadRows<double>{static_cast<double*>(t.raw_data()), t.stride(0), t.stride(1),
                                     t.stride(2)};
  };
  auto crows = [&](const Tensor& t) {
    const auto r = rows_of(t);
    return kernels::HeadRows<const double>{r.data, r.sb, r.sh, r.st};
  };
  Tensor out = empty({2, 2, 11, 4}, kFloat64), lse = empty({2, 2, 11}, kFloat64);
  kernels::attention_forward.of<double>().reference()(crows(q), crows(k), crows(v), rows_of(out),
                                                      lse.data<double>(), n, 0.6, mask);
  std::vector<Tensor> by_rows, by_tiles;
  for (int t = 0; t < 2; ++t) {
    std::vector<Tensor>& grads = t == 0 ? by_rows : by_tiles;
    for (const Shape& s : {Shape{2, 2, 11, 3}, Shape{2, 2, 13, 3}, Shape{2, 2, 13, 4}})
      grads.push_back(full(s, 7.0, kFloat64));  // written over, never read
    if (t == 0) {
      kernels::attention_backward.of<double>().reference()(
          crows(g), crows(q), crows(k), crows(v), crows(out), lse.data<double>(), rows_of(grads[0]),
          rows_of(grads[1]), rows_of(grads[2]), nullptr, n, 0.6, mask);
    } else {
      kernels::attention_tiled_backward.of<double>().reference()(
          crows(g), crows(q), crows(k), crows(v), crows(out), lse.data<double>(), rows_of(grads[0]),
          rows_of(grads[1]), rows_of(grads[2]), nullptr, n, 0.6, mask, {3, 4});
    }
  }
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(as_doubles(by_tiles[i]), as_doubles(by_rows[i])) << i;
}

TEST(TiledAttentionTest, AddsIntoAnExistingGrad) {
  // The write rule: a second backward adds into .grad (dq in place, dk and dv per key tile).
  Generator gen(24);
  const Tensor q = leaf({1, 2, 6, 3}, gen), k = leaf({1, 2, 7, 3}, gen),
               v = leaf({1, 2, 7, 2}, gen);
  const Tensor gout = randn({1, 2, 6, 2}, kFloat64, gen);
  sdpa_with(tiled(4, 3), q, k, v, {}, true).backward(gout);
  const Tensor once[] = {q.grad().clone(), k.grad().clone(), v.grad().clone()};
  sdpa_with(tiled(4, 3), q, k, v, {}, true).backward(gout);
  const Tensor twice[] = {q.grad(), k.grad(), v.grad()};
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(as_doubles(twice[i]), Pointwise(DoubleNear(1e-14), as_doubles(mul(once[i], 2.0))))
        << i;
  }
}

// ---------------------------------------------------------------- gradcheck
TEST(TiledAttentionTest, GradcheckShapesMasksAndLayouts) {
  Generator gen(25);
  AttentionAlgorithmGuard guard(tiled(2, 3));
  auto plain = [](const std::vector<Tensor>& in) {
    return scaled_dot_product_attention(in[0], in[1], in[2]);
  };
  auto causal = [](const std::vector<Tensor>& in) {
    return scaled_dot_product_attention(in[0], in[1], in[2], {}, true);
  };
  EXPECT_GRADCHECK(plain,
                   {leaf({1, 1, 1, 1}, gen), leaf({1, 1, 1, 1}, gen), leaf({1, 1, 1, 1}, gen)});
  EXPECT_GRADCHECK(plain,
                   {leaf({2, 2, 5, 3}, gen), leaf({2, 2, 7, 3}, gen), leaf({2, 2, 7, 2}, gen)});
  EXPECT_GRADCHECK(causal,
                   {leaf({1, 2, 7, 3}, gen), leaf({1, 2, 7, 3}, gen), leaf({1, 2, 7, 4}, gen)});
  EXPECT_GRADCHECK(causal,
                   {leaf({1, 1, 8, 2}, gen), leaf({1, 1, 5, 2}, gen), leaf({1, 1, 5, 3}, gen)});
  const Tensor bm = ragged_mask(5, 7);
  auto boolean = [bm](const std::vector<Tensor>& in) {
    return scaled_dot_product_attention(in[0], in[1], in[2], bm);
  };
  EXPECT_GRADCHECK(boolean,
                   {leaf({2, 1, 5, 3}, gen), leaf({2, 1, 7, 3}, gen), leaf({2, 1, 7, 2}, gen)});
  auto floating = [](const std::vector<Tensor>& in) {
    return scaled_dot_product_attention(in[0], in[1], in[2], in[3], false, 0.7);
  };
  EXPECT_GRADCHECK(floating, {leaf({2, 2, 4, 3}, gen), leaf({2, 2, 5, 3}, gen),
                              leaf({2, 2, 5, 2}, gen), leaf({2, 1, 4, 5}, gen)});
  // Heads split from (B, T, H, D) by a transpose.
  auto heads = [&](int64_t t, int64_t d) {
    return randn({2, t, 3, d}, kFloat64, gen).transpose(1, 2).requires_grad_();
  };
  EXPECT_GRADCHECK(causal, {heads(5, 4), heads(5, 4), heads(5, 3)});
}

// ---------------------------------------------------------------- memory, dtypes, the choice
TEST(TiledAttentionTest, SavesWhatTheRowKernelSavesLinearInT) {
  Generator gen(26);
  for (const int64_t t : {16, 32, 64}) {
    const Tensor q = leaf({1, 2, t, 4}, gen), k = leaf({1, 2, t, 4}, gen),
                 v = leaf({1, 2, t, 4}, gen);
    const Tensor out = sdpa_with(tiled(8, 8), q, k, v, {}, true);
    const Tensor rows = sdpa_with(kRowsKernel, q, k, v, {}, true);
    // q, k, v, out (4 x 2t x 4 numbers) and one logsumexp per row (2t), float64: 8 t + ...
    EXPECT_EQ(out.grad_fn()->saved_bytes(), static_cast<size_t>((4 * 2 * t * 4 + 2 * t) * 8));
    EXPECT_EQ(out.grad_fn()->saved_bytes(), rows.grad_fn()->saved_bytes());
  }
}

TEST(TiledAttentionTest, BFloat16RunsTheTiledKernelWidened) {
  // bfloat16 inputs widen to float32 for the tiled kernel (the fast bfloat16 kernel is a row
  // kernel): the result is the widened float32 tiled attention, rounded once.
  Generator gen(27);
  const Tensor q = randn({1, 2, 9, 4}, kFloat32, gen).to(kBFloat16);
  const Tensor k = randn({1, 2, 9, 4}, kFloat32, gen).to(kBFloat16);
  const Tensor v = randn({1, 2, 9, 4}, kFloat32, gen).to(kBFloat16);
  const Tensor out = sdpa_with(tiled(4, 4), q, k, v, {}, true);
  EXPECT_EQ(out.dtype(), kBFloat16);
  const Tensor wide =
      sdpa_with(tiled(4, 4), q.to(kFloat32), k.to(kFloat32), v.to(kFloat32), {}, true);
  EXPECT_EQ(as_doubles(out), as_doubles(wide.to(kBFloat16)));
}

TEST(TiledAttentionTest, TheGuardScopesTheChoiceToItsThread) {
  EXPECT_EQ(attention_algorithm().kernel, AttentionKernel::kRows);
  {
    AttentionAlgorithmGuard guard(tiled(5, 7));
    EXPECT_EQ(attention_algorithm().kernel, AttentionKernel::kTiled);
    EXPECT_EQ(attention_algorithm().tile_q, 5);
    EXPECT_EQ(attention_algorithm().tile_k, 7);
    AttentionKernel elsewhere = AttentionKernel::kTiled;
    std::thread([&] { elsewhere = attention_algorithm().kernel; }).join();
    EXPECT_EQ(elsewhere, AttentionKernel::kRows);
  }
  EXPECT_EQ(attention_algorithm().kernel, AttentionKernel::kRows);
}

TEST(TiledAttentionTest, TileSizesBelowOneAreRefused) {
  EXPECT_TG_THROW(set_attention_algorithm(tiled(0, 4)), ValueError,
                  "set_attention_algorithm: tiles must hold at least one query and one key, got "
                  "tile_q 0, tile_k 4");
  EXPECT_TG_THROW(AttentionAlgorithmGuard(tiled(3, -1)), ValueError, "tile_q 3, tile_k -1");
  EXPECT_EQ(attention_algorithm().kernel, AttentionKernel::kRows);  // unchanged
}

}  // namespace
}  // namespace tg
