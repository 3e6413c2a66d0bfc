// tests/core/view_grad_test.cpp — the view and copy methods of Tensor are differentiable.
//
// view, reshape, permute, transpose, t, squeeze, unsqueeze, expand, narrow, slice, select
// (and operator[]), flatten, unflatten, contiguous, clone and to(dtype) each record a node
// on the tape when grad mode is on and their input requires grad. Checked here: the
// recorded node (name, the caller's line), that a recorded view still shares storage with
// its input, backward values by hand and by gradcheck on contiguous and non-contiguous
// (view-of-view) float64 leaves with size-1 dims, chains of views, accumulation where
// views overlap, dtypes of gradients, and that nothing records without requires_grad or
// under NoGradGuard. The views are linear maps, so there is no kink to pin; instead the
// empty-view edge cases (length-0 narrow, expand to size 0) are pinned to zero gradients.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using Doubles = std::vector<double>;
using Unary = std::function<Tensor(const Tensor&)>;

// A contiguous float64 leaf that requires grad.
Tensor leaf(const Shape& shape, Generator& gen) {
  return randn(shape, kFloat64, gen).requires_grad_();
}

// A float64 leaf of `shape` that is a view of a view: every other element along the last
// dim of a permuted (dims reversed) base. Non-contiguous whenever the last dim is > 1 and
// the shape has two or more dims of size > 1 (or the last is > 1).
Tensor strided_leaf(const Shape& shape, Generator& gen) {
  const size_t r = shape.size();
  if (r == 0) return leaf(shape, gen);
  Shape base_shape(r, 0);
  DimVec reverse(r, 0);
  for (size_t i = 0; i < r; ++i) {
    base_shape[i] = shape[r - 1 - i];
    reverse[i] = static_cast<int64_t>(r - 1 - i);
  }
  base_shape[0] *= 2;
  const Tensor base = randn(base_shape, kFloat64, gen);
  const int64_t last = static_cast<int64_t>(r) - 1;
  return base.permute(reverse).slice(last, 0, 2 * shape[r - 1], 2).requires_grad_();
}

Tensor f64(std::initializer_list<double> values, const Shape& shape) {
  return tensor(values, shape);
}

Doubles grad_of(const Tensor& x) { return x.grad().to_vector<double>(); }

// gradcheck of `f` at a contiguous and (unless `strided` is false) at a strided leaf of
// each shape.
void expect_gradcheck(const Unary& f, const std::vector<Shape>& shapes, uint64_t seed,
                      const GradcheckOptions& options = {}, bool strided = true) {
  Generator gen(seed);
  auto check = [&](const Tensor& x) {
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return f(in[0]); }, {x}, options)
        << "shape " << x.shape() << ", strides " << x.strides();
  };
  for (const Shape& shape : shapes) {
    check(leaf(shape, gen));
    if (strided) check(strided_leaf(shape, gen));
  }
}

// ---- every method, from one table

struct Case {
  std::string_view name;  // the node's name
  uint32_t line;          // the line of the call inside fn
  Shape shape;            // of the input
  bool shares_storage;    // the result is a view of the input
  Unary fn;
};

// clang-format off
const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
    {"view", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.view({2, 3, 1}); }},
    {"reshape", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.reshape({-1}); }},
    {"permute", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.permute({2, 0, 1}); }},
    {"transpose", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.transpose(0, -1); }},
    {"t", __LINE__, {2, 3}, true, [](const Tensor& x) { return x.t(); }},
    {"squeeze", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.squeeze(); }},
    {"squeeze", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.squeeze(1); }},
    {"unsqueeze", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.unsqueeze(-1); }},
    {"expand", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.expand({4, 2, 5, 3}); }},
    {"narrow", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.narrow(2, 1, 2); }},
    {"slice", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.slice(2, 0, 3, 2); }},
    {"select", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.select(-1, 1); }},
    {"select", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x[1]; }},
    {"flatten", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.flatten(0, 1); }},
    {"unflatten", __LINE__, {6}, true, [](const Tensor& x) { return x.unflatten(0, {3, 2}); }},
    {"contiguous", __LINE__, {2, 1, 3}, true, [](const Tensor& x) { return x.contiguous(); }},
    {"clone", __LINE__, {2, 1, 3}, false, [](const Tensor& x) { return x.clone(); }},
    {"to", __LINE__, {2, 1, 3}, false, [](const Tensor& x) { return x.to(kFloat32); }},
  };
  return kCases;
}
// clang-format on

