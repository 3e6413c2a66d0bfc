// tests/ops/attention_test.cpp — scaled_dot_product_attention: values, masks, gradients
// (against finite differences and against the same math composed from primitives), the
// fully-masked-row convention, grouped-query attention, dtypes, errors.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Each;
using testing::leaf;
using ::testing::Pointwise;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A bool (rows, cols) mask with keep(i, j) deciding each element.
template <class Keep>
Tensor bool_mask(int64_t rows, int64_t cols, Keep keep) {
  Tensor m = empty({rows, cols}, kBool);
  bool* p = m.data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = keep(i, j);
  return m;
}

/// torch.ones(tq, tk).tril(): query i sees keys j <= i.
Tensor tril_mask(int64_t tq, int64_t tk) {
  return bool_mask(tq, tk, [](int64_t i, int64_t j) { return j <= i; });
}

/// A random-looking bool mask in which every query keeps at least key (i mod tk).
Tensor ragged_mask(int64_t tq, int64_t tk) {
  return bool_mask(tq, tk,
                   [tk](int64_t i, int64_t j) { return j == i % tk || (i * 7 + j * 3) % 5 < 2; });
}

/// q (B, H, T, D) made the way a model splits heads: a (B, T, H, D) tensor transposed.
Tensor heads_leaf(int64_t b, int64_t h, int64_t t, int64_t d, Generator& gen) {
  return randn({b, t, h, d}, kFloat64, gen).transpose(1, 2).requires_grad_();
}

/// The composed twin: softmax(q k^T * scale + mask) v from primitives. softmax is written out
/// from amax, sub, exp, sum and div (max detached: softmax does not depend on it).
Tensor composed_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& mask = Tensor(), bool causal = false,
                          std::optional<double> scale = std::nullopt) {
  const double sc = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
  Tensor s = mul(matmul(q, k.transpose(-2, -1)), sc);
  const Tensor keep = causal ? tril_mask(q.size(2), k.size(2)) : mask;
  if (keep.defined() && keep.dtype() == kBool) {
    s = where(keep, s, full({}, -kInf, s.dtype()));
  } else if (keep.defined()) {
    s = add(s, keep);
  }
  const Tensor e = exp(sub(s, amax(s, {-1}, /*keepdim=*/true).detach()));
  const Tensor p = div(e, sum(e, {-1}, /*keepdim=*/true));
  return matmul(p, v);
}

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
            bool causal = false, std::optional<double> scale = std::nullopt) {
  return scaled_dot_product_attention(q, k, v, mask, causal, scale);
}

