// tools/course_figures_text.cpp — the figure of chapter 24: the worked example of nn/bpe.h,
// "春风 春雨 春风", its chunks as bytes and the tokens after each of the first four merges.
#include <fmt/format.h>

#include "core/core.h"
#include "nn/nn.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

// Chapter 24: BpeTokenizer::train learns 4 merges from the text; each row applies one more of
// them to every chunk (bpe::merge_pair, as training does) and draws each token as a box as
// wide as its bytes. Dashed lines mark where a character ends.
Figure bpe_merges() {
  const std::string_view text = "春风 春雨 春风";
  const nn::BpeTokenizer tok = nn::BpeTokenizer::train(text, {.vocab_size = 260, .special = {}});
  std::vector<std::vector<int32_t>> chunks;
  for (const std::string_view c : nn::pretokenize(text)) {
    std::vector<int32_t> bytes;
    for (const char b : c) bytes.push_back(static_cast<unsigned char>(b));
    chunks.push_back(bytes);
  }
  const auto levels = static_cast<int64_t>(tok.merges().size()) + 1;
  const double x0 = 150, y0 = 76, cw = 28, gap = 22, row = 36, bh = 24;
  double width = x0 + 20;
  for (const auto& c : chunks) width += static_cast<double>(c.size()) * cw + gap;
  Svg svg(width, y0 + static_cast<double>(levels) * row + 44);
  svg.text(20, 22, "BpeTokenizer::train(\"春风 春雨 春风\", {.vocab_size = 260})", kCode);

  // The characters over their bytes, and a dashed line where each one ends.
  double x = x0;
  const double bottom = y0 + static_cast<double>(levels) * row - (row - bh);
  for (const std::string_view c : nn::pretokenize(text)) {
    for (const char32_t cp : nn::utf8::decode(c, "bpe_merges")) {
      std::string s;
      nn::utf8::append(s, cp);
      const double w = static_cast<double>(s.size()) * cw;
      svg.text(x + w / 2, y0 - 12, cp == U' ' ? "␣" : s, {.size = 14});
      svg.line(x + w, y0 - 26, x + w, bottom + 4, "#999", 1, true);
      x += w;
    }
    x += gap;
  }
  svg.text(x0 - 10, y0 - 12, "characters", {.size = 11, .anchor = "end", .fill = "#555"});

  for (int64_t level = 0; level < levels; ++level) {
    const double y = y0 + static_cast<double>(level) * row;
    if (level == 0) {
      svg.text(x0 - 10, y + 16, "bytes", {.size = 11, .anchor = "end", .mono = true});
    } else {
      const nn::BpeMerge m = tok.merges()[static_cast<size_t>(level - 1)];
      const auto id = static_cast<int32_t>(255 + level);
      auto name = [](int32_t v) {
        return v < 256 ? fmt::format("{:02x}", v) : fmt::format("{}", v);
      };
      svg.text(x0 - 10, y + 16, fmt::format("({}, {}) -> {}", name(m.left), name(m.right), id),
               {.size = 11, .anchor = "end", .mono = true});
      for (auto& c : chunks) nn::bpe::merge_pair(c, m.left, m.right, id);
    }
    double cx = x0;
    for (const auto& c : chunks) {
      for (const int32_t id : c) {
        const double w = static_cast<double>(tok.token_bytes(id).size()) * cw;
        const bool fresh = level > 0 && id == 255 + level;
        svg.rect(cx + 1, y, w - 2, bh,
                 fresh       ? "#f4a582"
                 : id >= 256 ? "#c6dbef"
                             : "#f4f4f4",
                 "#555");
        svg.text(cx + w / 2, y + 16, id < 256 ? fmt::format("{:02x}", id) : fmt::format("{}", id),
                 {.size = 11, .mono = true});
        cx += w;
      }
      cx += gap;
    }
  }
  const double foot = y0 + static_cast<double>(levels) * row + 14;
  svg.text(20, foot,
           "orange: the token a merge makes; blue: earlier merges; dashed: a character ends",
           kNote);
  svg.text(20, foot + 16, "258 = 春 + e9, the first byte of both 风 and 雨", kNote);
  return {"24-bpe-merges.svg", svg.str()};
}

}  // namespace

std::vector<Figure> text_figures() { return {bpe_merges()}; }

}  // namespace tg::figures
