// examples/common/plot.cpp — see plot.h. An SVG file is text: a <svg> element holding
// lines, polylines, circles and text at pixel coordinates; y grows downwards.
#include "examples/common/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "core/error.h"

namespace tg::examples {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 70, kRight = 170, kTop = 40, kBottom = 55;  // margins

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

/// The opening of an SVG picture: the <svg> element, a white background and the title
/// centred at x = title_x.
std::string svg_open(double width, double height, double title_x, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">{3}</text>\n",
      width, height, title_x, escape(title));
}

std::string tick_label(double v) { return fmt::format("{:.6g}", v); }

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees a
/// half-written picture. `who` names the caller in errors.
void write_atomically(const std::string& path, const std::string& text, const char* who) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    TG_CHECK(out.good(), Error, "{}: cannot write '{}'", who, tmp);
  }
  TG_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, Error, "{}: cannot rename '{}' to '{}'",
           who, tmp, path);
}

/// The cell colour for probability p: white mixed with blue (p < 0.5) or red (p > 0.5), the
/// more the surer the classifier is; at most 70% colour, so the points stay visible.
std::string cell_color(double p) {
  const double r0 = 31, g0 = 119, b0 = 180;  // #1f77b4, class 0
  const double r1 = 214, g1 = 39, b1 = 40;   // #d62728, class 1
  const bool one = p > 0.5;
  const double t = 0.7 * std::abs(2 * p - 1);
  auto mix = [&](double c) { return static_cast<int>(std::lround(255 + t * (c - 255))); };
  return fmt::format("rgb({},{},{})", mix(one ? r1 : r0), mix(one ? g1 : g0), mix(one ? b1 : b0));
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(target, 1);
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double power = std::pow(10.0, exponent);
  double m = 1;  // the step is m * 10^exponent
  for (double candidate : {1.0, 2.0, 5.0, 10.0}) {
    m = candidate;
    if (m * power >= raw) break;
  }
  const double step = m * power;
  // Tick k is k * m * 10^exponent, computed as one product or quotient of exact integers so
  // it is the double nearest the round number (0.3, not 0.1 + 0.1 + 0.1).
  const double scale = std::pow(10.0, std::abs(exponent));
  auto tick = [&](double k) { return exponent < 0 ? k * m / scale : k * m * scale; };
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); tick(k) <= hi + step * 1e-9; k += 1) {
    ticks.push_back(k == 0 ? 0.0 : tick(k));
  }
  return ticks;
}

void write_line_plot(const std::string& path, const std::string& title, const std::string& x_label,
                     const std::string& y_label, const std::vector<Series>& series) {
  // The data range over every finite point.
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& s : series) {
    TG_CHECK(s.x.size() == s.y.size(), ValueError,
             "write_line_plot: series '{}' has {} x values but {} y values", s.name, s.x.size(),
             s.y.size());
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  }
  if (!(x0 <= x1)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // nothing to draw
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) y0 -= 0.5, y1 += 0.5;
  const double pad = (y1 - y0) * 0.05;
  y0 -= pad, y1 += pad;

  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return kTop + (y1 - y) / (y1 - y0) * ph; };

  std::string svg = svg_open(kWidth, kHeight, kLeft + pw / 2, title);
  // Grid, ticks and their labels.
  for (double t : nice_ticks(x0, x1)) {
    if (t < x0 || t > x1) continue;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(t), kTop, kTop + ph, kTop + ph + 16, tick_label(t));
  }
  for (double t : nice_ticks(y0, y1)) {
    if (t < y0 || t > y1) continue;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, py(t), kLeft + pw, kLeft - 6, py(t) + 4, tick_label(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"black\"/>\n",
      kLeft, kTop, pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + pw / 2,
                     kHeight - 12, escape(x_label));
  svg += fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}"
      "</text>\n",
      kTop + ph / 2, escape(y_label));
  // The series, then the legend.
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    std::string points;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      if (s.points) {
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                           px(s.x[i]), py(s.y[i]), escape(s.color));
      } else {
        points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
      }
    }
    if (!points.empty()) {
      svg += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
          "points=\"{}\"/>\n",
          escape(s.color), points);
    }
    const double ly = kTop + 10 + 20 * static_cast<double>(k);
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"14\" height=\"4\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{:.1f}\">{}</text>\n",
        kLeft + pw + 12, ly - 2, escape(s.color), kLeft + pw + 32, ly + 4, escape(s.name));
  }
  svg += "</svg>\n";
  write_atomically(path, svg, "write_line_plot");
}

