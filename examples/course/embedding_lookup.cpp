// file: examples/course/embedding_lookup.cpp
// Chapter 8: an embedding is a one-hot matmul. Forward and backward by tg::embedding, then by
// one_hot(ids) @ table, with a repeated id; padding_idx; a bad id; the tied LM head.
#include <fmt/format.h>

#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_rows(const char* name, const tg::Tensor& t) {
  const tg::Tensor m = t.reshape({-1, t.size(-1)}).to(tg::kFloat64);
  for (int64_t r = 0; r < m.size(0); ++r) {
    fmt::print("  {:<19}", r == 0 ? name : "");
    for (double v : m.select(0, r).to_vector<double>()) fmt::print(" {:6.2f}", v);
    fmt::print("\n");
  }
}

}  // namespace

int main() {
  // V = 4 tokens, D = 3 channels; a batch of B = 2 sequences of T = 2 tokens.
  const tg::Tensor table = tg::tensor({0.0, 0.1, 0.2,  //
                                       1.0, 1.1, 1.2,  //
                                       2.0, 2.1, 2.2,  //
                                       3.0, 3.1, 3.2},
                                      {4, 3})
                               .requires_grad_();
  const tg::Tensor ids = tg::tensor({2, 0, 2, 3}, {2, 2});  // id 2 appears twice
  const tg::Tensor out = tg::embedding(ids, table);
  fmt::print("embedding(ids {}, table {}) -> {}\n", ids.shape(), table.shape(), out.shape());
  print_rows("out", out);

  // The same as a matmul with the one-hot rows of the ids: H (B*T, V) @ table (V, D).
  const tg::Tensor onehot = tg::index_select(tg::eye(4, -1, tg::kFloat64), 0, ids.reshape({-1}));
  print_rows("one-hot", onehot);
  const tg::Tensor via_matmul = tg::matmul(onehot, table).reshape({2, 2, 3});

  // Backward: dtable = H^T @ dout, i.e. each dout row added into row ids[n] of dtable.
  const tg::Tensor dout = tg::tensor({1.0, 1.0, 1.0,     //
                                      0.5, 0.5, 0.5,     //
                                      10.0, 20.0, 30.0,  //
                                      -1.0, -1.0, -1.0},
                                     {2, 2, 3});
  const tg::Tensor dtable = tg::grad({out}, {table}, {dout}, /*retain_graph=*/true)[0];
  print_rows("dtable", dtable);
  const tg::Tensor dtable_mm = tg::grad({via_matmul}, {table}, {dout})[0];
  const bool same = out.to_vector<double>() == via_matmul.to_vector<double>() &&
                    dtable.to_vector<double>() == dtable_mm.to_vector<double>();
  fmt::print("one-hot matmul gives the same out and dtable: {}\n", same ? "yes" : "NO");

  // padding_idx = 2: row 2 is still looked up, but gets no gradient.
  const tg::Tensor dpad = tg::grad({tg::embedding(ids, table, 2)}, {table}, {dout})[0];
  print_rows("dtable, padding 2", dpad);

  // A bad id is an error before anything is read.
  try {
    (void)tg::embedding(tg::tensor({1, 2, 4, 0}, {2, 2}), table);
  } catch (const tg::IndexError& e) {
    fmt::print("IndexError: {}\n", e.what());
  }

  // A tied LM head: logits = h @ table^T uses the same (V, D) table as a Linear weight
  // (out = V, in = D). Its gradient then sums both uses: the lookup and the head.
  const tg::Tensor logits = tg::linear(out, table);  // (2, 2, 4)
  const tg::Tensor dtied = tg::grad({tg::sum(logits)}, {table})[0];
  print_rows("dtable (tied head)", dtied);
}
