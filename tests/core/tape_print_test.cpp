// tests/core/tape_print_test.cpp — print_tape and to_dot show exactly the recorded graph.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"

namespace {

using tg::Context;
using tg::Function;
using tg::Tensor;

// The number of lines of `text` that contain `part`.
int count_lines_with(const std::string& text, const std::string& part) {
  int n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.substr(start, end - start).find(part) != std::string::npos) ++n;
    start = end + 1;
  }
  return n;
}

// The small graph of every test below: z = (x * w + c)^2, with x and w leaves that require
// grad and c a constant. Records the lines the three ops were called from.
struct SmallGraph {
  Tensor x, w, c, h, y, z;
  int line_mul = 0, line_add = 0, line_square = 0;
  SmallGraph() {
    x = tg::tensor({1.f, -2.f, 3.f, 0.5f, 1.f, -1.f}, {2, 3}).requires_grad_();
    w = tg::tensor({2.f, 1.f, 0.5f}).requires_grad_();
    c = tg::ones({2, 3});
    line_mul = __LINE__ + 1;
    h = tg::mul(x, w);
    line_add = __LINE__ + 1;
    y = tg::add(h, c);
    line_square = __LINE__ + 1;
    z = tg::mul(y, y);
  }
};

std::string small_graph_tape(const SmallGraph& g, const std::string& saved0,
                             const std::string& saved1, const std::string& saved2, int total) {
  return fmt::format(
      "3 ops on the tape, oldest first (backward runs them from the bottom up):\n"
      "  #0  mul  leaf (2, 3), leaf (3)    -> (2, 3) float32  {}  at tape_print_test.cpp:{}\n"
      "  #1  add  #0 (2, 3), const (2, 3)  -> (2, 3) float32  {}  at tape_print_test.cpp:{}\n"
      "  #2  mul  #1 (2, 3), #1 (2, 3)     -> (2, 3) float32  {}  at tape_print_test.cpp:{}\n"
      "total saved for backward: {} bytes\n",
      saved0, g.line_mul, saved1, g.line_add, saved2, g.line_square, total);
}

TEST(PrintTapeTest, ListsEachOpInTapeOrderWithShapesSourcesAndSavedBytes) {
  const SmallGraph g;
  // mul saves both inputs: x (6 floats) and w (3 floats) = 36 bytes; add saves nothing;
  // y * y saves y twice (2 x 24 bytes).
  EXPECT_EQ(tg::print_tape(g.z),
            small_graph_tape(g, "saves 36 bytes", "saves  0 bytes", "saves 48 bytes", 84));
  // Any tensor of the graph can be the root: h depends on one op only.
  EXPECT_EQ(tg::print_tape(g.h),
            fmt::format("1 op on the tape, oldest first (backward runs them from the bottom "
                        "up):\n"
                        "  #0  mul  leaf (2, 3), leaf (3)  -> (2, 3) float32  saves 36 bytes  at "
                        "tape_print_test.cpp:{}\n"
                        "total saved for backward: 36 bytes\n",
                        g.line_mul));
}

TEST(PrintTapeTest, BackwardFreesWhatWasSavedUnlessTheGraphIsRetained) {
  SmallGraph g;
  g.z.backward(tg::ones({2, 3}), /*retain_graph=*/true);
  EXPECT_EQ(tg::print_tape(g.z),
            small_graph_tape(g, "saves 36 bytes", "saves  0 bytes", "saves 48 bytes", 84));
  g.z.backward(tg::ones({2, 3}));
  const std::string freed = "freed by backward";
  EXPECT_EQ(tg::print_tape(g.z), small_graph_tape(g, freed, freed, freed, 0));
}

TEST(PrintTapeTest, ShowsOnlyTheOpsTheRootDependsOn) {
  const Tensor a = tg::tensor(std::vector<double>{1, 2}).requires_grad_();
  const Tensor b = a * a;
  const Tensor unrelated = a + a;  // recorded between b and c, but c does not use it
  const Tensor c = b + b;
  const std::string tape = tg::print_tape(c);
  EXPECT_EQ(count_lines_with(tape, "  #"), 2);
  EXPECT_THAT(tape, tg::testing::MessageHas("  #0  mul  leaf (2), leaf (2)  -> (2) float64",
                                            "  #1  add  #0 (2), #0 (2)      -> (2) float64",
                                            "saves 32 bytes", "total saved for backward: 32"));
  EXPECT_EQ(tape.find("#2"), std::string::npos);
  (void)unrelated;
}

