// ops/join.cpp — cat, stack, split, chunk.
// Tests: tests/ops/join_test.cpp.
// Course: docs/course/16-transformer-block.md (split of the qkv projection).
//
// Seen from `dim`, a contiguous tensor of shape (d_0, ..., d_k, ...) with k = dim is a
// matrix of `outer` = d_0 * ... * d_(k-1) rows; each row holds d_k slabs of `inner` =
// d_(k+1) * ... elements. Concatenating along dim puts the rows of the inputs side by side:
//
//     out row r = [ x_0 row r | x_1 row r | ... ]        (x_i's row: n_i * inner elements)
//
// so the forward is one memcpy per (row, input), whatever the dtype. stack is cat after
// giving every input a size-1 dim at `dim`.
//
// Backward: joining and cutting are each other's backward. Each element of x_i lands in
// exactly one place of cat's output, inside the slice [offset_i, offset_i + n_i) along dim,
// so dx_i is that slice of dout (a view, nothing copied). A piece of split is such a slice
// of x, so dx is the concatenation of the pieces' gradients.
#include "ops/join.h"

#include <cstring>

#include "core/factories.h"

namespace tg {
namespace {

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// ---------------------------------------------------------------- kernel
// out = [xs[0] | xs[1] | ...] along dim. Every x is contiguous, has out's dtype, and matches
// out's shape except along dim, where the sizes add up to out's; out is contiguous.
void cat_kernel(const std::vector<Tensor>& xs, size_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  const Shape& s = out.shape();
  const int64_t outer = product(s, 0, dim), inner = product(s, dim + 1, s.size());
  const int64_t row = s[dim] * inner;  // elements in one row of out
  const size_t bytes = out.element_size();
  char* o = static_cast<char*>(out.raw_data());
  int64_t col = 0;  // where x's part of each row starts
  for (const Tensor& x : xs) {
    const int64_t width = x.shape()[dim] * inner;
    if (width == 0) continue;  // an empty piece: nothing to copy (and maybe no storage)
    const char* p = static_cast<const char*>(x.raw_data());
    for (int64_t r = 0; r < outer; ++r) {
      std::memcpy(o + (r * row + col) * bytes, p + r * width * bytes, width * bytes);
    }
    col += width;
  }
}

// Contiguous inputs for cat_kernel (copies only the ones that are not).
std::vector<Tensor> contiguous_all(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(x.contiguous());
  return out;
}

// ---------------------------------------------------------------- checks
// A non-empty list of defined tensors of one dtype. Returns nothing; throws naming `op`.
void check_list(const std::vector<Tensor>& xs, const char* op) {
  TG_CHECK(!xs.empty(), ValueError, "{}: expects a non-empty list of tensors, got none", op);
  for (size_t i = 0; i < xs.size(); ++i) {
    TG_CHECK(xs[i].defined(), MisuseError, "{}: tensor {} of the list is undefined", op, i);
    TG_CHECK(xs[i].dtype() == xs[0].dtype(), DTypeError,
             "{}: tensor {} has dtype {} but tensor 0 has dtype {}; convert with .to()", op, i,
             xs[i].dtype(), xs[0].dtype());
  }
}

// The shape of cat(xs, dim), with dim already wrapped.
Shape cat_shape(const std::vector<Tensor>& xs, size_t dim) {
  const Shape& first = xs[0].shape();
  Shape out = first;
  out[dim] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Shape& s = xs[i].shape();
    TG_CHECK(s.size() == first.size(), ShapeError,
             "cat: tensor {} has shape {} but tensor 0 has shape {}: the ranks differ ({} vs {})",
             i, s, first, s.size(), first.size());
    for (size_t d = 0; d < s.size(); ++d) {
      TG_CHECK(d == dim || s[d] == first[d], ShapeError,
               "cat: tensor {} has shape {} but tensor 0 has shape {}: sizes must match except "
               "in dim {} (dim {}: {} vs {})",
               i, s, first, dim, d, s[d], first[d]);
    }
    TG_CHECK(!__builtin_add_overflow(out[dim], s[dim], &out[dim]), ShapeError,
             "cat: the sizes along dim {} add up to more than int64 can count", dim);
  }
  return out;
}

// ---------------------------------------------------------------- Functions
struct Cat : Function<Cat> {
  static constexpr std::string_view kName = "cat";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    size_t dim = 0;
    std::vector<int64_t> sizes;  // x_i.size(dim)
  };
  // forward: out = [x_0 | x_1 | ...] along dim
  static Tensor forward(Context<State>& ctx, const std::vector<Tensor>& xs, int64_t dim) {
    check_list(xs, "cat");
    for (size_t i = 0; i < xs.size(); ++i) {
      TG_CHECK(xs[i].dim() > 0, ShapeError,
               "cat: tensor {} is 0-d (a scalar), which cannot be concatenated; unsqueeze it or "
               "use stack",
               i);
    }
    const size_t d = wrap_dim(dim, xs[0].dim(), "cat");
    Tensor out = empty(cat_shape(xs, d), xs[0].dtype());
    cat_kernel(contiguous_all(xs), d, out);
    ctx.state.dim = d;
    for (const Tensor& x : xs) ctx.state.sizes.push_back(x.shape()[d]);
    return out;
  }
  // backward: x_i filled out[.., offset_i : offset_i + n_i, ..] once per element, so
  //           dx_i = dout.narrow(dim, offset_i, n_i)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dxs;
    const auto d = static_cast<int64_t>(ctx.state.dim);
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.state.sizes.size(); ++i) {
      const int64_t n = ctx.state.sizes[i];
      dxs.push_back(ctx.needs_input_grad(i) ? g[0].narrow(d, offset, n) : Tensor());
      offset += n;
    }
    return dxs;
  }
};

