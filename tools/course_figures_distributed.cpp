// tools/course_figures_distributed.cpp — the figure of chapter 25: the buckets of the tiny
// LM's gradients (tiny_lm's default model), in the order backward completes them.
#include <fmt/format.h>

#include "core/core.h"
#include "nn/distributed/buckets.h"
#include "nn/nn.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

// One row per cap: the 24 parameters from the last (whose gradient backward completes first)
// to the first, one box each, coloured by the bucket assign_buckets puts it in; under each
// bucket, the all-reduce that leaves when its last gradient arrives.
Figure ddp_buckets() {
  const nn::TransformerConfig config{.vocab_size = 70,
                                     .context_length = 32,
                                     .d_model = 64,
                                     .n_layers = 3,
                                     .n_heads = 4,
                                     .d_ff = 192,
                                     .rope = true};
  Generator gen(25);
  const nn::TransformerLM model(config, gen);
  std::vector<int64_t> bytes;
  for (const Tensor& p : model.parameters()) bytes.push_back(p.numel() * 4);
  const auto n = static_cast<int64_t>(bytes.size());

  const double x0 = 120, bw = 34, bh = 26, row = 92, y0 = 64;
  const std::vector<int64_t> caps = {int64_t{128} << 10, int64_t{16} << 10};
  Svg svg(x0 + static_cast<double>(n) * bw + 30, y0 + static_cast<double>(caps.size()) * row + 36);
  svg.text(20, 22, "assign_buckets(bytes of tiny_lm's 24 parameters, cap)", kCode);
  svg.text(x0, 44, "backward completes the gradients from parameter 23 down to parameter 0  ->",
           kNote);
  const std::vector<std::string_view> colours = {"#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb",
                                                 "#fcbba1"};
  for (size_t r = 0; r < caps.size(); ++r) {
    const double y = y0 + static_cast<double>(r) * row;
    const std::vector<std::vector<size_t>> buckets = distributed::assign_buckets(bytes, caps[r]);
    svg.text(x0 - 10, y + 17, fmt::format("cap {} KiB", caps[r] >> 10),
             {.size = 11, .anchor = "end", .mono = true});
    double x = x0;
    for (size_t b = 0; b < buckets.size(); ++b) {
      const double start = x;
      int64_t total = 0;
      for (const size_t i : buckets[b]) {
        svg.rect(x + 1, y, bw - 2, bh, colours[b % colours.size()], "#555");
        svg.text(x + bw / 2, y + 17, fmt::format("{}", i), {.size = 11, .mono = true});
        total += bytes[i];
        x += bw;
      }
      // The bucket's all-reduce leaves as its last gradient arrives.
      svg.arrow(x - 4, y + bh + 4, x - 4, y + bh + 22, "#d62728", 1.2);
      if (r == 0 || buckets[b].size() > 1) {
        svg.text((start + x) / 2, y + bh + 36,
                 fmt::format("{:.0f} KiB", static_cast<double>(total) / 1024.0),
                 {.size = 10, .fill = "#555", .mono = true});
      }
    }
    svg.text(x0 + static_cast<double>(n) * bw + 4, y + 17, fmt::format("{}", buckets.size()),
             {.size = 11, .anchor = "start", .bold = true});
  }
  const double foot = y0 + static_cast<double>(caps.size()) * row + 14;
  svg.text(20, foot,
           "box: a parameter's index; colour: its bucket; red arrow: that bucket's all-reduce "
           "starts",
           kNote);
  return {"25-ddp-buckets.svg", svg.str()};
}

}  // namespace

std::vector<Figure> distributed_figures() { return {ddp_buckets()}; }

}  // namespace tg::figures
