// tools/course_figures_attention.cpp — the figures of chapters 21 to 23: which tiles the
// tiled kernel computes under the causal rule, which cached keys a chunk of new queries
// sees, and what the tape keeps with and without recomputed blocks.
#include <fmt/format.h>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

// Chapter 21: T = 12 queries and keys in tiles of 4, causal. A tile is skipped (no key of it
// visible to any of its queries), full (every pair visible) or on the diagonal (both). The
// pairs come from the attention op itself: with q = 0 every visible key has the same score,
// so P_ij = 1 / (i + 1) where visible and exactly 0 where masked.
Figure tiles() {
  const int64_t T = 12, tile = 4;
  const Tensor q = zeros({1, 1, T, 2}, kFloat64), k = zeros({1, 1, T, 2}, kFloat64);
  const Tensor v = eye(T, T, kFloat64).view({1, 1, T, T});
  Tensor p;
  {
    AttentionAlgorithmGuard tiled({AttentionKernel::kTiled, tile, tile});
    p = scaled_dot_product_attention(q, k, v, Tensor(), /*causal=*/true).view({T, T});
  }
  Svg svg(560, 360);
  svg.text(20, 22, "causal attention, T = 12, tiles of 4 x 4", kCode);
  const double x0 = 60, y0 = 70, c = 20;
  svg.text(x0 + T * c / 2, y0 - 26, "keys j (tiles of tile_k)", {.size = 11});
  svg.text(4, y0 + T * c / 2 + 4, "queries i", {.size = 11, .anchor = "start"});
  for (int64_t ti = 0; ti < T / tile; ++ti) {
    for (int64_t tj = 0; tj < T / tile; ++tj) {
      int visible = 0;
      for (int64_t i = ti * tile; i < (ti + 1) * tile; ++i)
        for (int64_t j = tj * tile; j < (tj + 1) * tile; ++j) visible += p.at<double>({i, j}) > 0;
      const char* fill = visible == 0 ? "#e4e4e4" : visible == tile * tile ? "#9ecae1" : "#deebf7";
      const double tx = x0 + static_cast<double>(tj * tile) * c;
      const double ty = y0 + static_cast<double>(ti * tile) * c;
      svg.rect(tx, ty, tile * c, tile * c, fill, "#333", 1.6);
      for (int64_t i = 0; i < tile; ++i) {
        for (int64_t j = 0; j < tile; ++j) {
          const bool on = p.at<double>({ti * tile + i, tj * tile + j}) > 0;
          if (on) {
            svg.circle(tx + (static_cast<double>(j) + 0.5) * c,
                       ty + (static_cast<double>(i) + 0.5) * c, 3, "#3171b5");
          }
        }
      }
      if (visible == 0) {
        svg.text(tx + tile * c / 2, ty + tile * c / 2 + 4, "skipped", {.size = 10, .fill = "#777"});
      }
    }
  }
  for (int64_t t = 0; t < T; t += tile) {
    svg.text(x0 + static_cast<double>(t) * c + 2, y0 - 6, fmt::format("{}", t),
             {.size = 10, .anchor = "start", .fill = "#555"});
    svg.text(x0 - 6, y0 + static_cast<double>(t) * c + 12, fmt::format("{}", t),
             {.size = 10, .anchor = "end", .fill = "#555"});
  }
  const double lx = x0 + T * c + 30;
  svg.rect(lx, 80, 18, 14, "#9ecae1", "#333");
  svg.text(lx + 26, 92, "every pair visible", {.size = 11, .anchor = "start"});
  svg.rect(lx, 104, 18, 14, "#deebf7", "#333");
  svg.text(lx + 26, 116, "on the diagonal: some masked", {.size = 11, .anchor = "start"});
  svg.rect(lx, 128, 18, 14, "#e4e4e4", "#333");
  svg.text(lx + 26, 140, "no pair visible: skipped", {.size = 11, .anchor = "start"});
  svg.text(lx, 180, "forward: a query tile (a row)", {.size = 11, .anchor = "start"});
  svg.text(lx, 196, "merges its key tiles left to", {.size = 11, .anchor = "start"});
  svg.text(lx, 212, "right, up to the diagonal", {.size = 11, .anchor = "start"});
  svg.text(lx, 240, "backward: a key tile (a column)", {.size = 11, .anchor = "start"});
  svg.text(lx, 256, "sums dk, dv over its query", {.size = 11, .anchor = "start"});
  svg.text(lx, 272, "tiles from the diagonal down", {.size = 11, .anchor = "start"});
  svg.text(20, 340, "dots: the pairs (i, j) the op weighs, read off P with q = 0 and v = I", kNote);
  return {"21-tiles.svg", svg.str()};
}

