// tools/course_figures_training.cpp — the figures of chapters 13 to 17: a module tree with
// its parameter names, three optimizers on a quadratic bowl, the training loop around a real
// run of it, a Transformer block's graph, and the sampling distribution at three
// temperatures.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

// Chapter 13's example model (examples/course/modules_tree.cpp): x -> LayerNorm -> MLP -> *
// scale, with one parameter of its own and two child modules.
class Classifier : public nn::UnaryModule {
 public:
  explicit Classifier(Generator& gen) : UnaryModule("Classifier"), mlp({8, 16, 4}, {}, gen) {
    register_module("norm", norm);
    register_module("mlp", mlp);
    register_parameter("scale", scale, ones({4}));
  }
  Tensor forward(const Tensor& x) override { return mul(mlp(norm(x)), scale); }

  nn::LayerNorm norm{8};
  nn::MLP mlp;
  Tensor scale;
};

// Chapter 13: the module tree, each parameter under the module that registered it, and the
// dotted name that named_parameters() (and state_dict()) gives it: the path through the tree.
Figure module_tree() {
  Generator gen(13);
  const Classifier model(gen);
  struct Row {
    int depth;
    std::string name, type, shape, dotted;
  };
  std::vector<Row> rows;
  const auto params = model.named_parameters();
  for (const auto& [path, module] : model.named_modules()) {
    const int depth =
        path.empty() ? 0 : 1 + static_cast<int>(std::count(path.begin(), path.end(), '.'));
    const std::string last = path.substr(path.find_last_of('.') + 1);
    rows.push_back({depth, path.empty() ? "model" : last, module->type_name(), "", ""});
    for (const auto& [dotted, p] : params) {
      const size_t dot = dotted.find_last_of('.');
      const std::string owner = dot == std::string::npos ? "" : dotted.substr(0, dot);
      if (owner != path) continue;
      rows.push_back({depth + 1, dotted.substr(dot == std::string::npos ? 0 : dot + 1), "",
                      fmt::format("{}", p.shape()), dotted});
    }
  }

  const double row_h = 22, top = 48, indent = 26;
  Svg svg(520, top + static_cast<double>(rows.size()) * row_h + 16);
  svg.text(320, 24, "named_parameters()", kCode);
  std::vector<double> parent_y(rows.size() + 1, 0.0);  // the last module row at each depth
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const double y = top + static_cast<double>(r) * row_h, x = 20 + row.depth * indent;
    if (row.depth > 0) {
      const double px = 20 + (row.depth - 1) * indent + 6;
      svg.line(px, parent_y[static_cast<size_t>(row.depth - 1)] + 6, px, y - 4, "#aaa");
      svg.line(px, y - 4, x - 4, y - 4, "#aaa");
    }
    if (row.dotted.empty()) {  // a module
      parent_y[static_cast<size_t>(row.depth)] = y - 4;
      svg.rect(x - 2, y - 15, 8 + 7.3 * static_cast<double>(row.name.size() + row.type.size() + 1),
               20, "#e0def4", "none");
      svg.text(x + 2, y, row.name, {.size = 12, .anchor = "start", .bold = true, .mono = true});
      svg.text(x + 2 + 7.3 * static_cast<double>(row.name.size() + 1), y, row.type,
               {.size = 12, .anchor = "start", .fill = "#6e6a86", .mono = true});
    } else {  // a parameter: its shape, and its name in named_parameters()
      svg.rect(x - 2, y - 15, 8 + 7.3 * static_cast<double>(row.name.size()), 20, "#f6c177",
               "none");
      svg.text(x + 2, y, row.name, kCode);
      svg.text(x + 10 + 7.3 * static_cast<double>(row.name.size()), y, row.shape, kNote);
      svg.line(250, y - 4, 312, y - 4, "#ddd", 1, true);
      svg.text(320, y, row.dotted,
               {.size = 12, .anchor = "start", .fill = "#b4637a", .mono = true});
    }
  }
  return {"13-module-tree.svg", svg.str()};
}

