// tools/course_figures_svg.cpp — the SVG writer and helpers shared by the course's figures.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/course_figures.h"

namespace tg::figures {

std::string fixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s.starts_with('-')) s.erase(0, 1);
  return s;
}

std::string num(double v) { return fixed(v, 1); }

std::string blend(double t, int r, int g, int b) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [t](int c) { return static_cast<int>(std::lround(255 + (c - 255) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(r), mix(g), mix(b));
}

void grid(Svg& svg, double x, double y, int64_t rows, int64_t cols, double cell_w, double cell_h,
          const std::function<std::string(int64_t, int64_t)>& fill,
          const std::function<std::string(int64_t, int64_t)>& label, double font) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const double cx = x + static_cast<double>(j) * cell_w,
                   cy = y + static_cast<double>(i) * cell_h;
      svg.rect(cx, cy, cell_w, cell_h, fill(i, j), "#555", 0.8);
      const std::string s = label(i, j);
      if (!s.empty()) svg.text(cx + cell_w / 2, cy + cell_h / 2 + font * 0.35, s, {.size = font});
    }
  }
}

std::string dot_figure(const std::string& to_dot_text) {
  const std::string first = "digraph tape {\n";
  std::string out = to_dot_text;
  if (out.starts_with(first)) out.insert(first.size(), "  bgcolor=\"white\";\n");
  return out;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view stroke, double stroke_width) {
  body_ += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" "
      "stroke-width=\"{}\"/>\n",
      num(x), num(y), num(w), num(h), fill, stroke, num(stroke_width));
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
               bool dashed) {
  body_ += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      num(x1), num(y1), num(x2), num(y2), stroke, num(width),
      dashed ? " stroke-dasharray=\"4 3\"" : "");
}

// A filled triangle at (x2, y2) pointing away from (x1, y1).
void Svg::arrowhead(double x1, double y1, double x2, double y2, std::string_view color) {
  const double dx = x2 - x1, dy = y2 - y1, len = std::sqrt(dx * dx + dy * dy);
  if (len == 0) return;
  const double ux = dx / len, uy = dy / len, length = 8, half = 3.5;
  const double bx = x2 - ux * length, by = y2 - uy * length;
  body_ += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n", num(x2), num(y2),
                       num(bx - uy * half), num(by + ux * half), num(bx + uy * half),
                       num(by - ux * half), color);
}

void Svg::arrow(double x1, double y1, double x2, double y2, std::string_view color, double width) {
  // The shaft stops where the head begins, so a thick line does not poke through its tip.
  const double dx = x2 - x1, dy = y2 - y1, len = std::sqrt(dx * dx + dy * dy);
  const double cut = len > 8 ? (len - 6) / len : 1;
  line(x1, y1, x1 + dx * cut, y1 + dy * cut, color, width);
  arrowhead(x1, y1, x2, y2, color);
}

void Svg::curve_arrow(double x1, double y1, double cx, double cy, double x2, double y2,
                      std::string_view color, double width) {
  body_ += fmt::format(
      "<path d=\"M {} {} Q {} {} {} {}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
      num(x1), num(y1), num(cx), num(cy), num(x2), num(y2), color, num(width));
  arrowhead(cx, cy, x2, y2, color);  // a quadratic curve ends tangent to (control -> end)
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                   double width) {
  std::string p;
  for (const auto& [x, y] : points)
    p += fmt::format("{}{},{}", p.empty() ? "" : " ", num(x), num(y));
  body_ += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" "
      "stroke-linejoin=\"round\"/>\n",
      p, stroke, num(width));
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
                 double stroke_width) {
  body_ += fmt::format(
      "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
      num(cx), num(cy), num(r), fill, stroke, num(stroke_width));
}

void Svg::ellipse(double cx, double cy, double rx, double ry, std::string_view fill,
                  std::string_view stroke, double stroke_width) {
  body_ += fmt::format(
      "<ellipse cx=\"{}\" cy=\"{}\" rx=\"{}\" ry=\"{}\" fill=\"{}\" stroke=\"{}\" "
      "stroke-width=\"{}\"/>\n",
      num(cx), num(cy), num(rx), num(ry), fill, stroke, num(stroke_width));
}

void Svg::text(double x, double y, std::string_view s, const TextStyle& style) {
  std::string escaped;
  for (const char c : s) {
    if (c == '<') escaped += "&lt;";
    else if (c == '>') escaped += "&gt;";
    else if (c == '&') escaped += "&amp;";
    else escaped += c;
  }
  body_ += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}{}>{}</text>\n",
      num(x), num(y), num(style.size), style.anchor, style.fill,
      style.bold ? " font-weight=\"bold\"" : "", style.mono ? " font-family=\"monospace\"" : "",
      escaped);
}

std::string Svg::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "{2}</svg>\n",
      num(width_), num(height_), body_);
}

}  // namespace tg::figures
