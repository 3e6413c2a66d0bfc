// tools/course_figures_cost.cpp — the figures of chapters 18 to 20: what one step of the
// tiny LM saves for backward, op by op, from its tape; the bug zoo's repeated ids, the
// broken scatter against the repaired one, from the zoo's own kernels; and the bits of one
// number in float32, float16 and bfloat16, from core/half.h's conversions.
#include <bit>
#include <map>

#include "core/core.h"
#include "core/tape_print.h"
#include "examples/common/bug_zoo.h"
#include "nn/nn.h"
#include "ops/ops.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

/// Chapter 18: bars of the saved bytes of each op kind in one step of the tiny LM (the
/// config of examples/course/accounting_step.cpp, on 4 sequences of 32 tokens).
Figure saved_bytes() {
  const nn::TransformerConfig config{.vocab_size = 80,
                                     .context_length = 32,
                                     .d_model = 64,
                                     .n_layers = 3,
                                     .n_heads = 4,
                                     .d_ff = 192,
                                     .rope = true};
  const int64_t B = 4, T = 32, V = config.vocab_size;
  Generator gen(18);
  nn::TransformerLM model(config, gen);
  const Tensor ids = randint(0, V, {B, T}, kInt64, gen);
  const Tensor targets = randint(0, V, {B * T}, kInt64, gen);
  const Tensor loss = cross_entropy(model(ids).reshape({B * T, V}), targets);
  std::map<std::string, int64_t> bytes;
  int64_t total = 0;
  for (const TapeEntry& e : tape_entries(loss)) {
    if (e.saved_bytes == 0) continue;
    bytes[e.op] += static_cast<int64_t>(e.saved_bytes);
    total += static_cast<int64_t>(e.saved_bytes);
  }
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const auto& [op, b] : bytes) rows.emplace_back(b, op);
  std::sort(rows.rbegin(), rows.rend());  // the largest first
  const double left = 230, bar_max = 380, row_h = 26, top = 50;
  Svg svg(left + bar_max + 120, top + row_h * static_cast<double>(rows.size()) + 40);
  svg.text(20, 28, "saved for backward, one step: B = 4, T = 32, C = 64, F = 192, L = 3", kCode);
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = top + row_h * static_cast<double>(i);
    const double w =
        bar_max * static_cast<double>(rows[i].first) / static_cast<double>(rows[0].first);
    svg.text(left - 10, y + 17, rows[i].second, {.size = 12, .anchor = "end", .mono = true});
    svg.rect(left, y + 4, w, row_h - 8, blend(0.35 + 0.65 * w / bar_max, 49, 99, 180));
    svg.text(left + w + 8, y + 17,
             fmt::format(
                 "{} KiB ({}%)", rows[i].first / 1024,
                 fixed(100.0 * static_cast<double>(rows[i].first) / static_cast<double>(total), 0)),
             {.size = 11, .anchor = "start", .fill = "#555", .mono = true});
  }
  svg.text(20, top + row_h * static_cast<double>(rows.size()) + 24,
           fmt::format("total {} KiB", total / 1024), kCode);
  return {"18-saved-bytes.svg", svg.str()};
}