// Chapter 14: 30 steps of three real optimizers on f(w) = (w0^2 + 20 w1^2) / 2, a bowl whose
// curvatures differ 20-fold, from (-4, 0.8); the ellipses are level sets of f.
Figure optimizer_paths() {
  struct Run {
    std::string label, colour;
    std::function<std::unique_ptr<nn::Optimizer>(const Tensor&)> make;
  };
  const std::vector<Run> runs = {
      {"SGD(lr=0.09)", "#d62728",
       [](const Tensor& w) {
         return std::make_unique<nn::SGD>(std::vector{w}, nn::SGDOptions{.lr = 0.09});
       }},
      {"SGD(lr=0.02, momentum=0.9)", "#1f77b4",
       [](const Tensor& w) {
         return std::make_unique<nn::SGD>(std::vector{w},
                                          nn::SGDOptions{.lr = 0.02, .momentum = 0.9});
       }},
      {"AdamW(lr=0.2, weight_decay=0)", "#2ca02c",
       [](const Tensor& w) {
         return std::make_unique<nn::AdamW>(std::vector{w},
                                            nn::AdamWOptions{.lr = 0.2, .weight_decay = 0});
       }},
  };
  const double x_lo = -4.5, x_hi = 4.5, y_lo = -1.2, y_hi = 1.2, scale = 75;
  auto px = [&](double v) { return 30 + (v - x_lo) * scale; };
  auto py = [&](double v) { return 60 + (y_hi - v) * scale; };
  Svg svg(px(x_hi) + 30, py(y_lo) + 20);
  svg.text(30, 22, "f(w) = (w0^2 + 20 w1^2) / 2,  w = (-4, 0.8),  30 steps", kCode);
  svg.rect(px(x_lo), py(y_hi), (x_hi - x_lo) * scale, (y_hi - y_lo) * scale, "none", "#999");
  for (const double r : {0.5, 1.0, 2.0, 3.0, 4.0}) {
    svg.ellipse(px(0), py(0), r * scale, r / std::sqrt(20.0) * scale, "none", "#ddd");
  }
  svg.circle(px(0), py(0), 3, "#333");
  double legend_x = 30;
  for (const Run& run : runs) {
    const Tensor w = tensor({-4.0, 0.8}).requires_grad_();
    const Tensor curvature = tensor({1.0, 20.0});
    const std::unique_ptr<nn::Optimizer> opt = run.make(w);
    std::vector<std::pair<double, double>> path;
    for (int t = 0; t <= 30; ++t) {
      path.emplace_back(px(w.detach().at<double>({0})), py(w.detach().at<double>({1})));
      if (t == 30) break;
      const Tensor f = mul(sum(mul(mul(w, w), curvature)), 0.5);
      opt->zero_grad();
      f.backward();
      opt->step();
    }
    svg.polyline(path, run.colour, 1.6);
    for (const auto& [x, y] : path) svg.circle(x, y, 2.2, run.colour);
    svg.line(legend_x, 40, legend_x + 20, 40, run.colour, 3);
    svg.text(legend_x + 25, 44, run.label, {.size = 11, .anchor = "start", .mono = true});
    legend_x += 25 + 7 * static_cast<double>(run.label.size()) + 20;
  }
  return {"14-optimizer-paths.svg", svg.str()};
}

// Chapter 15: the five steps as a cycle, around the loss of a real run of them: an MLP
// (2 -> 8 -> 2, float64) classifying two clouds of 64 points, full batch, SGD.
Figure training_loop() {
  Generator gen(15);
  nn::MLP model({2, 8, 2}, {.dtype = kFloat64}, gen);
  const Tensor offset = tensor({1.0, 1.0, -1.0, -1.0}, {2, 2});  // the two clouds' centres
  std::vector<int64_t> classes(64, 0);
  std::fill(classes.begin() + 32, classes.end(), 1);
  const Tensor labels = tensor(classes, {64});
  const Tensor x = add(randn({64, 2}, kFloat64, gen), index_select(offset, 0, labels));
  nn::SGD opt(model.parameters(), {.lr = 0.5});
  std::vector<double> losses;
  for (int t = 0; t < 40; ++t) {
    const Tensor pred = model(x);
    const Tensor loss = cross_entropy(pred, labels);
    opt.zero_grad();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }

  Svg svg(720, 410);
  const double cx = 360, cy = 240;
  struct Step {
    std::string code, effect;
    double x, y;
  };
  const Step steps[] = {
      {"pred = model(x)", "x -> pred, grad_fn", cx, 40},
      {"loss = cross_entropy(pred, y)", "L_t", cx + 215, 140},
      {"opt.zero_grad()", "p.grad() = {}", cx + 160, 360},
      {"loss.backward()", "p.grad() = dL_t/dp", cx - 160, 360},
      {"opt.step()", "p = p - lr * u_t", cx - 215, 140},
  };
  const double bw = 220, bh = 46;
  for (size_t k = 0; k < 5; ++k) {
    const Step& a = steps[k];
    const Step& b = steps[(k + 1) % 5];
    // From the edge of box a to the edge of box b, along the line between their centres.
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double ta =
        std::min(bw / 2 / std::max(std::abs(dx), 1e-9), bh / 2 / std::max(std::abs(dy), 1e-9));
    svg.arrow(a.x + dx * ta * 1.08, a.y + dy * ta * 1.08, b.x - dx * ta * 1.12,
              b.y - dy * ta * 1.12, "#777", 2);
  }
  for (size_t k = 0; k < 5; ++k) {
    const Step& s = steps[k];
    svg.rect(s.x - bw / 2, s.y - bh / 2, bw, bh, k == 3 ? "#fbe0e6" : "#e0def4", "#888");
    svg.circle(s.x - bw / 2, s.y - bh / 2, 10, "#6e6a86");
    svg.text(s.x - bw / 2, s.y - bh / 2 + 4, fmt::format("{}", k + 1),
             {.size = 11, .fill = "white", .bold = true});
    svg.text(s.x, s.y - 3, s.code, {.size = 12, .bold = true, .mono = true});
    svg.text(s.x, s.y + 14, s.effect, {.size = 11, .fill = "#555", .mono = true});
  }
  // The loss of the real run, in the middle of the cycle.
  const double gx = cx - 90, gy = cy - 60, gw = 180, gh = 110;
  const double top = *std::max_element(losses.begin(), losses.end());
  svg.rect(gx, gy, gw, gh, "white", "#bbb");
  std::vector<std::pair<double, double>> curve;
  for (size_t t = 0; t < losses.size(); ++t) {
    curve.emplace_back(gx + static_cast<double>(t) / static_cast<double>(losses.size() - 1) * gw,
                       gy + gh - losses[t] / top * gh);
  }
  svg.polyline(curve, "#c4314b", 2);
  svg.text(gx - 4, gy + 10, fixed(top, 2), {.size = 10, .anchor = "end"});
  svg.text(gx - 4, gy + gh, "0", {.size = 10, .anchor = "end"});
  svg.text(gx + gw / 2, gy + gh + 16, fmt::format("t = 0 .. {}", losses.size() - 1),
           {.size = 11, .mono = true});
  svg.text(gx + 6, gy + 14, "L_t",
           {.size = 11, .anchor = "start", .fill = "#c4314b", .mono = true});
  return {"15-training-loop.svg", svg.str()};
}

