// tests/examples/plot_test.cpp — the decision-boundary picture of examples/common/plot.h:
// cell colours and placement, the points on top, and every error path.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "examples/common/plot.h"
#include "test_util.h"

namespace tg::examples {
namespace {

std::string temp_svg(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tapegrad_plot_" + name + "_" + std::to_string(::getpid()) + ".svg"))
      .string();
}

/// Writes the picture and returns the SVG text.
std::string draw(const std::string& name, const ProbabilityGrid& grid,
                 const LabeledPoints& points) {
  const std::string path = temp_svg(name);
  write_decision_boundary(path, "title <&>", grid, points);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::filesystem::remove(path);
  return s.str();
}

/// The y attribute of the first <rect> whose fill starts with `fill`, or -1.
double rect_y(const std::string& svg, const std::string& fill) {
  const std::regex re("<rect x=\"[0-9.]+\" y=\"([0-9.]+)\"[^>]*fill=\"" +
                      std::regex_replace(fill, std::regex(R"([()])"), R"(\$&)"));
  std::smatch m;
  return std::regex_search(svg, m, re) ? std::stod(m[1]) : -1;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

constexpr const char* kBlue = "rgb(98,160,";        // p = 0: 70% of #1f77b4 over white
constexpr const char* kRed = "rgb(226,104,";        // p = 1: 70% of #d62728 over white
constexpr const char* kWhite = "rgb(255,255,255)";  // p = 0.5: undecided

TEST(DecisionBoundaryTest, CellColoursGoFromBlueThroughWhiteToRed) {
  const std::string svg = draw(
      "colours",
      {.x_min = 0, .x_max = 3, .y_min = 0, .y_max = 1, .nx = 3, .ny = 1, .p = {0.0, 0.5, 1.0}}, {});
  EXPECT_EQ(count(svg, kBlue), 1u);
  EXPECT_EQ(count(svg, kWhite), 1u);
  EXPECT_EQ(count(svg, kRed), 1u);
  // Columns run left to right: blue first, then white, then red.
  EXPECT_LT(svg.find(kBlue), svg.find(kWhite));
  EXPECT_LT(svg.find(kWhite), svg.find(kRed));
  EXPECT_NE(svg.find("title &lt;&amp;&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(DecisionBoundaryTest, RowZeroIsAtTheBottom) {
  // p[0] is row 0 (y from y_min), p[1] row 1 above it; SVG y grows downwards.
  const std::string svg = draw(
      "rows", {.x_min = 0, .x_max = 1, .y_min = 0, .y_max = 1, .nx = 1, .ny = 2, .p = {0, 1}}, {});
  const double blue_y = rect_y(svg, kBlue), red_y = rect_y(svg, kRed);
  ASSERT_GE(blue_y, 0);
  ASSERT_GE(red_y, 0);
  EXPECT_GT(blue_y, red_y);
}

TEST(DecisionBoundaryTest, DrawsPointsInsideTheGridColouredByLabel) {
  const LabeledPoints points{
      .x = {0.2, 0.4, 0.6, 5.0}, .y = {0.5, 0.5, 0.5, 0.5}, .label = {0, 1, 1, 1}};
  const std::string svg = draw("points",
                               {.x_min = 0,
                                .x_max = 1,
                                .y_min = 0,
                                .y_max = 1,
                                .nx = 4,
                                .ny = 4,
                                .p = std::vector<double>(16, 0.25)},
                               points);
  EXPECT_EQ(count(svg, "<circle"), 3u);  // (5.0, 0.5) lies outside the grid
  EXPECT_EQ(count(svg, "fill=\"#1f77b4\" stroke"), 1u);
  EXPECT_EQ(count(svg, "fill=\"#d62728\" stroke"), 2u);
  // 16 cells, plus the background and the frame.
  EXPECT_EQ(count(svg, "<rect"), 18u);
  // The point at x = 0.2 of [0, 1] sits 20% into the 480-pixel-wide plot after the margin.
  EXPECT_NE(svg.find("cx=\"156.0\""), std::string::npos);
}

TEST(DecisionBoundaryTest, BadGridsAreErrors) {
  const std::string path = temp_svg("errors");
  EXPECT_TG_THROW(write_decision_boundary(path, "", {.nx = 0, .ny = 2}, {}), ValueError,
                  "write_decision_boundary", "0 x 2");
  EXPECT_TG_THROW(
      write_decision_boundary(path, "", {.x_min = 1, .x_max = 1, .nx = 1, .ny = 1, .p = {0.5}}, {}),
      ValueError, "write_decision_boundary", "x [1, 1]");
  EXPECT_TG_THROW(write_decision_boundary(path, "", {.nx = 2, .ny = 2, .p = {0.5}}, {}), ValueError,
                  "write_decision_boundary", "1 probabilities", "2 x 2");
  EXPECT_TG_THROW(write_decision_boundary(path, "", {.nx = 1, .ny = 1, .p = {1.5}}, {}), ValueError,
                  "write_decision_boundary", "probability 1.5");
  EXPECT_TG_THROW(write_decision_boundary(path, "", {.nx = 1, .ny = 1, .p = {NAN}}, {}), ValueError,
                  "write_decision_boundary", "probability nan");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DecisionBoundaryTest, BadPointsAreErrors) {
  const ProbabilityGrid grid{.nx = 1, .ny = 1, .p = {0.5}};
  const std::string path = temp_svg("point_errors");
  EXPECT_TG_THROW(write_decision_boundary(path, "", grid, {.x = {0.1}, .y = {}, .label = {0}}),
                  ValueError, "write_decision_boundary", "1 x, 0 y and 1 labels");
  EXPECT_TG_THROW(write_decision_boundary(path, "", grid, {.x = {0.1}, .y = {0.1}, .label = {2}}),
                  ValueError, "write_decision_boundary", "label 2", "0 or 1");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DecisionBoundaryTest, UnwritablePathIsAnError) {
  EXPECT_TG_THROW(
      write_decision_boundary("/proc/no/such/dir/b.svg", "", {.nx = 1, .ny = 1, .p = {0.5}}, {}),
      Error, "write_decision_boundary", "/proc/no/such/dir/b.svg.tmp");
}

}  // namespace
}  // namespace tg::examples
