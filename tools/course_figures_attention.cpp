// tools/course_figures_attention.cpp — the figures of chapters 21 and 22: which tiles the
// tiled kernel computes under the causal rule, and which cached keys a chunk of new queries
// sees.
#include <fmt/format.h>

#include "core/core.h"
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

}  // namespace

std::vector<Figure> attention_figures() { return {tiles(), chunk_mask()}; }

}  // namespace tg::figures