void write_decision_boundary(const std::string& path, const std::string& title,
                             const ProbabilityGrid& grid, const LabeledPoints& points) {
  const char* who = "write_decision_boundary";
  TG_CHECK(grid.nx > 0 && grid.ny > 0, ValueError, "{}: the grid is {} x {} cells, needs >= 1", who,
           grid.nx, grid.ny);
  TG_CHECK(grid.x_max > grid.x_min && grid.y_max > grid.y_min, ValueError,
           "{}: empty grid range x [{}, {}], y [{}, {}]", who, grid.x_min, grid.x_max, grid.y_min,
           grid.y_max);
  TG_CHECK(grid.p.size() == static_cast<size_t>(grid.nx * grid.ny), ValueError,
           "{}: {} probabilities for a {} x {} grid", who, grid.p.size(), grid.nx, grid.ny);
  for (double p : grid.p) {
    TG_CHECK(p >= 0 && p <= 1, ValueError, "{}: probability {} outside [0, 1]", who, p);
  }
  TG_CHECK(points.x.size() == points.y.size() && points.x.size() == points.label.size(), ValueError,
           "{}: {} x, {} y and {} labels", who, points.x.size(), points.y.size(),
           points.label.size());
  for (int64_t label : points.label) {
    TG_CHECK(label == 0 || label == 1, ValueError, "{}: label {}, expected 0 or 1", who, label);
  }

  // The plot area keeps the data's aspect ratio (a circle stays round), within limits.
  const double xr = grid.x_max - grid.x_min, yr = grid.y_max - grid.y_min;
  const double pw = 480, ph = std::round(std::clamp(pw * yr / xr, 160.0, 720.0));
  const double left = 60, top = 40, width = left + pw + 20, height = top + ph + 50;
  auto px = [&](double x) { return left + (x - grid.x_min) / xr * pw; };
  auto py = [&](double y) { return top + (grid.y_max - y) / yr * ph; };

  std::string svg = svg_open(width, height, left + pw / 2, title);
  // The cells, row j from the bottom; each a little wider than its share, so no hairline gaps.
  const double cw = pw / static_cast<double>(grid.nx), ch = ph / static_cast<double>(grid.ny);
  for (int64_t j = 0; j < grid.ny; ++j) {
    for (int64_t i = 0; i < grid.nx; ++i) {
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
          "fill=\"{}\"/>\n",
          left + static_cast<double>(i) * cw, top + ph - static_cast<double>(j + 1) * ch, cw + 0.5,
          ch + 0.5, cell_color(grid.p[static_cast<size_t>(j * grid.nx + i)]));
    }
  }
  // Ticks, frame, then the points on top.
  for (double t : nice_ticks(grid.x_min, grid.x_max)) {
    if (t < grid.x_min || t > grid.x_max) continue;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(t), top + ph, top + ph + 5, top + ph + 18, tick_label(t));
  }
  for (double t : nice_ticks(grid.y_min, grid.y_max)) {
    if (t < grid.y_min || t > grid.y_max) continue;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"black\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left - 5, py(t), left, left - 8, py(t) + 4, tick_label(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"black\"/>\n",
      left, top, pw, ph);
  for (size_t k = 0; k < points.x.size(); ++k) {
    const double x = points.x[k], y = points.y[k];
    if (!(x >= grid.x_min && x <= grid.x_max && y >= grid.y_min && y <= grid.y_max)) continue;
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" stroke=\"#222\" "
        "stroke-width=\"0.8\"/>\n",
        px(x), py(y), points.label[k] == 1 ? "#d62728" : "#1f77b4");
  }
  svg += "</svg>\n";
  write_atomically(path, svg, who);
}

}  // namespace tg::examples