// ---------------------------------------------------------------- forward values
TEST(AttentionTest, OneKeyReturnsItsValue) {
  // softmax over a single key is 1: every query outputs v_0.
  Generator gen(1);
  const Tensor q = randn({1, 1, 3, 2}, kFloat64, gen), k = randn({1, 1, 1, 2}, kFloat64, gen);
  const Tensor v = tensor({2.5, -1.0, 4.0}, {1, 1, 1, 3});
  const Tensor out = sdpa(q, k, v);
  EXPECT_EQ(out.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_THAT(as_doubles(out),
              Pointwise(DoubleNear(1e-15), {2.5, -1.0, 4.0, 2.5, -1.0, 4.0, 2.5, -1.0, 4.0}));
}

TEST(AttentionTest, EqualScoresGiveTheMeanOfTheValues) {
  // q = 0: every score is 0, the softmax is uniform, out = mean of the value rows.
  const Tensor q = zeros({1, 1, 2, 2}, kFloat64);
  const Tensor k = tensor({1.0, 2.0, -3.0, 0.5, 7.0, 1.0}, {1, 1, 3, 2});
  const Tensor v = tensor({1.0, 10.0, 2.0, 20.0, 6.0, 60.0}, {1, 1, 3, 2});
  EXPECT_THAT(as_doubles(sdpa(q, k, v)), Pointwise(DoubleNear(1e-14), {3.0, 30.0, 3.0, 30.0}));
}

TEST(AttentionTest, TwoKeysByHand) {
  // q = (1, 0), k_0 = (2, 0), k_1 = (0, 1), D = 2: scale = 1/sqrt(2), s = (sqrt(2), 0),
  // p_0 = e^sqrt2 / (e^sqrt2 + 1), out = p_0 v_0 + (1 - p_0) v_1.
  const Tensor q = tensor({1.0, 0.0}, {1, 1, 1, 2});
  const Tensor k = tensor({2.0, 0.0, 0.0, 1.0}, {1, 1, 2, 2});
  const Tensor v = tensor({1.0, 0.0, 0.0, 1.0}, {1, 1, 2, 2});
  const double p0 = std::exp(std::sqrt(2.0)) / (std::exp(std::sqrt(2.0)) + 1);
  EXPECT_THAT(as_doubles(sdpa(q, k, v)), Pointwise(DoubleNear(1e-15), {p0, 1 - p0}));
  // scale = 0.5 instead: s = (1, 0).
  const double p1 = std::exp(1.0) / (std::exp(1.0) + 1);
  EXPECT_THAT(as_doubles(sdpa(q, k, v, Tensor(), false, 0.5)),
              Pointwise(DoubleNear(1e-15), {p1, 1 - p1}));
}

TEST(AttentionTest, FloatMaskIsAddedToTheScores) {
  // q = 0 and mask (0, log 3): p = (1, 3) / 4.
  const Tensor q = zeros({1, 1, 1, 2}, kFloat64), k = ones({1, 1, 2, 2}, kFloat64);
  const Tensor v = tensor({4.0, 8.0}, {1, 1, 2, 1});
  const Tensor mask = tensor({0.0, std::log(3.0)}, {1, 2});
  EXPECT_THAT(as_doubles(sdpa(q, k, v, mask)), Pointwise(DoubleNear(1e-14), {7.0}));
  // -inf removes a key: only v_1 is left.
  const Tensor blocked = tensor({-kInf, 0.0}, {1, 2});
  EXPECT_THAT(as_doubles(sdpa(q, k, v, blocked)), Pointwise(DoubleNear(0), {8.0}));
}

TEST(AttentionTest, CausalIsTopLeftAligned) {
  // Tq = 3, Tk = 5, q = 0: query i averages keys 0..i, like torch.ones(3, 5).tril().
  const Tensor q = zeros({1, 1, 3, 2}, kFloat64), k = ones({1, 1, 5, 2}, kFloat64);
  const Tensor v = tensor({1.0, 2.0, 3.0, 4.0, 5.0}, {1, 1, 5, 1});
  EXPECT_THAT(as_doubles(sdpa(q, k, v, Tensor(), true)),
              Pointwise(DoubleNear(1e-15), {1.0, 1.5, 2.0}));
}

TEST(AttentionTest, CausalEqualsExplicitTrilMask) {
  Generator gen(2);
  for (auto [tq, tk] : {std::pair<int64_t, int64_t>{4, 4}, {3, 6}, {6, 3}}) {
    const Tensor q = leaf({2, 3, tq, 5}, gen), k = leaf({2, 3, tk, 5}, gen);
    const Tensor v = leaf({2, 3, tk, 4}, gen);
    const Tensor gout = randn({2, 3, tq, 4}, kFloat64, gen);
    const Tensor a = sdpa(q, k, v, Tensor(), true), b = sdpa(q, k, v, tril_mask(tq, tk));
    EXPECT_EQ(as_doubles(a), as_doubles(b));
    const auto ga = grad({a}, {q, k, v}, {gout}), gb = grad({b}, {q, k, v}, {gout});
    for (int i = 0; i < 3; ++i) EXPECT_EQ(as_doubles(ga[i]), as_doubles(gb[i])) << i;
  }
}

TEST(AttentionTest, MaskBroadcastsOverBatchAndHeads) {
  Generator gen(3);
  const Tensor q = randn({2, 3, 4, 5}, kFloat64, gen), k = randn({2, 3, 6, 5}, kFloat64, gen);
  const Tensor v = randn({2, 3, 6, 2}, kFloat64, gen);
  const Tensor m = ragged_mask(4, 6);
  const Tensor full_mask = m.expand({2, 3, 4, 6}).contiguous();
  const auto expected = as_doubles(sdpa(q, k, v, full_mask));
  EXPECT_EQ(as_doubles(sdpa(q, k, v, m)), expected);
  EXPECT_EQ(as_doubles(sdpa(q, k, v, m.unsqueeze(0).unsqueeze(0))), expected);
  // A non-contiguous mask: the transpose of a (6, 4) one.
  const Tensor mt = m.t().contiguous().t();
  ASSERT_FALSE(mt.is_contiguous());
  EXPECT_EQ(as_doubles(sdpa(q, k, v, mt)), expected);
}

TEST(AttentionTest, Float32Values) {
  Generator gen(4);
  const Tensor q = randn({2, 2, 7, 3}, kFloat64, gen), k = randn({2, 2, 5, 3}, kFloat64, gen);
  const Tensor v = randn({2, 2, 5, 4}, kFloat64, gen);
  const Tensor out32 = sdpa(q.to(kFloat32), k.to(kFloat32), v.to(kFloat32), Tensor(), true);
  EXPECT_EQ(out32.dtype(), kFloat32);
  EXPECT_THAT(as_doubles(out32), Pointwise(DoubleNear(1e-5), as_doubles(sdpa(q, k, v, {}, true))));
}

TEST(AttentionTest, LargeScoresDoNotOverflow) {
  // Scores near 1000 overflow exp without the max subtracted (e^1000 = inf in float64 too).
  const Tensor q = full({1, 1, 1, 1}, 1000.0, kFloat64);
  const Tensor k = tensor({1.0, 0.999}, {1, 1, 2, 1});
  const Tensor v = tensor({1.0, 0.0}, {1, 1, 2, 1});
  const double p0 = 1 / (1 + std::exp(-1.0));  // s = (1000, 999)
  EXPECT_THAT(as_doubles(sdpa(q, k, v, Tensor(), false, 1.0)), Pointwise(DoubleNear(1e-12), {p0}));
}

TEST(AttentionTest, SavesLogsumexpNotTheProbabilities) {
  Generator gen(5);
  const Tensor q = leaf({2, 3, 7, 4}, gen), k = leaf({2, 3, 9, 4}, gen),
               v = leaf({2, 3, 9, 5}, gen);
  const Tensor out = sdpa(q, k, v);
  ASSERT_NE(out.grad_fn(), nullptr);
  EXPECT_EQ(out.grad_fn()->name(), "scaled_dot_product_attention");
  // q, k, v, out and one logsumexp per row (2 * 3 * 7), float64: no (2, 3, 7, 9) matrix.
  EXPECT_EQ(out.grad_fn()->saved_bytes(), (168u + 216u + 270u + 210u + 42u) * 8u);
}

// ---------------------------------------------------------------- the fully masked row
// Convention (PyTorch >= 2.5's safe softmax): a query that may attend to no key outputs zeros
// and sends no gradient anywhere. The composed softmax would give 0/0 = NaN there.
TEST(AttentionTest, FullyMaskedRowOutputsZerosAndZeroGradient) {
  Generator gen(6);
  const Tensor q = leaf({1, 2, 3, 4}, gen), k = leaf({1, 2, 5, 4}, gen),
               v = leaf({1, 2, 5, 3}, gen);
  // Query 1 sees nothing; queries 0 and 2 see some keys.
  const Tensor m = bool_mask(3, 5, [](int64_t i, int64_t j) { return i != 1 && j % 2 == 0; });
  const Tensor out = sdpa(q, k, v, m);
  EXPECT_THAT(as_doubles(out.select(2, 1)), Each(0.0));
  const auto g = grad({out}, {q, k, v}, {ones({1, 2, 3, 3}, kFloat64)});
  EXPECT_THAT(as_doubles(g[0].select(2, 1)), Each(0.0));
  // Only rows 0 and 2 reach k and v, and only through the even keys.
  EXPECT_THAT(as_doubles(g[2].select(2, 1)), Each(0.0));
  EXPECT_THAT(as_doubles(g[1].select(2, 3)), Each(0.0));
  // The other rows are unaffected: equal to attention over those rows alone.
  const Tensor keep = bool_mask(1, 5, [](int64_t, int64_t j) { return j % 2 == 0; });
  const Tensor row0 = sdpa(q.detach().slice(2, 0, 1), k.detach(), v.detach(), keep);
  EXPECT_THAT(as_doubles(out.select(2, 0)), Pointwise(DoubleNear(1e-15), as_doubles(row0)));
  // A float mask of -inf everywhere in a row behaves the same, and so does Tk = 0.
  const Tensor fm = tensor({-kInf, -kInf, 0.0, -kInf}, {2, 2});
  const Tensor q2 = leaf({1, 1, 2, 3}, gen), k2 = leaf({1, 1, 2, 3}, gen),
               v2 = leaf({1, 1, 2, 3}, gen);
  const Tensor out2 = sdpa(q2, k2, v2, fm);
  EXPECT_THAT(as_doubles(out2.select(2, 0)), Each(0.0));
  EXPECT_THAT(as_doubles(out2.select(2, 1)), Pointwise(DoubleNear(0), as_doubles(v2.select(2, 0))));
  const Tensor fmr = fm.detach().clone().requires_grad_();
  const auto g2 = grad({sdpa(q2, k2, v2, fmr)}, {q2, fmr}, {ones({1, 1, 2, 3}, kFloat64)});
  EXPECT_THAT(as_doubles(g2[0].select(2, 0)), Each(0.0));
  EXPECT_THAT(as_doubles(g2[1]), Each(0.0));  // one key left in row 1: p = 1, ds = 0
  const Tensor empty_out = sdpa(q2, zeros({1, 1, 0, 3}, kFloat64), zeros({1, 1, 0, 5}, kFloat64));
  EXPECT_EQ(empty_out.shape(), (Shape{1, 1, 2, 5}));
  EXPECT_THAT(as_doubles(empty_out), Each(0.0));
}

// ---------------------------------------------------------------- gradients
TEST(AttentionTest, GradcheckShapes) {
  Generator gen(7);
  auto fn = [](const std::vector<Tensor>& in) { return sdpa(in[0], in[1], in[2]); };
  EXPECT_GRADCHECK(fn, {leaf({1, 1, 1, 1}, gen), leaf({1, 1, 1, 1}, gen), leaf({1, 1, 1, 1}, gen)});
  // Tq != Tk, D != Dv, several heads.
  EXPECT_GRADCHECK(fn, {leaf({2, 3, 4, 5}, gen), leaf({2, 3, 7, 5}, gen), leaf({2, 3, 7, 2}, gen)});
  // H = 1, one query against many keys.
  EXPECT_GRADCHECK(fn, {leaf({3, 1, 1, 4}, gen), leaf({3, 1, 7, 4}, gen), leaf({3, 1, 7, 3}, gen)});
}

TEST(AttentionTest, GradcheckValuesAlone) {
  // Only v asks for a gradient: backward runs the weighted sum's backward (dv = P^T dout)
  // and not the scores' (exercise attention.backward_values on its own). With a causal
  // mask and Tq < Tk, and with a bool mask, masked keys must get no gradient.
  Generator gen(24);
  const Tensor q = randn({2, 2, 4, 3}, kFloat64, gen), k = randn({2, 2, 6, 3}, kFloat64, gen);
  const Tensor bm = ragged_mask(4, 6);
  auto causal = [&](const std::vector<Tensor>& in) { return sdpa(q, k, in[0], {}, true); };
  EXPECT_GRADCHECK(causal, {leaf({2, 2, 6, 2}, gen)});
  auto boolean = [&](const std::vector<Tensor>& in) { return sdpa(q, k, in[0], bm); };
  EXPECT_GRADCHECK(boolean, {leaf({2, 2, 6, 5}, gen)});
  // Key 5 is seen by no query under the causal mask of 4 queries: its dv row stays zero.
  const Tensor v = leaf({2, 2, 6, 2}, gen);
  const Tensor dv = grad({sdpa(q, k, v, {}, true)}, {v}, {ones({2, 2, 4, 2}, kFloat64)})[0];
  EXPECT_THAT(as_doubles(dv.narrow(2, 4, 2)), Each(0.0));
  EXPECT_THAT(as_doubles(dv.narrow(2, 0, 1)), Each(::testing::Gt(0.0)));
}

TEST(AttentionTest, GradcheckNonContiguousHeads) {
  // q, k, v split from (B, T, H, D) activations by a transpose, as a model does.
  Generator gen(8);
  const Tensor q = heads_leaf(2, 3, 5, 4, gen), k = heads_leaf(2, 3, 6, 4, gen);
  const Tensor v = heads_leaf(2, 3, 6, 3, gen);
  ASSERT_FALSE(q.is_contiguous());
  auto fn = [](const std::vector<Tensor>& in) { return sdpa(in[0], in[1], in[2], {}, true); };
  EXPECT_GRADCHECK(fn, {q, k, v});
  auto plain = [](const std::vector<Tensor>& in) { return sdpa(in[0], in[1], in[2]); };
  EXPECT_GRADCHECK(plain, {q, k, v});
}

TEST(AttentionTest, GradcheckCausalAndMasks) {
  Generator gen(9);
  auto causal = [](const std::vector<Tensor>& in) { return sdpa(in[0], in[1], in[2], {}, true); };
  EXPECT_GRADCHECK(causal,
                   {leaf({2, 2, 5, 3}, gen), leaf({2, 2, 5, 3}, gen), leaf({2, 2, 5, 4}, gen)});
  EXPECT_GRADCHECK(causal,
                   {leaf({1, 2, 6, 3}, gen), leaf({1, 2, 4, 3}, gen), leaf({1, 2, 4, 2}, gen)});
  const Tensor bm = ragged_mask(5, 7);
  auto boolean = [bm](const std::vector<Tensor>& in) { return sdpa(in[0], in[1], in[2], bm); };
  EXPECT_GRADCHECK(boolean,
                   {leaf({2, 2, 5, 3}, gen), leaf({2, 2, 7, 3}, gen), leaf({2, 2, 7, 2}, gen)});
  // A float mask (B, 1, Tq, Tk) with its own gradient, and an explicit scale.
  auto floating = [](const std::vector<Tensor>& in) {
    return sdpa(in[0], in[1], in[2], in[3], false, 0.7);
  };
  EXPECT_GRADCHECK(floating, {leaf({2, 3, 4, 3}, gen), leaf({2, 3, 5, 3}, gen),
                              leaf({2, 3, 5, 2}, gen), leaf({2, 1, 4, 5}, gen)});
  EXPECT_GRADCHECK(floating, {leaf({1, 2, 3, 2}, gen), leaf({1, 2, 4, 2}, gen),
                              leaf({1, 2, 4, 3}, gen), leaf({4}, gen)});
}

TEST(AttentionTest, GradcheckComposedTwin) {
  Generator gen(10);
  auto fn = [](const std::vector<Tensor>& in) {
    return composed_attention(in[0], in[1], in[2], {}, true);
  };
  EXPECT_GRADCHECK(
      fn, {heads_leaf(2, 2, 4, 3, gen), heads_leaf(2, 2, 4, 3, gen), heads_leaf(2, 2, 4, 2, gen)});
}

TEST(AttentionTest, FusedAgreesWithComposed) {
  Generator gen(11);
  struct Case {
    Shape q, k, v;
    int mask;  // 0 none, 1 causal, 2 bool, 3 float
  };
  for (const Case& c : {Case{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, 0},
                        Case{{2, 3, 7, 4}, {2, 3, 7, 4}, {2, 3, 7, 5}, 1},
                        Case{{2, 2, 5, 3}, {2, 2, 9, 3}, {2, 2, 9, 3}, 2},
                        Case{{1, 4, 6, 8}, {1, 4, 3, 8}, {1, 4, 3, 2}, 3},
                        Case{{2, 1, 3, 2}, {2, 1, 6, 2}, {2, 1, 6, 4}, 0}}) {
    const Tensor q = leaf(c.q, gen), k = leaf(c.k, gen), v = leaf(c.v, gen);
    const int64_t tq = c.q[2], tk = c.k[2];
    Tensor mask;
    if (c.mask == 2) mask = ragged_mask(tq, tk);
    if (c.mask == 3) mask = leaf({c.q[0], 1, tq, tk}, gen);
    const bool causal = c.mask == 1;
    const Tensor fused = sdpa(q, k, v, mask, causal);
    const Tensor composed = composed_attention(q, k, v, mask, causal);
    EXPECT_THAT(as_doubles(fused), Pointwise(DoubleNear(1e-12), as_doubles(composed)));
    const Tensor gout = randn(fused.shape(), kFloat64, gen);
    std::vector<Tensor> wrt{q, k, v};
    if (c.mask == 3) wrt.push_back(mask);
    const auto gf = grad({fused}, wrt, {gout}), gc = grad({composed}, wrt, {gout});
    for (size_t i = 0; i < wrt.size(); ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-10), as_doubles(gc[i])))
          << fmt::format("q {} mask kind {} grad {}", c.q, c.mask, i);
    }
  }
}