struct Stack : Function<Stack> {
  static constexpr std::string_view kName = "stack";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    size_t dim = 0;  // the new dim, in the output
    size_t count = 0;
  };
  // forward: out[.., i, ..] = x_i, i.e. cat of the x_i each unsqueezed at dim
  static Tensor forward(Context<State>& ctx, const std::vector<Tensor>& xs, int64_t dim) {
    check_list(xs, "stack");
    const Shape& first = xs[0].shape();
    for (size_t i = 0; i < xs.size(); ++i) {
      TG_CHECK(xs[i].shape() == first, ShapeError,
               "stack: tensor {} has shape {} but tensor 0 has shape {}; stack needs equal shapes",
               i, xs[i].shape(), first);
    }
    const auto r = static_cast<int64_t>(first.size());
    TG_CHECK(dim >= -r - 1 && dim <= r, IndexError,
             "stack: dim {} is out of range for stacking tensors of rank {} (expected {} to {})",
             dim, r, -r - 1, r);
    const size_t d = wrap_dim(dim, first.size() + 1, "stack");
    std::vector<Tensor> pieces;
    for (const Tensor& x : xs) pieces.push_back(x.contiguous().unsqueeze(static_cast<int64_t>(d)));
    Shape shape = first;
    shape.insert(d, static_cast<int64_t>(xs.size()));
    Tensor out = empty(shape, xs[0].dtype());
    cat_kernel(pieces, d, out);
    ctx.state = {d, xs.size()};
    return out;
  }
  // backward: x_i is out.select(dim, i), so dx_i = dout.select(dim, i)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dxs;
    for (size_t i = 0; i < ctx.state.count; ++i) {
      dxs.push_back(ctx.needs_input_grad(i)
                        ? g[0].select(static_cast<int64_t>(ctx.state.dim), static_cast<int64_t>(i))
                        : Tensor());
    }
    return dxs;
  }
};