TEST(ViewGradTest, EveryMethodRecordsItsNodeAtTheCallersLine) {
  Generator gen(1);
  for (const Case& c : cases()) {
    const Tensor x = leaf(c.shape, gen);
    const Tensor y = c.fn(x);
    ASSERT_NE(y.grad_fn(), nullptr) << c.name;
    EXPECT_TRUE(y.requires_grad()) << c.name;
    EXPECT_FALSE(y.is_leaf()) << c.name;
    EXPECT_NE(y.impl(), x.impl()) << c.name;
    EXPECT_EQ(y.grad_fn()->name(), c.name);
    EXPECT_EQ(y.grad_fn()->where().line(), c.line) << c.name;
    EXPECT_THAT(y.grad_fn()->where().file_name(), EndsWith("view_grad_test.cpp")) << c.name;
    // Its one edge leads to the leaf x.
    ASSERT_EQ(y.grad_fn()->next_edges.size(), 1u) << c.name;
    EXPECT_EQ(y.grad_fn()->next_edges[0].leaf.get(), x.impl()) << c.name;
  }
}

TEST(ViewGradTest, RecordedViewsStillShareStorageWithTheirInput) {
  Generator gen(2);
  for (const Case& c : cases()) {
    const Tensor x = leaf(c.shape, gen);
    const Tensor y = c.fn(x);
    ASSERT_NE(y.grad_fn(), nullptr) << c.name;
    if (c.shares_storage) {
      EXPECT_EQ(y.storage(), x.storage()) << c.name;
    } else {
      EXPECT_NE(y.storage(), x.storage()) << c.name;
    }
  }
  // Writes through the storage show up in the recorded view (under NoGradGuard, where a
  // leaf that requires grad may be modified).
  Tensor x = leaf({2, 3}, gen);
  const Tensor row = x.select(0, 1);
  {
    NoGradGuard no_grad;
    x.fill_(4.0);
  }
  EXPECT_THAT(row.to_vector<double>(), ElementsAre(4.0, 4.0, 4.0));
}

TEST(ViewGradTest, EveryMethodPassesGradcheck) {
  GradcheckOptions to_f32;  // float32's rounding: a wide step, fine for a linear map
  to_f32.eps = 1e-2;
  to_f32.atol = 1e-4;
  for (const Case& c : cases()) {
    SCOPED_TRACE(::testing::Message() << c.name << " at line " << c.line);
    expect_gradcheck(c.fn, {c.shape}, 3, c.name == "to" ? to_f32 : GradcheckOptions{});
  }
}

TEST(ViewGradTest, EveryMethodGivesAGradientOfTheInputsShapeAndDType) {
  Generator gen(4);
  for (const Case& c : cases()) {
    Tensor x = leaf(c.shape, gen);
    const Tensor y = c.fn(x);
    y.backward(ones(y.shape(), y.dtype()));
    ASSERT_TRUE(x.grad().defined()) << c.name;
    EXPECT_EQ(x.grad().shape(), c.shape) << c.name;
    EXPECT_EQ(x.grad().dtype(), kFloat64) << c.name;
  }
}

TEST(ViewGradTest, AnInputThatDoesNotRequireGradRecordsNothing) {
  Generator gen(5);
  for (const Case& c : cases()) {
    const Tensor x = randn(c.shape, kFloat64, gen);
    const Tensor y = c.fn(x);
    EXPECT_EQ(y.grad_fn(), nullptr) << c.name;
    EXPECT_FALSE(y.requires_grad()) << c.name;
  }
}