TEST(AttentionTest, OnlyTheRequestedGradientsAreComputed) {
  Generator gen(12);
  const Tensor q = leaf({1, 2, 3, 4}, gen);
  const Tensor k = randn({1, 2, 3, 4}, kFloat64, gen), v = randn({1, 2, 3, 4}, kFloat64, gen);
  const Tensor m = randn({3, 3}, kFloat64, gen);  // a constant float mask: no gradient asked
  const Tensor gout = ones({1, 2, 3, 4}, kFloat64);
  const Tensor dq = grad({sdpa(q, k, v, m)}, {q}, {gout})[0];
  const Tensor dq_composed = grad({composed_attention(q, k, v, m)}, {q}, {gout})[0];
  EXPECT_THAT(as_doubles(dq), Pointwise(DoubleNear(1e-12), as_doubles(dq_composed)));
  EXPECT_FALSE(k.grad().defined());
  EXPECT_FALSE(m.requires_grad());
}

TEST(AttentionTest, OutputIsLaidOutLikeTheQueries) {
  // q split from (B, T, H, D) activations by a transpose gives an output stored (B, T, H, Dv),
  // so the model's transpose back and reshape to (B, T, H * Dv) are free views. The Function
  // chooses the layout, so both kernel paths get it.
  Generator gen(23);
  const Tensor q = heads_leaf(2, 3, 5, 4, gen), k = heads_leaf(2, 3, 5, 4, gen);
  const Tensor v = heads_leaf(2, 3, 5, 4, gen);
  const Tensor out = sdpa(q, k, v, {}, true);
  EXPECT_TRUE(out.transpose(1, 2).is_contiguous());
  const Tensor plain = leaf({2, 3, 5, 4}, gen);
  EXPECT_TRUE(sdpa(plain, plain, plain).is_contiguous());
}