// Chapter 22: 5 positions in the cache, then a chunk of 3 new queries (positions 5, 6, 7):
// query i of the chunk sees keys j <= 5 + i of the 8 now cached: the bool mask the cached
// forward builds (CausalSelfAttention::forward with a cache, nn/transformer.cpp).
Figure chunk_mask() {
  const int64_t start = 5, T = 3, L = start + T;
  Svg svg(520, 250);
  svg.text(20, 22, "a chunk of T = 3 new tokens after start = 5 cached positions", kCode);
  const double x0 = 110, y0 = 80, cw = 40, ch = 34;
  svg.text(x0 + L * cw / 2, y0 - 30, "cached keys j = 0 .. start + T - 1", {.size = 11});
  for (int64_t j = 0; j < L; ++j) {
    svg.text(x0 + (static_cast<double>(j) + 0.5) * cw, y0 - 8, fmt::format("{}", j),
             {.size = 10, .fill = j < start ? "#555" : "#b5312f"});
  }
  for (int64_t i = 0; i < T; ++i) {
    svg.text(x0 - 10, y0 + (static_cast<double>(i) + 0.5) * ch + 4,
             fmt::format("i = {} (pos {})", i, start + i), {.size = 10, .anchor = "end"});
    for (int64_t j = 0; j < L; ++j) {
      const bool visible = j <= start + i;
      const double cx = x0 + static_cast<double>(j) * cw, cy = y0 + static_cast<double>(i) * ch;
      svg.rect(cx, cy, cw, ch, visible ? (j < start ? "#9ecae1" : "#f4a582") : "#e4e4e4", "#888",
               0.8);
      svg.text(cx + cw / 2, cy + ch / 2 + 4, visible ? "1" : "0",
               {.size = 11, .fill = visible ? "#222" : "#999"});
    }
  }
  svg.line(x0 + start * cw, y0 - 4, x0 + start * cw, y0 + T * ch + 4, "#b5312f", 1.6);
  svg.text(20, 210, "blue: keys from the cache; orange: the chunk's own keys, written at 5..7;",
           kNote);
  svg.text(20, 226, "grey: after the query. keep(i, j) = j <= start + i, the causal rule shifted",
           kNote);
  return {"22-chunk-mask.svg", svg.str()};
}

// Chapter 23: the bytes a TransformerLM's tape keeps for the backward (nn::measure_step),
// for 1, 2 and 4 blocks, plain and with every block recomputed (d_model 16, 4 heads, a
// batch of 3 x 8 tokens, float32).
Figure recompute_saved() {
  const int64_t layers[] = {1, 2, 4};
  double saved[3][2];
  for (int l = 0; l < 3; ++l) {
    for (int r = 0; r < 2; ++r) {
      Generator gen(23);
      nn::TransformerLM model({.vocab_size = 13,
                               .context_length = 8,
                               .d_model = 16,
                               .n_layers = layers[l],
                               .n_heads = 4,
                               .d_ff = 24},
                              gen);
      model.set_recompute_blocks(r == 1);
      const Tensor ids = randint(0, 13, {3, 8}, kInt64, gen);
      saved[l][r] = static_cast<double>(nn::measure_step(sum(model(ids))).saved_bytes) / 1024;
    }
  }
  const double top = saved[2][0];
  Svg svg(520, 305);
  svg.text(20, 22, "bytes the tape keeps for the backward (KiB)", kCode);
  const double x0 = 70, base = 240, height = 180, bw = 48;
  svg.line(x0 - 10, base, 470, base, "#333");
  for (int l = 0; l < 3; ++l) {
    const double gx = x0 + l * 140;
    for (int r = 0; r < 2; ++r) {
      const double h = height * saved[l][r] / top;
      const double x = gx + r * (bw + 8);
      svg.rect(x, base - h, bw, h, r == 0 ? "#9ecae1" : "#f4a582", "#555");
      svg.text(x + bw / 2, base - h - 6, fixed(saved[l][r], 1), {.size = 11});
    }
    svg.text(gx + bw + 4, base + 18, fmt::format("{} block{}", layers[l], layers[l] > 1 ? "s" : ""),
             {.size = 11});
  }
  svg.rect(80, 44, 16, 12, "#9ecae1", "#555");
  svg.text(102, 55, "plain", {.size = 11, .anchor = "start"});
  svg.rect(80, 64, 16, 12, "#f4a582", "#555");
  svg.text(102, 75, "set_recompute_blocks(true)", {.size = 11, .anchor = "start"});
  svg.text(20, 275, "d_model 16, 4 heads, batch 3 x 8 tokens, float32;", kNote);
  svg.text(20, 291, "a recomputed block keeps only its input: 1.5 KiB", kNote);
  return {"23-recompute-saved.svg", svg.str()};
}

}  // namespace

std::vector<Figure> attention_figures() { return {tiles(), chunk_mask(), recompute_saved()}; }

}  // namespace tg::figures