// Two outputs, so inputs taken from it are named by output too (#k.j).
struct SplitHalves : Function<SplitHalves> {
  static constexpr std::string_view kName = "split_halves";
  static std::vector<Tensor> forward(Context<>&, const Tensor& x) {
    return {x.narrow(0, 0, 1).clone(), x.narrow(0, 1, 2).clone()};
  }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    Tensor dx = tg::zeros({3}, tg::kFloat64);
    dx.narrow(0, 0, 1).copy_(g[0]);
    dx.narrow(0, 1, 2).copy_(g[1]);
    return {dx};
  }
};

TEST(PrintTapeTest, NamesTheOutputOfAMultiOutputOpAndOmitsAnUnknownLocation) {
  const Tensor x = tg::tensor(std::vector<double>{1, 2, 3}).requires_grad_();
  const auto parts = SplitHalves::apply(x);  // apply(), not apply_at(): no location
  const int line = __LINE__ + 1;
  const Tensor y = tg::mul(parts[1], parts[1]);
  EXPECT_EQ(tg::print_tape(y),
            fmt::format("2 ops on the tape, oldest first (backward runs them from the bottom "
                        "up):\n"
                        "  #0  split_halves  leaf (3)            -> (1), (2) float64  saves  0 "
                        "bytes\n"
                        "  #1  mul           #0.1 (2), #0.1 (2)  -> (2) float64       saves 32 "
                        "bytes  at tape_print_test.cpp:{}\n"
                        "total saved for backward: 32 bytes\n",
                        line));
}

TEST(PrintTapeTest, ALeafHasAnEmptyTape) {
  const Tensor x = tg::zeros({2, 2}).requires_grad_();
  EXPECT_EQ(tg::print_tape(x),
            "0 ops on the tape: this tensor (shape (2, 2)) is a leaf, not the output of a "
            "recorded op\ntotal saved for backward: 0 bytes\n");
  tg::NoGradGuard no_grad;
  const Tensor y = x * x;  // not recorded
  EXPECT_THAT(tg::print_tape(y), ::testing::StartsWith("0 ops on the tape"));
}

TEST(PrintTapeTest, AnUndefinedTensorIsMisuse) {
  EXPECT_TG_THROW(tg::print_tape(Tensor()), MisuseError, "print_tape", "undefined");
  EXPECT_TG_THROW(tg::to_dot(Tensor()), MisuseError, "to_dot", "undefined");
}

TEST(PrintTapeTest, AChainOfManyOpsNeedsNoRecursion) {
  Tensor x = tg::ones({1}, tg::kFloat64).requires_grad_();
  const Tensor one = tg::ones({1}, tg::kFloat64);
  Tensor z = x;
  for (int i = 0; i < 20000; ++i) z = z * one;
  const std::string tape = tg::print_tape(z);
  EXPECT_EQ(count_lines_with(tape, " mul "), 20000);
  EXPECT_NE(tape.find("  #19999  mul  #19998 (1), const (1)  -> (1) float64  saves 16 bytes"),
            std::string::npos);
  EXPECT_NE(tape.find("total saved for backward: 320000 bytes"), std::string::npos);
  EXPECT_EQ(count_lines_with(tg::to_dot(z), " -> "), 20000);
}

// ---------------------------------------------------------------- to_dot

const char* const kSmallGraphDot =
    "digraph tape {{\n"
    "  node [fontname=\"Helvetica\", fontsize=10];\n"
    "  leaf0 [shape=ellipse, style=filled, fillcolor=lightblue, label=\"{}\"];\n"
    "  leaf1 [shape=ellipse, style=filled, fillcolor=lightblue, label=\"{}\"];\n"
    "  op0 [shape=box, style=filled, fillcolor=lightgray, label=\"#0 mul\\n(2, 3)\"];\n"
    "  op1 [shape=box, style=filled, fillcolor=lightgray, label=\"#1 add\\n(2, 3)\"];\n"
    "  op2 [shape=box, style=filled, fillcolor=darkolivegreen1, label=\"#2 mul\\n(2, 3)\"];\n"
    "  leaf0 -> op0;\n"
    "  leaf1 -> op0;\n"
    "  op0 -> op1;\n"
    "  op1 -> op2;\n"
    "  op1 -> op2;\n"
    "}}\n";