// ---------------------------------------------------------------- errors
// float16/bfloat16 compute in float32 and round once: the output is exactly the float32
// attention of the widened inputs, rounded; the gradients are float32 gradients rounded,
// within one unit of the half format (backward reads the rounded output).
TEST(AttentionTest, HalfInputsComputeInFloat32AndRoundOnce) {
  for (const DType half : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(half));
    // bfloat16 has a kernel of its own on the fast path, which rounds the probabilities to
    // bfloat16 as FlashAttention does (tests/ops/fast/attention_test.cpp); here, the reference.
    std::optional<KernelPathGuard> reference;
    if (half == kBFloat16) reference.emplace(KernelPath::kReference);
    Generator gen(11);
    const Tensor qh = randn({1, 2, 5, 8}, kFloat32, gen).to(half).requires_grad_();
    const Tensor kh = randn({1, 2, 5, 8}, kFloat32, gen).to(half).requires_grad_();
    const Tensor vh = randn({1, 2, 5, 8}, kFloat32, gen).to(half).requires_grad_();
    const Tensor q = qh.detach().to(kFloat32).requires_grad_();
    const Tensor k = kh.detach().to(kFloat32).requires_grad_();
    const Tensor v = vh.detach().to(kFloat32).requires_grad_();
    const Tensor out_h = sdpa(qh, kh, vh, Tensor(), /*causal=*/true);
    const Tensor out = sdpa(q, k, v, Tensor(), /*causal=*/true);
    EXPECT_EQ(out_h.dtype(), half);
    EXPECT_EQ(as_doubles(out_h), as_doubles(out.to(half)));
    const Tensor g = randn({1, 2, 5, 8}, kFloat32, gen).to(half);
    backward(out_h, g);
    backward(out, g.to(kFloat32));
    const double unit = half == kFloat16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    for (const auto& [gh, gf] : {std::pair{qh.grad(), q.grad()}, std::pair{kh.grad(), k.grad()},
                                 std::pair{vh.grad(), v.grad()}}) {
      ASSERT_EQ(gh.dtype(), half);
      const std::vector<double> a = as_doubles(gh), e = as_doubles(gf);
      for (size_t i = 0; i < e.size(); ++i)
        EXPECT_NEAR(a[i], e[i], 2 * unit * (1 + std::abs(e[i])));
    }
  }
}