// The one Function behind split(size), split(sizes) and chunk: the public functions turn
// their arguments into a list of sizes that add up to x.size(dim).
struct Split : Function<Split> {
  static constexpr std::string_view kName = "split";
  struct State {
    Shape x_shape;
    size_t dim = 0;
  };
  // forward: piece_i = x.narrow(dim, offset_i, n_i), a view
  static std::vector<Tensor> forward(Context<State>& ctx, const Tensor& x,
                                     const std::vector<int64_t>& sizes, size_t dim) {
    std::vector<Tensor> pieces;
    int64_t offset = 0;
    for (int64_t n : sizes) {
      pieces.push_back(x.narrow(static_cast<int64_t>(dim), offset, n));
      offset += n;
    }
    ctx.state = {x.shape(), dim};
    return pieces;
  }
  // backward: the pieces tile x along dim, so dx = [dpiece_0 | dpiece_1 | ...] along dim.
  // A piece that got no gradient arrives as zeros (the engine fills them in).
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    // Each piece's gradient is copied straight into its slice of dx, whatever its strides
    // (attention's dq, dk, dv arrive transposed) and dtype: one pass over the memory.
    NoGradGuard no_grad;
    Tensor dx = empty(ctx.state.x_shape, g[0].dtype());
    const auto dim = static_cast<int64_t>(ctx.state.dim);
    int64_t offset = 0;
    for (const Tensor& gi : g) {
      dx.narrow(dim, offset, gi.size(dim)).copy_(gi);
      offset += gi.size(dim);
    }
    return {dx};
  }
};

// x.size(dim) for split/chunk, after checking x has a dim to cut.
size_t split_dim(const Tensor& x, int64_t dim, const char* op) {
  TG_CHECK(x.dim() > 0, ShapeError, "{}: expects a tensor with at least one dim, got a 0-d tensor",
           op);
  return wrap_dim(dim, x.dim(), op);
}

// Pieces of `size` elements covering n (the last one smaller); one empty piece if n == 0.
std::vector<int64_t> even_sizes(int64_t n, int64_t size) {
  if (n == 0) return {0};
  const int64_t count = n / size + (n % size != 0);  // ceil(n / size), without overflow
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < count; ++i) sizes.push_back(std::min(size, n - i * size));
  return sizes;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim, Here here) {
  return Cat::apply_at(here, xs, dim);
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim, Here here) {
  return Stack::apply_at(here, xs, dim);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim, Here here) {
  const size_t d = split_dim(x, dim, "split");
  const int64_t n = x.shape()[d];
  TG_CHECK(split_size >= 0, ValueError, "split: split_size must be non-negative, got {}",
           split_size);
  TG_CHECK(split_size > 0 || n == 0, ValueError,
           "split: split_size can be 0 only if dim {} has size 0, but x of shape {} has size {}", d,
           x.shape(), n);
  return Split::apply_at(here, x, even_sizes(n, split_size), d);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim,
                          Here here) {
  const size_t d = split_dim(x, dim, "split");
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TG_CHECK(sizes[i] >= 0, ValueError, "split: sizes must be non-negative, got {} at position {}",
             sizes[i], i);
    TG_CHECK(!__builtin_add_overflow(total, sizes[i], &total), ValueError,
             "split: the sizes overflow int64");
  }
  TG_CHECK(total == x.shape()[d], ValueError,
           "split: sizes [{}] sum to {}, but dim {} of x (shape {}) has size {}",
           fmt::join(sizes, ", "), total, d, x.shape(), x.shape()[d]);
  return Split::apply_at(here, x, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim, Here here) {
  const size_t d = split_dim(x, dim, "chunk");
  TG_CHECK(chunks > 0, ValueError, "chunk: chunks must be positive, got {}", chunks);
  const int64_t n = x.shape()[d];
  // PyTorch's rule: pieces of ceil(n / chunks); an empty dim gives `chunks` empty pieces.
  const std::vector<int64_t> sizes = n == 0 ? std::vector<int64_t>(static_cast<size_t>(chunks), 0)
                                            : even_sizes(n, n / chunks + (n % chunks != 0));
  return Split::apply_at(here, x, sizes, d);
}

}  // namespace tg