TEST(ViewGradTest, NoGradGuardRecordsNothing) {
  Generator gen(6);
  for (const Case& c : cases()) {
    const Tensor x = leaf(c.shape, gen);
    NoGradGuard no_grad;
    const Tensor y = c.fn(x);
    EXPECT_EQ(y.grad_fn(), nullptr) << c.name;
    if (c.name == "contiguous") {
      EXPECT_EQ(y.impl(), x.impl());  // not recorded: x itself, as without autograd
    } else {
      EXPECT_FALSE(y.requires_grad()) << c.name;
    }
    if (c.shares_storage) {
      EXPECT_EQ(y.storage(), x.storage()) << c.name;
    }
  }
}

// ---- backward values by hand

TEST(ViewGradTest, ViewAndReshapeRegroupTheGradient) {
  Tensor x = f64({0, 1, 2, 3, 4, 5}, {2, 3}).requires_grad_();
  x.view({3, 2}).backward(f64({10, 11, 12, 13, 14, 15}, {3, 2}));
  EXPECT_EQ(x.grad().shape(), (Shape{2, 3}));
  EXPECT_THAT(grad_of(x), ElementsAre(10, 11, 12, 13, 14, 15));

  // reshape of a transpose cannot be a view: it copies, and the gradient still follows
  // each element back: y = (x00, x10, x01, x11, x02, x12).
  Tensor w = f64({0, 1, 2, 3, 4, 5}, {2, 3}).requires_grad_();
  const Tensor y = w.t().reshape({6});
  EXPECT_NE(y.storage(), w.storage());
  y.backward(f64({10, 11, 12, 13, 14, 15}, {6}));
  EXPECT_THAT(grad_of(w), ElementsAre(10, 12, 14, 11, 13, 15));
}

TEST(ViewGradTest, PermuteSendsTheGradientThroughTheInversePermutation) {
  // out dim i = x dim dims[i]: out[k][i][j] = x[i][j][k], so dx[i][j][k] = dout[k][i][j].
  Tensor x = zeros({2, 3, 4}, kFloat64).requires_grad_();
  const Tensor y = x.permute({2, 0, 1});
  ASSERT_EQ(y.shape(), (Shape{4, 2, 3}));
  const Tensor g = arange(24, kFloat64).view({4, 2, 3});
  y.backward(g);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(x.grad().at<double>({i, j, k}), g.at<double>({k, i, j})) << i << j << k;
      }
    }
  }
}