// ---------------------------------------------------------------- grouped-query attention
/// k or v (B, Hkv, T, X) with each head repeated `group` times in a row: (B, Hkv * group, T, X),
/// kv head h / group for query head h, like torch.repeat_interleave(k, group, dim=1). Through
/// expand and reshape, so its backward sums the copies of a head.
Tensor repeat_heads(const Tensor& t, int64_t group) {
  const Shape s = t.shape();
  return t.unsqueeze(2)
      .expand({s[0], s[1], group, s[2], s[3]})
      .reshape({s[0], s[1] * group, s[2], s[3]});
}

TEST(AttentionTest, GroupedQueryEqualsRepeatedKeysAndValues) {
  // GQA is MHA on k and v whose heads are repeated: the same outputs, and dk, dv the sums of
  // the repeated heads' gradients. Both kernels; MQA (one kv head), groups of 2 and 3, the
  // plain case (Hkv = H), masks, and kv heads split from (B, T, Hkv, D) by a transpose.
  Generator gen(31);
  struct Case {
    int64_t H, Hkv, Tq, Tk;
    int mask;  // 0 none, 1 causal, 2 bool, 3 float with a gradient
  };
  for (const AttentionAlgorithm& algorithm :
       {AttentionAlgorithm{}, AttentionAlgorithm{AttentionKernel::kTiled, 3, 2}}) {
    AttentionAlgorithmGuard kernel(algorithm);
    for (const Case& c : {Case{4, 1, 5, 5, 1}, Case{4, 2, 6, 6, 1}, Case{6, 2, 4, 7, 2},
                          Case{6, 3, 5, 5, 3}, Case{3, 3, 4, 6, 0}, Case{4, 2, 7, 4, 0}}) {
      const Tensor q = leaf({2, c.H, c.Tq, 3}, gen);
      const Tensor k = randn({2, c.Tk, c.Hkv, 3}, kFloat64, gen).transpose(1, 2).requires_grad_();
      const Tensor v = randn({2, c.Tk, c.Hkv, 4}, kFloat64, gen).transpose(1, 2).requires_grad_();
      Tensor mask;
      if (c.mask == 2) mask = ragged_mask(c.Tq, c.Tk);
      if (c.mask == 3) mask = leaf({2, c.H, c.Tq, c.Tk}, gen);
      const bool causal = c.mask == 1;
      const int64_t g = c.H / c.Hkv;
      const Tensor grouped = scaled_dot_product_attention(q, k, v, mask, causal, {}, true);
      const Tensor repeated = sdpa(q, repeat_heads(k, g), repeat_heads(v, g), mask, causal);
      const std::string where = fmt::format("H {} Hkv {} mask {} tiled {}", c.H, c.Hkv, c.mask,
                                            algorithm.kernel == AttentionKernel::kTiled);
      EXPECT_EQ(grouped.shape(), repeated.shape()) << where;
      EXPECT_THAT(as_doubles(grouped), Pointwise(DoubleNear(1e-14), as_doubles(repeated))) << where;
      const Tensor gout = randn(grouped.shape(), kFloat64, gen);
      std::vector<Tensor> wrt{q, k, v};
      if (c.mask == 3) wrt.push_back(mask);
      const auto gg = grad({grouped}, wrt, {gout}), gr = grad({repeated}, wrt, {gout});
      for (size_t i = 0; i < wrt.size(); ++i) {
        EXPECT_EQ(gg[i].shape(), wrt[i].shape()) << where;
        EXPECT_THAT(as_doubles(gg[i]), Pointwise(DoubleNear(1e-13), as_doubles(gr[i])))
            << where << " grad " << i;
      }
    }
  }
}

