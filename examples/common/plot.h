// examples/common/plot.h — small SVG pictures written by hand: no plotting library needed,
// and any browser shows them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tg::examples {

/// One curve (or, with `points`, a set of markers) of a line plot.
struct Series {
  std::string name;   ///< shown in the legend
  std::string color;  ///< any SVG colour: "#1f77b4", "crimson"
  std::vector<double> x, y;
  bool points = false;  ///< markers instead of a polyline
};

/// Writes an SVG line plot of `series` with axes, ticks and a legend. Non-finite values are
/// skipped; an empty plot still writes a valid file. Throws tg::ValueError if x and y of a
/// series differ in length, and tg::Error if the file cannot be written.
void write_line_plot(const std::string& path, const std::string& title, const std::string& x_label,
                     const std::string& y_label, const std::vector<Series>& series);

/// P(class 1) of a binary classifier, sampled at the centres of an nx x ny grid of cells
/// covering [x_min, x_max] x [y_min, y_max]: p[j * nx + i] is the cell in column i (from
/// x_min rightwards) and row j (from y_min upwards).
struct ProbabilityGrid {
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  int64_t nx = 0, ny = 0;
  std::vector<double> p = {};  ///< nx * ny values in [0, 1]
};

/// Data points with their class, 0 or 1.
struct LabeledPoints {
  std::vector<double> x = {}, y = {};
  std::vector<int64_t> label = {};
};

/// Writes an SVG "decision boundary" picture: each grid cell is filled with a colour that
/// goes from blue (P(class 1) = 0, sure of class 0) through white (0.5, the boundary) to red
/// (1, sure of class 1), and the points are drawn on top, blue for class 0 and red for
/// class 1, with a dark outline. Points outside the grid are left out. Throws tg::ValueError
/// for an empty or inverted grid, p of the wrong size or outside [0, 1], points whose
/// coordinate and label vectors differ in length or a label other than 0 and 1; tg::Error if
/// the file cannot be written.
void write_decision_boundary(const std::string& path, const std::string& title,
                             const ProbabilityGrid& grid, const LabeledPoints& points);

/// Round tick positions covering [lo, hi]: about `target` of them at 1, 2 or 5 times a power
/// of ten (the steps people read easily).
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

}  // namespace tg::examples