/// Chapter 19: gather_rows with ids (4, 0, 4, 2, 4): the upstream rows, and the table's
/// gradient from the broken scatter (dtable[id] = g) and from the repair (+= g).
Figure repeated_ids() {
  using examples::zoo::Variant;
  const Tensor ids = tensor({4, 0, 4, 2, 4}, {5});
  const Tensor dout = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0}, {5, 2});
  auto grad_of = [&](Variant v) {
    const Tensor table = zeros({5, 2}, kFloat64).requires_grad_();
    examples::zoo::gather_rows(table, ids, v).backward(dout);
    return table.grad();
  };
  const Tensor broken = grad_of(Variant::kBroken), repaired = grad_of(Variant::kRepaired);
  const double cw = 44, ch = 26;
  Svg svg(760, 250);
  auto table = [&](double x, const char* title, const Tensor& t, int64_t rows,
                   const std::function<std::string(int64_t)>& row_label, int64_t highlight) {
    svg.text(x, 40, title, kCode);
    for (int64_t r = 0; r < rows; ++r) {
      svg.text(x - 8, 80 + ch * static_cast<double>(r), row_label(r),
               {.size = 11, .anchor = "end", .fill = "#555", .mono = true});
    }
    grid(
        svg, x, 62, rows, 2, cw, ch,
        [&](int64_t i, int64_t) {
          return i == highlight ? std::string("#f6d7a7") : std::string("#eef2fb");
        },
        [&](int64_t i, int64_t j) {
          return fixed(t.at<double>({i, j}), 0);
        });
  };
  table(
      60, "dout (5, 2)", dout, 5,
      [&](int64_t n) { return fmt::format("id {}", ids.at<int64_t>({n})); }, -1);
  table(
      300, "dtable, dtable[id] = g", broken, 5, [](int64_t r) { return fmt::format("{}", r); }, 4);
  table(
      540, "dtable, dtable[id] += g", repaired, 5, [](int64_t r) { return fmt::format("{}", r); },
      4);
  svg.text(60, 225, "id 4 at n = 0, 2, 4", kNote);
  svg.text(300, 225,
           fmt::format("row 4 keeps the last: ({}, {})", fixed(broken.at<double>({4, 0}), 0),
                       fixed(broken.at<double>({4, 1}), 0)),
           kNote);
  svg.text(540, 225,
           fmt::format("row 4 sums: ({}, {})", fixed(repaired.at<double>({4, 0}), 0),
                       fixed(repaired.at<double>({4, 1}), 0)),
           kNote);
  return {"19-repeated-ids.svg", svg.str()};
}

/// Chapter 20: 0.1 rounded to float32, float16 and bfloat16, one box per bit, each field in
/// its colour; bfloat16 drawn under the first 16 bits of float32, whose top half it is.
Figure float_formats() {
  const double x = 0.1;
  struct Row {
    const char* name;
    uint32_t bits;
    int e, m;  // exponent and mantissa bits
    float stored;
  };
  const float f = static_cast<float>(x);
  const Half h(x);
  const BFloat16 b(x);
  const std::vector<Row> rows = {{"float32", std::bit_cast<uint32_t>(f), 8, 23, f},
                                 {"float16", h.bits, 5, 10, static_cast<float>(h)},
                                 {"bfloat16", b.bits, 8, 7, static_cast<float>(b)}};
  const double left = 100, cw = 20, ch = 26, top = 56, gap = 70;
  Svg svg(left + 32 * cw + 30, top + gap * 3);
  svg.text(20, 28, "0.1 in three formats: sign | exponent | mantissa", kCode);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const int n = 1 + row.e + row.m;
    const double y = top + gap * static_cast<double>(r);
    svg.text(left - 10, y + 18, row.name, {.size = 12, .anchor = "end", .mono = true});
    for (int i = 0; i < n; ++i) {
      const bool one = ((row.bits >> (n - 1 - i)) & 1U) != 0;
      const char* fill = i == 0 ? "#f6c6c6" : i <= row.e ? "#c9d8f2" : "#cfeccf";
      const double cx = left + cw * static_cast<double>(i);
      svg.rect(cx, y, cw, ch, fill, "#555", 0.8);
      svg.text(cx + cw / 2, y + 18, one ? "1" : "0", {.size = 12, .mono = true});
    }
    const auto bias = static_cast<int>((1U << (row.e - 1)) - 1);
    const auto exponent = static_cast<int>((row.bits >> row.m) & ((1U << row.e) - 1));
    svg.text(left, y + ch + 18,
             fmt::format("1 + {} + {} bits: exponent {} - {} = {}, stores {:.9g}", row.e, row.m,
                         exponent, bias, exponent - bias, row.stored),
             kNote);
  }
  return {"20-float-formats.svg", svg.str()};
}

}  // namespace

std::vector<Figure> cost_figures() { return {saved_bytes(), repeated_ids(), float_formats()}; }

}  // namespace tg::figures