TEST(AttentionTest, GradcheckGroupedQuery) {
  Generator gen(32);
  for (const AttentionAlgorithm& algorithm :
       {AttentionAlgorithm{}, AttentionAlgorithm{AttentionKernel::kTiled, 2, 3}}) {
    AttentionAlgorithmGuard kernel(algorithm);
    auto causal = [](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], {}, true, {}, true);
    };
    EXPECT_GRADCHECK(causal,
                     {leaf({2, 4, 5, 3}, gen), leaf({2, 2, 5, 3}, gen), leaf({2, 2, 5, 2}, gen)});
    EXPECT_GRADCHECK(causal,
                     {leaf({1, 3, 4, 2}, gen), leaf({1, 1, 6, 2}, gen), leaf({1, 1, 6, 3}, gen)});
    auto floating = [](const std::vector<Tensor>& in) {
      return scaled_dot_product_attention(in[0], in[1], in[2], in[3], false, 0.6, true);
    };
    EXPECT_GRADCHECK(floating, {leaf({1, 4, 3, 2}, gen), leaf({1, 2, 4, 2}, gen),
                                leaf({1, 2, 4, 3}, gen), leaf({1, 1, 3, 4}, gen)});
  }
}

TEST(AttentionTest, GroupedQueryErrors) {
  const Tensor q = zeros({2, 6, 4, 5});
  const char* op = "scaled_dot_product_attention";
  // Fewer kv heads without enable_gqa: refused, and the message says what to pass.
  EXPECT_TG_THROW(sdpa(q, zeros({2, 3, 6, 5}), zeros({2, 3, 6, 5})), ShapeError, op, "(B, H)",
                  "(2, 3, 6, 5)", "fewer kv heads need enable_gqa");
  EXPECT_TG_THROW(scaled_dot_product_attention(q, zeros({2, 4, 6, 5}), zeros({2, 4, 6, 5}), {},
                                               false, {}, true),
                  ShapeError, op, "grouped-query attention needs the kv heads of k (2, 4, 6, 5)",
                  "(6 by 4)");
  EXPECT_TG_THROW(scaled_dot_product_attention(q, zeros({2, 3, 6, 5}), zeros({2, 2, 6, 5}), {},
                                               false, {}, true),
                  ShapeError, op, "(B, H)", "(2, 2, 6, 5)");
}