TEST(ToDotTest, DrawsLeavesAsEllipsesOpsAsBoxesAndEdgesFromInputsToOps) {
  const SmallGraph g;
  const std::string dot = tg::to_dot(g.z);
  EXPECT_EQ(dot,
            fmt::format(fmt::runtime(kSmallGraphDot), "leaf (2, 3) float32", "leaf (3) float32"));
  EXPECT_EQ(count_lines_with(dot, "shape=box"), 3);
  EXPECT_EQ(count_lines_with(dot, "shape=ellipse"), 2);
  EXPECT_EQ(count_lines_with(dot, " -> "), 5);  // one per input slot that carries a gradient
}

TEST(ToDotTest, AfterBackwardLeavesShowTheirValuesAndGradientNorm) {
  SmallGraph g;
  g.z.backward(tg::ones({2, 3}));
  // y = x * w + 1 = [[3, -1, 2.5], [2, 2, 0.5]], dy = 2y, dx = dy * w, dw = sum_rows(dy * x)
  ASSERT_EQ(g.x.grad().to_vector<float>(), (std::vector<float>{12, -2, 2.5, 8, 4, 0.5}));
  ASSERT_EQ(g.w.grad().to_vector<float>(), (std::vector<float>{8, 8, 14}));
  // |dx| = sqrt(234.5) = 15.313..., |dw| = sqrt(324) = 18; mean(x) = 2.5 / 6
  EXPECT_EQ(tg::to_dot(g.z),
            fmt::format(fmt::runtime(kSmallGraphDot),
                        "leaf (2, 3) float32\\nmin -2 mean 0.4167 max 3\\ngrad norm 15.31",
                        "leaf (3) float32\\nmin 0.5 mean 1.167 max 2\\ngrad norm 18"));
}

TEST(ToDotTest, ALeafRootIsOneEllipse) {
  const Tensor x = tg::zeros({4}).requires_grad_();
  EXPECT_EQ(tg::to_dot(x),
            "digraph tape {\n"
            "  node [fontname=\"Helvetica\", fontsize=10];\n"
            "  leaf0 [shape=ellipse, style=filled, fillcolor=lightblue, label=\"leaf (4) "
            "float32\"];\n"
            "}\n");
}

struct Quoted : Function<Quoted> {
  static constexpr std::string_view kName = "say \"hi\"\\";
  static Tensor forward(Context<>&, const Tensor& x) { return x.clone(); }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) { return {g[0]}; }
};

TEST(ToDotTest, EscapesQuotesAndBackslashesInNames) {
  const Tensor y = Quoted::apply(tg::zeros({1}).requires_grad_());
  EXPECT_NE(tg::to_dot(y).find("label=\"#0 say \\\"hi\\\"\\\\\\n(1)\""), std::string::npos)
      << tg::to_dot(y);
}

// Runs Graphviz on `dot_text`; returns its exit status (0: valid DOT).
int render(const std::string& dot_text, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem = fmt::format("{}/tapegrad_{}_{}", dir.string(), name, getpid());
  std::ofstream(stem + ".dot") << dot_text;
  const int status =
      std::system(fmt::format("dot -Tsvg '{}.dot' -o '{}.svg' 2>/dev/null", stem, stem).c_str());
  std::filesystem::remove(stem + ".dot");
  std::filesystem::remove(stem + ".svg");
  return status;
}

TEST(ToDotTest, GraphvizRendersIt) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Graphviz (dot) is not installed";
  }
  ASSERT_NE(render("digraph { a -> }\n", "broken"), 0);  // the check can fail
  SmallGraph g;
  EXPECT_EQ(render(tg::to_dot(g.z), "before"), 0);
  g.z.backward(tg::ones({2, 3}));
  EXPECT_EQ(render(tg::to_dot(g.z), "after"), 0);
  EXPECT_EQ(render(tg::to_dot(g.x), "leaf"), 0);
  const Tensor q = Quoted::apply(tg::zeros({1}).requires_grad_());
  EXPECT_EQ(render(tg::to_dot(q), "quoted"), 0);
}

}  // namespace