TEST(ViewGradTest, TransposeAndTSwapTheGradientBack) {
  Tensor x = zeros({2, 3}, kFloat64).requires_grad_();
  x.t().backward(f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_THAT(grad_of(x), ElementsAre(1, 3, 5, 2, 4, 6));

  Tensor z = zeros({2, 1, 3}, kFloat64).requires_grad_();
  z.transpose(-1, 0).backward(f64({1, 2, 3, 4, 5, 6}, {3, 1, 2}));
  EXPECT_THAT(grad_of(z), ElementsAre(1, 3, 5, 2, 4, 6));

  // t() of a 1-d tensor returns it as is: recorded, with its own handle, gradient passes.
  Tensor v = zeros({3}, kFloat64).requires_grad_();
  const Tensor vt = v.t();
  EXPECT_NE(vt.impl(), v.impl());
  EXPECT_EQ(vt.storage(), v.storage());
  vt.backward(f64({7, 8, 9}, {3}));
  EXPECT_THAT(grad_of(v), ElementsAre(7, 8, 9));
}

TEST(ViewGradTest, SqueezeUnsqueezeFlattenUnflattenRestoreTheInputShape) {
  Tensor x = zeros({1, 2, 1, 3}, kFloat64).requires_grad_();
  const Tensor g = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  x.squeeze().backward(g);
  EXPECT_EQ(x.grad().shape(), (Shape{1, 2, 1, 3}));
  EXPECT_THAT(grad_of(x), ElementsAre(1, 2, 3, 4, 5, 6));

  Tensor a = zeros({2, 1, 3}, kFloat64).requires_grad_();
  a.squeeze(1).unsqueeze(0).flatten().unflatten(0, {3, 2}).backward(g.view({3, 2}));
  EXPECT_EQ(a.grad().shape(), (Shape{2, 1, 3}));
  EXPECT_THAT(grad_of(a), ElementsAre(1, 2, 3, 4, 5, 6));

  // squeeze(dim) of a dim that is not 1 keeps the shape, and still records.
  Tensor b = zeros({2, 3}, kFloat64).requires_grad_();
  const Tensor same = b.squeeze(0);
  EXPECT_EQ(same.shape(), (Shape{2, 3}));
  same.backward(g);
  EXPECT_THAT(grad_of(b), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(ViewGradTest, ExpandSumsTheGradientOverTheCopies) {
  // x (2, 1) -> (3, 2, 4): each x element is read 3 * 4 = 12 times.
  Tensor x = f64({1, 2}, {2, 1}).requires_grad_();
  const Tensor y = x.expand({3, 2, 4});
  EXPECT_EQ(y.strides(), (Strides{0, 1, 0}));
  y.backward(arange(24, kFloat64).view({3, 2, 4}));
  // row 0: sum of 0..3, 8..11, 16..19 = 6 + 38 + 70; row 1: the other half.
  EXPECT_THAT(grad_of(x), ElementsAre(114, 162));
  EXPECT_EQ(x.grad().shape(), (Shape{2, 1}));
}

TEST(ViewGradTest, NarrowSliceAndSelectScatterTheGradientIntoZeros) {
  Tensor x = zeros({5}, kFloat64).requires_grad_();
  x.narrow(0, -3, 2).backward(f64({10, 20}, {2}));  // elements 2 and 3
  EXPECT_THAT(grad_of(x), ElementsAre(0, 0, 10, 20, 0));

  Tensor s = zeros({5}, kFloat64).requires_grad_();
  s.slice(0, 1, 100, 2).backward(f64({10, 20}, {2}));  // elements 1 and 3; end clamped
  EXPECT_THAT(grad_of(s), ElementsAre(0, 10, 0, 20, 0));

  Tensor m = zeros({2, 3}, kFloat64).requires_grad_();
  m.select(1, -1).backward(f64({7, 8}, {2}));
  EXPECT_THAT(grad_of(m), ElementsAre(0, 0, 7, 0, 0, 8));

  Tensor r = zeros({2, 3}, kFloat64).requires_grad_();
  r[1][0].backward(scalar_tensor(5, kFloat64));
  EXPECT_THAT(grad_of(r), ElementsAre(0, 0, 0, 5, 0, 0));
}

TEST(ViewGradTest, ContiguousAndClonePassTheGradientThrough) {
  Tensor x = f64({0, 1, 2, 3, 4, 5}, {2, 3}).requires_grad_();
  const Tensor c = x.t().contiguous();  // a real copy
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_EQ(c.grad_fn()->name(), "contiguous");
  c.backward(f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_THAT(grad_of(x), ElementsAre(1, 3, 5, 2, 4, 6));

  // contiguous() of a contiguous tensor: no copy, but its own handle when recorded.
  Tensor y = zeros({2, 2}, kFloat64).requires_grad_();
  const Tensor same = y.contiguous();
  EXPECT_NE(same.impl(), y.impl());
  EXPECT_EQ(same.storage(), y.storage());
  EXPECT_EQ(same.storage_offset(), y.storage_offset());
  EXPECT_FALSE(y.grad_fn());  // the input is still a leaf
  same.backward(f64({1, 2, 3, 4}, {2, 2}));
  EXPECT_THAT(grad_of(y), ElementsAre(1, 2, 3, 4));
  {
    NoGradGuard no_grad;  // not recording: the very same tensor, as before
    EXPECT_EQ(y.contiguous().impl(), y.impl());
  }

  Tensor z = zeros({3}, kFloat64).requires_grad_();
  const Tensor copy = z.clone();
  EXPECT_NE(copy.storage(), z.storage());
  copy.backward(f64({1, 2, 3}, {3}));
  EXPECT_THAT(grad_of(z), ElementsAre(1, 2, 3));
}

// ---- to(dtype)

TEST(ViewGradTest, ToFloat32OfAFloat64LeafGetsAFloat64Gradient) {
  Tensor x = f64({1.0, 2.0, 3.0}, {3}).requires_grad_();
  const Tensor y = x.to(kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(y.grad_fn()->name(), "to");
  y.backward(tensor({0.5f, -1.5f, 2.25f}, {3}));
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_THAT(grad_of(x), ElementsAre(0.5, -1.5, 2.25));
}

TEST(ViewGradTest, ToSixteenBitTypesAndBackCastsTheGradient) {
  for (DType low : {kFloat16, kBFloat16}) {
    Tensor x = tensor({1.f, -2.f}, {2}).requires_grad_();
    const Tensor y = x.to(low);
    EXPECT_EQ(y.dtype(), low);
    EXPECT_THAT(y.to(kFloat32).to_vector<float>(), ElementsAre(1.f, -2.f));
    y.to(kFloat64).backward(f64({0.25, 3.0}, {2}));  // two casts on the tape
    EXPECT_EQ(x.grad().dtype(), kFloat32) << dtype_name(low);
    EXPECT_THAT(x.grad().to_vector<float>(), ElementsAre(0.25f, 3.f)) << dtype_name(low);
  }
}

TEST(ViewGradTest, ToANonFloatingDTypeRecordsNothing) {
  Tensor x = f64({1.5, -2.0}, {2}).requires_grad_();
  for (DType dt : {kInt64, kBool}) {
    const Tensor y = x.to(dt);
    EXPECT_EQ(y.grad_fn(), nullptr) << dtype_name(dt);
    EXPECT_FALSE(y.requires_grad()) << dtype_name(dt);
  }
  EXPECT_THAT(x.to(kInt64).to_vector<int64_t>(), ElementsAre(1, -2));
  // And an integer tensor cannot require grad, so converting it to float records nothing.
  const Tensor f = tensor({1, 2}, {2}).to(kFloat64);
  EXPECT_EQ(f.grad_fn(), nullptr);
  EXPECT_FALSE(f.requires_grad());
}

TEST(ViewGradTest, ToTheSameDTypeIsARecordedCopy) {
  Tensor x = zeros({2}, kFloat64).requires_grad_();
  const Tensor y = x.to(kFloat64);
  EXPECT_NE(y.storage(), x.storage());
  EXPECT_EQ(y.grad_fn()->name(), "to");
  y.backward(f64({1, 2}, {2}));
  EXPECT_THAT(grad_of(x), ElementsAre(1, 2));
}

// ---- gradcheck per method on several shapes (contiguous and strided leaves each)

TEST(ViewGradTest, GradcheckView) {
  // Merging dims needs them adjacent in memory: contiguous leaves only.
  expect_gradcheck(
      [](const Tensor& x) {
        return x.view({2, -1, 1});
      },
      {{4, 3}, {2, 1}, {6, 2}}, 10, {}, /*strided=*/false);
  // Splitting a dim, or adding size-1 dims, is possible for the strided leaves too.
  expect_gradcheck(
      [](const Tensor& x) {
        return x.view({2, 2, x.size(1)});
      },
      {{4, 3}, {4, 1}, {4, 5}}, 11);
  expect_gradcheck([](const Tensor& x) { return x.view({1, 1}); }, {{1}, {}}, 12);
}

TEST(ViewGradTest, GradcheckReshape) {
  expect_gradcheck([](const Tensor& x) { return x.reshape({-1}); }, {{3, 4}, {1, 5}, {2, 1, 3}},
                   13);
  expect_gradcheck(
      [](const Tensor& x) {
        return x.reshape({3, 1, -1});
      },
      {{6}, {2, 3}, {3, 1}}, 14);
  expect_gradcheck([](const Tensor& x) { return x.reshape({}); }, {{1}, {1, 1}, {}}, 15);
}

TEST(ViewGradTest, GradcheckPermute) {
  expect_gradcheck(
      [](const Tensor& x) {
        return x.permute({1, 2, 0});
      },
      {{2, 3, 4}, {1, 3, 1}, {4, 1, 2}}, 16);
  expect_gradcheck([](const Tensor& x) { return x.permute({-1, 0}); }, {{3, 2}, {1, 4}}, 17);
}

TEST(ViewGradTest, GradcheckTransposeAndT) {
  expect_gradcheck([](const Tensor& x) { return x.transpose(0, 2); },
                   {{2, 3, 4}, {1, 2, 1}, {3, 1, 2}}, 18);
  expect_gradcheck([](const Tensor& x) { return x.transpose(-1, -1); }, {{2, 3}}, 19);
  expect_gradcheck([](const Tensor& x) { return x.t(); }, {{3, 4}, {1, 3}, {5}, {}}, 20);
}

TEST(ViewGradTest, GradcheckSqueezeAndUnsqueeze) {
  expect_gradcheck([](const Tensor& x) { return x.squeeze(); }, {{1, 3, 1, 2}, {2, 3}, {1, 1}}, 21);
  expect_gradcheck([](const Tensor& x) { return x.squeeze(-2); }, {{3, 1, 2}, {2, 3}, {1, 1}}, 22);
  expect_gradcheck([](const Tensor& x) { return x.unsqueeze(1); }, {{3, 2}, {1}, {2, 1, 3}}, 23);
  expect_gradcheck([](const Tensor& x) { return x.unsqueeze(-1); }, {{3, 2}, {}, {4}}, 24);
}

TEST(ViewGradTest, GradcheckExpand) {
  expect_gradcheck(
      [](const Tensor& x) {
        return x.expand({3, -1, 4});
      },
      {{2, 1}, {1, 1}, {2, 4}}, 25);
  expect_gradcheck([](const Tensor& x) { return x.expand({2, 3}); }, {{}, {1}, {3}}, 26);
}

TEST(ViewGradTest, GradcheckNarrowSliceSelect) {
  expect_gradcheck([](const Tensor& x) { return x.narrow(1, 1, 2); }, {{3, 4}, {1, 3}, {2, 3, 2}},
                   27);
  expect_gradcheck([](const Tensor& x) { return x.narrow(-1, -2, 1); }, {{3, 4}, {2}, {1, 5}}, 28);
  expect_gradcheck([](const Tensor& x) { return x.slice(0, 1, 100, 2); },
                   {{5, 2}, {2, 1}, {6, 3, 1}}, 29);
  expect_gradcheck([](const Tensor& x) { return x.slice(-1, -3, -1, 1); }, {{2, 4}, {1, 3}, {5}},
                   30);
  expect_gradcheck([](const Tensor& x) { return x.select(0, -1); }, {{3, 4}, {1, 2}, {2}}, 31);
  expect_gradcheck([](const Tensor& x) { return x[0][1]; }, {{2, 3}, {1, 2, 1}, {3, 2, 2}}, 32);
}

TEST(ViewGradTest, GradcheckFlattenAndUnflatten) {
  expect_gradcheck([](const Tensor& x) { return x.flatten(); }, {{2, 3, 4}, {1, 2}, {}}, 33);
  expect_gradcheck([](const Tensor& x) { return x.flatten(1, -1); }, {{2, 3, 4}, {1, 1, 3}}, 34);
  expect_gradcheck(
      [](const Tensor& x) {
        return x.unflatten(-1, {2, -1});
      },
      {{3, 4}, {1, 2}, {2, 1, 6}}, 35);
}

TEST(ViewGradTest, GradcheckContiguousCloneAndTo) {
  const std::vector<Shape> shapes = {{3, 4}, {1, 3, 1}, {2, 1, 3}, {}};
  expect_gradcheck([](const Tensor& x) { return x.contiguous(); }, shapes, 36);
  expect_gradcheck([](const Tensor& x) { return x.clone(); }, shapes, 37);
  expect_gradcheck([](const Tensor& x) { return x.to(kFloat64); }, shapes, 38);
  GradcheckOptions loose;  // float32 rounding; the map is linear, so a wide step is exact
  loose.eps = 1e-2;
  loose.atol = 1e-4;
  expect_gradcheck([](const Tensor& x) { return x.to(kFloat32); }, shapes, 39, loose);
}

TEST(ViewGradTest, StridedLeavesAreNonContiguousViewsOfViews) {
  Generator gen(40);
  const Tensor x = strided_leaf({3, 4}, gen);
  EXPECT_FALSE(x.is_contiguous());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_TRUE(x.requires_grad());
  EXPECT_EQ(x.strides(), (Strides{1, 6}));
}

// ---- chains and overlaps

TEST(ViewGradTest, GradientFlowsThroughAChainOfViews) {
  // t: (4, 3) with t[i][j] = x[j][i]; reshape (2, 6) (a copy) reads t row-major:
  //   row 0: x00 x10 x20 x01 x11 x21    row 1: x02 x12 x22 x03 x13 x23
  // narrow(1, 2, 3) keeps x20 x01 x11 and x22 x03 x13.
  Tensor x = zeros({3, 4}, kFloat64).requires_grad_();
  const Tensor y = x.t().reshape({2, 6}).narrow(1, 2, 3);
  EXPECT_EQ(y.grad_fn()->name(), "narrow");
  const Node* reshape_node = y.grad_fn()->next_edges[0].fn.get();
  ASSERT_NE(reshape_node, nullptr);
  EXPECT_EQ(reshape_node->name(), "reshape");
  ASSERT_NE(reshape_node->next_edges[0].fn, nullptr);
  EXPECT_EQ(reshape_node->next_edges[0].fn->name(), "t");
  y.backward(f64({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_THAT(grad_of(x), ElementsAre(0, 2, 0, 5,  //
                                      0, 3, 0, 6,  //
                                      1, 0, 4, 0));

  expect_gradcheck(
      [](const Tensor& t) {
        return t.t().reshape({2, -1}).narrow(1, 1, 3).unsqueeze(0).expand({2, 2, 3}).select(2, 0);
      },
      {{3, 4}, {2, 6}, {6, 2}}, 41);
  expect_gradcheck(
      [](const Tensor& t) {
        return t.permute({1, 0, 2}).flatten(1).slice(1, 0, 5, 2).contiguous().to(kFloat64)[1];
      },
      {{2, 3, 2}, {3, 2, 1}, {1, 2, 4}}, 42);
}

TEST(ViewGradTest, GradientsOfOverlappingSelectsAccumulate) {
  Tensor x = zeros({2, 3}, kFloat64).requires_grad_();
  const Tensor y = add(x[0], x[0]);  // row 0 read twice
  y.backward(f64({1, 2, 3}, {3}));
  EXPECT_THAT(grad_of(x), ElementsAre(2, 4, 6, 0, 0, 0));

  // Through a non-leaf, so the engine sums both into one pending gradient first.
  Tensor z = zeros({6}, kFloat64).requires_grad_();
  const Tensor w = z.view({2, 3});
  add(w.narrow(1, 0, 2), w.narrow(1, 1, 2)).backward(ones({2, 2}, kFloat64));
  EXPECT_THAT(grad_of(z), ElementsAre(1, 2, 1, 1, 2, 1));

  // Two roots, each a select of the same element.
  Tensor v = zeros({3}, kFloat64).requires_grad_();
  const auto g =
      tg::grad({v[1], v[1]}, {v}, {scalar_tensor(2, kFloat64), scalar_tensor(5, kFloat64)});
  EXPECT_THAT(g[0].to_vector<double>(), ElementsAre(0, 7, 0));

  expect_gradcheck([](const Tensor& t) { return add(t[0], mul(t[0], t[-1])); },
                   {{2, 3}, {3, 1}, {4, 2, 2}}, 43);
}

// ---- edge cases: empty views get zero gradients (no kink in a linear map to pin)

TEST(ViewGradTest, EmptyViewsGiveZeroGradients) {
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  const Tensor none = x.narrow(0, 1, 0);
  EXPECT_EQ(none.shape(), (Shape{0}));
  none.backward(zeros({0}, kFloat64));
  EXPECT_THAT(grad_of(x), ElementsAre(0, 0, 0));

  Tensor s = f64({1, 2, 3}, {3}).requires_grad_();
  s.slice(0, 2, 1).backward(zeros({0}, kFloat64));
  EXPECT_THAT(grad_of(s), ElementsAre(0, 0, 0));

  // Expanding a size-1 dim to 0 copies: each element was used zero times.
  Tensor e = f64({1, 2}, {2, 1}).requires_grad_();
  e.expand({2, 0}).backward(zeros({2, 0}, kFloat64));
  EXPECT_EQ(e.grad().shape(), (Shape{2, 1}));
  EXPECT_THAT(grad_of(e), ElementsAre(0, 0));
}

// ---- other dtypes, and errors while recording

TEST(ViewGradTest, Float32AndFloat16ViewsGetGradientsOfTheirDType) {
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    Tensor x = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}).to(dt).requires_grad_();
    const Tensor y = x.t().reshape({4});
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_THAT(y.to(kFloat32).to_vector<float>(), ElementsAre(1.f, 3.f, 2.f, 4.f));
    y.backward(tensor({0.5f, 1.5f, 2.5f, 3.5f}, {4}).to(dt));
    EXPECT_EQ(x.grad().dtype(), dt) << dtype_name(dt);
    EXPECT_THAT(x.grad().to(kFloat32).to_vector<float>(), ElementsAre(0.5f, 2.5f, 1.5f, 3.5f))
        << dtype_name(dt);
  }
}

TEST(ViewGradTest, ErrorsAreTheSameWhileRecording) {
  Tensor x = zeros({2, 3}, kFloat64).requires_grad_();
  EXPECT_TG_THROW(x.view({5}), ShapeError, "view", "(5)", "6 elements");
  EXPECT_TG_THROW(x.t().view({6}), ShapeError, "view", "(3, 2)", "reshape");
  EXPECT_TG_THROW(x.reshape({4, -1}), ShapeError, "reshape", "(4, -1)", "6 elements");
  EXPECT_TG_THROW(x.permute({0, 0}), ShapeError, "permute", "dim 0 appears twice");
  EXPECT_TG_THROW(x.transpose(0, 2), IndexError, "transpose", "2");
  EXPECT_TG_THROW(x.unsqueeze(0).t(), ShapeError, "t", "(1, 2, 3)");
  EXPECT_TG_THROW(x.unsqueeze(4), IndexError, "unsqueeze", "dim 4", "rank 2");
  EXPECT_TG_THROW(x.expand({3, 3}), ShapeError, "expand", "(2, 3)", "(3, 3)");
  EXPECT_TG_THROW(x.narrow(1, 2, 2), IndexError, "narrow", "start 2 + length 2", "size 3");
  EXPECT_TG_THROW(x.slice(0, 0, 2, 0), ValueError, "slice", "step", "0");
  EXPECT_TG_THROW(x.select(1, 3), IndexError, "select", "index 3", "size 3");
  EXPECT_TG_THROW(x[-3], IndexError, "select", "index -3", "size 2");
  EXPECT_TG_THROW(x.flatten(1, 0), ShapeError, "flatten", "start_dim 1", "end_dim 0");
  EXPECT_TG_THROW(x.unflatten(1, {2, -1}), ShapeError, "unflatten", "(2, -1)", "3 elements");
  // A failed call leaves no trace: x is still a leaf with no gradient.
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad().defined());
}

}  // namespace
}  // namespace tg