TEST(AttentionTest, Errors) {
  const Tensor q = zeros({2, 3, 4, 5}), k = zeros({2, 3, 6, 5}), v = zeros({2, 3, 6, 7});
  const char* op = "scaled_dot_product_attention";
  EXPECT_TG_THROW(sdpa(zeros({3, 4, 5}), k, v), ShapeError, op, "4-D", "(3, 4, 5)");
  EXPECT_TG_THROW(sdpa(q, zeros({6, 5}), v), ShapeError, op, "4-D", "(6, 5)");
  EXPECT_TG_THROW(sdpa(q, zeros({2, 2, 6, 5}), v), ShapeError, op, "(B, H)", "(2, 2, 6, 5)");
  EXPECT_TG_THROW(sdpa(q, k, zeros({1, 3, 6, 7})), ShapeError, op, "(B, H)", "(1, 3, 6, 7)");
  EXPECT_TG_THROW(sdpa(q, zeros({2, 3, 6, 4}), v), ShapeError, op, "head dim D", "5 vs 4");
  EXPECT_TG_THROW(sdpa(q, k, zeros({2, 3, 5, 7})), ShapeError, op, "Tk", "6 vs 5");
  EXPECT_TG_THROW(sdpa(q, k, zeros({2, 3, 6, 7}, kFloat64)), DTypeError, op, "float32", "float64");
  EXPECT_TG_THROW(
      sdpa(zeros({2, 3, 4, 5}, kInt64), zeros({2, 3, 6, 5}, kInt64), zeros({2, 3, 6, 7}, kInt64)),
      DTypeError, op, "int64", "floating dtype");
  EXPECT_TG_THROW(sdpa(q.to(kFloat16), k, v), DTypeError, op, "share a dtype", "float16");
  EXPECT_TG_THROW(sdpa(q, k, v, zeros({4, 5})), ShapeError, op, "mask (4, 5)", "(2, 3, 4, 6)");
  EXPECT_TG_THROW(sdpa(q, k, v, zeros({3, 2, 4, 6})), ShapeError, op, "(3, 2, 4, 6)");
  EXPECT_TG_THROW(sdpa(q, k, v, zeros({1, 2, 3, 4, 6})), ShapeError, op, "(1, 2, 3, 4, 6)");
  EXPECT_TG_THROW(sdpa(q, k, v, zeros({4, 6}, kFloat64)), DTypeError, op, "mask (4, 6)", "float64",
                  "float32");
  EXPECT_TG_THROW(sdpa(q, k, v, zeros({4, 6}, kInt64)), DTypeError, op, "int64");
  EXPECT_TG_THROW(sdpa(q, k, v, tril_mask(4, 6), true), ValueError, op, "mask (4, 6)", "causal",
                  "not both");
  EXPECT_TG_THROW(sdpa(q, k, v, {}, false, 0.0), ValueError, op, "scale", "got 0");
  EXPECT_TG_THROW(sdpa(q, k, v, {}, false, -0.5), ValueError, op, "scale", "-0.5");
  EXPECT_TG_THROW(sdpa(q, k, v, {}, false, kInf), ValueError, op, "scale", "inf");
  EXPECT_TG_THROW(sdpa(q, k, v, {}, false, std::nan("")), ValueError, op, "scale", "nan");
}

}  // namespace
}  // namespace tg
