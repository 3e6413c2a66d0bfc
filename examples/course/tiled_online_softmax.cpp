// file: examples/course/tiled_online_softmax.cpp
// Chapter 21: the online softmax of one query row, by hand. Eight scores and their values
// arrive in tiles of three keys; each tile makes a partial (its own max m, sum l and weighted
// sum o), and the partials merge into one. Then the same merge in other groupings, scores
// near 1000, and tiles whose every key is hidden.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The softmax of one query row over a set of keys, relative to the set's own max:
/// m = max_j s_j, l = sum_j e^(s_j - m), o = sum_j e^(s_j - m) v_j (one number per value
/// here, Dv = 1). The empty set is (-inf, 0, 0).
struct Part {
  double m = -kInf;
  double l = 0;
  double o = 0;
};

/// The partial of keys begin <= j < end, in two passes over them (chapter 12's row).
Part partial(const std::vector<double>& s, const std::vector<double>& v, size_t begin, size_t end) {
  Part p;
  for (size_t j = begin; j < end; ++j) p.m = std::max(p.m, s[j]);
  if (p.m == -kInf) return p;  // every key hidden: the empty set
  for (size_t j = begin; j < end; ++j) {
    const double e = std::exp(s[j] - p.m);
    p.l += e;
    p.o += e * v[j];
  }
  return p;
}

/// Two disjoint sets of keys as one: each side's terms rescaled to the larger max.
Part merge(const Part& x, const Part& y) {
  if (y.m == -kInf) return x;  // nothing to add (and e^(-inf - (-inf)) would be NaN)
  const double top = std::max(x.m, y.m);
  const double fx = std::exp(x.m - top), fy = std::exp(y.m - top);
  return {top, fx * x.l + fy * y.l, fx * x.o + fy * y.o};
}

/// The largest difference of out = o / l and L = m + log l between two partials.
double gap(const Part& x, const Part& y) {
  return std::max(std::abs(x.o / x.l - y.o / y.l),
                  std::abs((x.m + std::log(x.l)) - (y.m + std::log(y.l))));
}

const char* within(double difference) { return difference < 1e-14 ? "below 1e-14" : "TOO LARGE"; }

/// A number as fmt prints it, but NaN without the sign bit that x86 gives 0/0 and inf - inf.
std::string show(double x) { return std::isnan(x) ? "NaN" : fmt::format("{}", x); }

}  // namespace

int main() {
  const std::vector<double> s = {0.5, 2.0, -1.0, 1.0, 3.5, 0.0, 2.5, -0.5};
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8};
  const size_t T = s.size(), tile = 3;

  // Chapter 12: the max of the whole row first, then the sums.
  const Part whole = partial(s, v, 0, T);
  fmt::print("two passes:  m = {:.4f}  l = {:.6f}  out = o / l = {:.6f}  L = {:.6f}\n", whole.m,
             whole.l, whole.o / whole.l, whole.m + std::log(whole.l));

  // Online: one tile of keys at a time, each merged into the running partial as it arrives.
  Part run;
  for (size_t j0 = 0; j0 < T; j0 += tile) {
    const Part t = partial(s, v, j0, std::min(j0 + tile, T));
    const double top = std::max(run.m, t.m);
    fmt::print("keys {}..{}: tile m = {:.4f} l = {:.6f} o = {:.6f}", j0, std::min(j0 + tile, T) - 1,
               t.m, t.l, t.o);
    fmt::print("  factors: running {:.6f} tile {:.6f}\n", std::exp(run.m - top),
               std::exp(t.m - top));
    run = merge(run, t);
    fmt::print("            running m = {:.4f} l = {:.6f} o = {:.6f}  o / l = {:.6f}\n", run.m,
               run.l, run.o, run.o / run.l);
  }
  fmt::print("online:      out = {:.6f}  L = {:.6f}  (two passes minus online: {})\n",
             run.o / run.l, run.m + std::log(run.l), within(gap(whole, run)));

  // The merge is associative: any grouping of the keys gives the same partial.
  std::vector<Part> one(T);
  for (size_t j = 0; j < T; ++j) one[j] = partial(s, v, j, j + 1);
  Part forwards, backwards;
  for (size_t j = 0; j < T; ++j) forwards = merge(forwards, one[j]);
  for (size_t j = T; j-- > 0;) backwards = merge(backwards, one[j]);
  std::vector<Part> level = one;  // pairs, then pairs of pairs: a tree, as threads would do it
  while (level.size() > 1) {
    std::vector<Part> up;
    for (size_t i = 0; i < level.size(); i += 2) {
      up.push_back(i + 1 < level.size() ? merge(level[i], level[i + 1]) : level[i]);
    }
    level = up;
  }
  const Part a = partial(s, v, 0, 3), b = partial(s, v, 3, 6), c = partial(s, v, 6, 8);
  fmt::print("one key at a time, left to right: {}\n", within(gap(whole, forwards)));
  fmt::print("one key at a time, right to left: {}\n", within(gap(whole, backwards)));
  fmt::print("a tree of pairs:                  {}\n", within(gap(whole, level[0])));
  fmt::print("(a + b) + c and a + (b + c):      {} and {}\n",
             within(gap(whole, merge(merge(a, b), c))), within(gap(whole, merge(a, merge(b, c)))));

  // Scores near 1000: e^1000 overflows double, but no exponent above is ever positive.
  const std::vector<double> big = {998.0, 1000.0, 999.0, 1001.0};
  const std::vector<double> vb = {1, 2, 3, 4};
  double naive_l = 0, naive_o = 0;
  for (size_t j = 0; j < big.size(); ++j) {
    naive_l += std::exp(big[j]);
    naive_o += std::exp(big[j]) * vb[j];
  }
  const Part big_online = merge(partial(big, vb, 0, 2), partial(big, vb, 2, 4));
  fmt::print("scores near 1000: without the max, out = {} / {} = {}; online, out = {:.6f}\n",
             naive_o, naive_l, show(naive_o / naive_l), big_online.o / big_online.l);

  // A tile whose every key is hidden (s = -inf) is the empty partial: merging it changes
  // nothing, and merging into it gives the other side back. Without the test for an empty
  // side, two empty partials meet in e^(-inf - (-inf)).
  const std::vector<double> hidden = {-kInf, -kInf, -kInf, 1.0, 2.0, 3.0};
  const Part empty = partial(hidden, v, 0, 3), visible = partial(hidden, v, 3, 6);
  fmt::print("hidden tile: m = {} l = {} o = {}\n", empty.m, empty.l, empty.o);
  fmt::print("empty then visible: {}; visible then empty: {}\n",
             within(gap(visible, merge(empty, visible))),
             within(gap(visible, merge(visible, empty))));
  fmt::print("two empty partials without the test: factor e^(-inf - (-inf)) = {}\n",
             show(std::exp(empty.m - std::max(empty.m, empty.m))));
}
