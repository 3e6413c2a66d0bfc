// tools/course_figures.h — the course's figures, drawn by the project itself.
//
// tools/course_figures.cpp writes every figure source of docs/course/ into one directory:
// Graphviz DOT made by tg::to_dot from small real computations (NN-name-graph.dot, rendered
// to NN-name-graph.svg by scripts/figures.sh), and SVG written here from real tensors, ops,
// modules and optimizers (NN-name.svg). Each figure is a pure function of the code: seeded
// generators, float64 where values are drawn, fixed number formatting, no pointers, paths or
// times, so the same tree gives the same bytes on every machine and scripts/figures.sh
// --check can compare them with the committed ones.
//
// Labels inside a figure are symbols, shapes, numbers and names from the code: the English
// and the Chinese chapters share each figure, and the explanation lives in their captions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tg::figures {

/// One file of docs/images/course/: its name ("01-strides.svg") and its whole text.
struct Figure {
  std::string name;
  std::string text;
};

/// How a text label is drawn. Sizes are in SVG user units (pixels).
struct TextStyle {
  double size = 12;
  std::string_view anchor = "middle";  ///< start, middle or end
  std::string_view fill = "#222";
  bool bold = false;
  bool mono = false;  ///< code (monospace) instead of sans-serif
};

/// Code starting at (x, y) ("x.t()"), and a note in grey under it ("strides (1, 4)").
inline constexpr TextStyle kCode{.size = 12, .anchor = "start", .mono = true};
inline constexpr TextStyle kNote{.size = 11, .anchor = "start", .fill = "#555", .mono = true};

/// A tiny SVG writer: shapes in the order they are drawn, every number printed with one
/// decimal ("-0.0" printed as "0.0"), so a figure's bytes depend only on its values.
class Svg {
 public:
  Svg(double width, double height);

  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view stroke = "none", double stroke_width = 1);
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            bool dashed = false);
  /// A straight line with an arrowhead at (x2, y2).
  void arrow(double x1, double y1, double x2, double y2, std::string_view color,
             double width = 1.5);
  /// A quadratic curve through control point (cx, cy) with an arrowhead at (x2, y2).
  void curve_arrow(double x1, double y1, double cx, double cy, double x2, double y2,
                   std::string_view color, double width = 1.5);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double width = 1.5);
  void circle(double cx, double cy, double r, std::string_view fill,
              std::string_view stroke = "none", double stroke_width = 1);
  void ellipse(double cx, double cy, double rx, double ry, std::string_view fill,
               std::string_view stroke = "none", double stroke_width = 1);
  /// Text at (x, y) (the baseline); <, > and & are escaped.
  void text(double x, double y, std::string_view s, const TextStyle& style = {});

  /// The finished document.
  std::string str() const;

 private:
  void arrowhead(double x1, double y1, double x2, double y2, std::string_view color);

  double width_, height_;
  std::string body_;
};

/// "1.5": one decimal, and no negative zero.
std::string num(double v);
/// v with `decimals` decimals, and no negative zero: fixed(0.125, 2) == "0.12".
std::string fixed(double v, int decimals);
/// "#rrggbb" between white (t = 0) and `to` (t = 1), t clamped to [0, 1].
std::string blend(double t, int r, int g, int b);

/// Draws a rows x cols table of cells at (x, y), cell (i, j) filled with fill(i, j) and
/// labelled label(i, j) (an empty label draws no text).
void grid(Svg& svg, double x, double y, int64_t rows, int64_t cols, double cell_w, double cell_h,
          const std::function<std::string(int64_t, int64_t)>& fill,
          const std::function<std::string(int64_t, int64_t)>& label, double font = 11);

/// tg::to_dot's text of a graph with a white background (the docs may be shown on a dark
/// page), as every .dot figure is written.
std::string dot_figure(const std::string& to_dot_text);

// The figures of each part of the course, in chapter order.
std::vector<Figure> tensor_figures();     // chapters 1 to 3: tensors, autograd, gradcheck
std::vector<Figure> op_figures();         // chapters 4 to 12: one op each
std::vector<Figure> training_figures();   // chapters 13 to 17: modules to the tiny LM
std::vector<Figure> cost_figures();       // chapters 18 to 20: a step's cost, the bug zoo, formats
std::vector<Figure> attention_figures();  // chapters 21 to 23: tiles, the KV cache, recompute
std::vector<Figure> text_figures();       // chapter 24: BPE's merges
std::vector<Figure> distributed_figures();  // chapter 25: the buckets of DDP

}  // namespace tg::figures