// Chapter 16: the graph of one pre-norm block (d_model 8, 2 heads, d_ff 16, RoPE) on x (1, 4, 8).
Figure block_graph() {
  Generator gen(16);
  const nn::TransformerConfig config{.d_model = 8, .n_heads = 2, .d_ff = 16, .rope = true};
  nn::TransformerBlock block(config, gen);
  const Tensor x = randn({1, 4, 8}, kFloat32, gen).requires_grad_();
  return {"16-block-graph.dot", dot_figure(to_dot(block(x)))};
}

// Chapter 17: one distribution over 8 characters at temperatures 0.5, 1 and 2, and with
// top-k = 3 at temperature 1: softmax(l / tau) over all, or over the k largest, logits.
Figure sampling() {
  const std::vector<std::string> chars = {"e", "a", "' '", "t", "s", "o", "r", "q"};
  const Tensor logits = tensor({2.5, 1.8, 1.5, 1.0, 0.3, -0.2, -0.8, -1.5});
  struct Panel {
    std::string title;
    std::vector<double> p;
  };
  std::vector<Panel> panels;
  for (const double tau : {0.5, 1.0, 2.0}) {
    panels.push_back(
        {fmt::format("tau = {:g}", tau), softmax(div(logits, tau), -1).to_vector<double>()});
  }
  const int64_t k = 3;  // the logits are sorted, so the k largest are the first k
  std::vector<double> top_k = softmax(logits.narrow(0, 0, k), -1).to_vector<double>();
  top_k.resize(chars.size(), 0.0);
  panels.push_back({fmt::format("tau = 1, top_k = {}", k), top_k});

  Svg svg(740, 210);
  const double zero_y = 160, scale = 130, w = 16, gap = 5;
  for (size_t n = 0; n < panels.size(); ++n) {
    const double x0 = 20 + static_cast<double>(n) * 178;
    svg.text(x0, 22, panels[n].title, kCode);
    for (size_t i = 0; i < chars.size(); ++i) {
      const double v = panels[n].p[i], bx = x0 + static_cast<double>(i) * (w + gap);
      svg.rect(bx, zero_y - v * scale, w, v * scale, i < 3 ? "#f6c177" : "#9ccfd8");
      if (v >= 0.005) svg.text(bx + w / 2, zero_y - v * scale - 4, fixed(v, 2), {.size = 8});
      svg.text(bx + w / 2, zero_y + 16, chars[i], {.size = 10, .mono = true});
    }
    svg.line(x0 - 3, zero_y, x0 + 8 * (w + gap), zero_y, "#777");
  }
  svg.text(20, 200, "softmax(logits / tau), logits = (2.5, 1.8, 1.5, 1, 0.3, -0.2, -0.8, -1.5)",
           kNote);
  return {"17-sampling.svg", svg.str()};
}

}  // namespace

std::vector<Figure> training_figures() {
  return {module_tree(), optimizer_paths(), training_loop(), block_graph(), sampling()};
}

}  // namespace tg::figures
