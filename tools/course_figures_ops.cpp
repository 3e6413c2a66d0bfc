// tools/course_figures_ops.cpp — the figures of chapters 4 to 12, one op each: the graphs of
// Linear (fused and composed) and of a composed RMSNorm, the activations and their
// derivatives, softmax + cross-entropy's gradient, embedding's scatter-add, LayerNorm next to
// RMSNorm, dropout's mask, RoPE's rotations and the causal attention weights.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/core.h"
#include "ops/ops.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

// Chapter 4: y = linear(x, W, b) (x (4, 3), W (2, 3), b (2)) and its MSE loss, as one fused
// op; and the same computation from chapter 2's primitives, x @ W^T + b.
std::vector<Figure> linear_graphs() {
  Generator gen(4);
  const Tensor x = randn({4, 3}, kFloat32, gen).requires_grad_();
  const Tensor w = randn({2, 3}, kFloat32, gen).requires_grad_();
  const Tensor b = randn({2}, kFloat32, gen).requires_grad_();
  const Tensor target = randn({4, 2}, kFloat32, gen);
  const Tensor fused = mse_loss(linear(x, w, b), target);
  const Tensor composed = mse_loss(add(matmul(x, w.t()), b), target);
  return {{"04-linear-graph.dot", dot_figure(to_dot(fused))},
          {"04-linear-composed-graph.dot", dot_figure(to_dot(composed))}};
}

// Chapter 5: each activation and its derivative on [-4, 4]; the derivative is what the real
// backward returns for dy = 1 (relu's at 0 is the sub-gradient it chose).
Figure activations() {
  struct Curve {
    std::string name, colour;
    Tensor (*fn)(const Tensor&);
  };
  const Curve curves[] = {
      {"relu", "#d62728", [](const Tensor& x) { return relu(x); }},
      {"sigmoid", "#1f77b4", [](const Tensor& x) { return sigmoid(x); }},
      {"tanh", "#2ca02c", [](const Tensor& x) { return tanh(x); }},
      {"silu", "#9467bd", [](const Tensor& x) { return silu(x); }},
      {"gelu", "#ff7f0e", [](const Tensor& x) { return gelu(x); }},
  };
  Svg svg(660, 300);
  struct Panel {
    double x0, lo, hi;
    std::string title;
  };
  const Panel panels[] = {{50, -1.5, 4, "f(x)"}, {380, -0.25, 1.25, "f'(x) = x.grad()"}};
  const double width = 250, top = 50, bottom = 260;
  for (const Panel& p : panels) {
    auto py = [&](double v) { return bottom - (v - p.lo) / (p.hi - p.lo) * (bottom - top); };
    svg.rect(p.x0, top, width, bottom - top, "none", "#999");
    svg.line(p.x0, py(0), p.x0 + width, py(0), "#bbb");
    svg.line(p.x0 + width / 2, top, p.x0 + width / 2, bottom, "#bbb");
    svg.text(p.x0, top - 8, p.title, kCode);
    for (const double v : {p.lo, 0.0, p.hi}) {
      svg.text(p.x0 - 4, py(v) + 4, fmt::format("{:g}", v), {.size = 10, .anchor = "end"});
    }
    for (const double v : {-4.0, 0.0, 4.0}) {
      svg.text(p.x0 + (v + 4) / 8 * width, bottom + 14, fmt::format("{:g}", v), {.size = 10});
    }
  }
  double legend = 50;
  for (const Curve& c : curves) {
    // x = -4, -3.95, ..., 4, each one correctly rounded division (so 0 is exactly 0, where
    // relu's sub-gradient is chosen): the same values on every machine.
    std::vector<double> xs;
    for (int i = -80; i <= 80; ++i) xs.push_back(i / 20.0);
    const Tensor x = tensor(xs).requires_grad_();
    const Tensor y = c.fn(x);
    sum(y).backward();
    const std::vector<double> ys = y.detach().to_vector<double>();
    const std::vector<double> ds = x.grad().to_vector<double>();
    for (size_t k = 0; k < 2; ++k) {
      const Panel& p = panels[k];
      const std::vector<double>& vs = k == 0 ? ys : ds;
      std::vector<std::pair<double, double>> points;
      for (size_t i = 0; i < xs.size(); ++i) {
        // x from the index: i * width / 160 is exact, so no last bit of x can move a point
        // across a rounding tie of its printed coordinate.
        points.emplace_back(p.x0 + static_cast<double>(i) * width / 160,
                            bottom - (vs[i] - p.lo) / (p.hi - p.lo) * (bottom - top));
      }
      svg.polyline(points, c.colour, 1.8);
    }
    svg.line(legend, 18, legend + 22, 18, c.colour, 3);
    svg.text(legend + 27, 22, c.name, kCode);
    legend += 110;
  }
  return {"05-activations.svg", svg.str()};
}

// Chapter 6: RMSNorm composed from primitives, y = x * rsqrt(mean(x * x) + eps) * w. x reaches
// y along two paths, directly and through the statistic: the two terms of its backward.
Figure rms_norm_graph() {
  Generator gen(6);
  const Tensor x = randn({4, 8}, kFloat32, gen).requires_grad_();
  const Tensor w = ones({8}).requires_grad_();
  const Tensor s = rsqrt(add(mean(mul(x, x), {-1}, /*keepdim=*/true), 1e-5));
  const Tensor y = mul(mul(x, s), w);
  return {"06-rms-norm-graph.dot", dot_figure(to_dot(y))};
}

// Bars of `values` from x0 on, standing on (or hanging from) the line y = zero_y, `scale`
// pixels per unit, each labelled with its value and its index; bar `mark` (if any) in red.
void bars(Svg& svg, const std::vector<double>& values, double x0, double zero_y, double scale,
          const std::string& colour, int64_t mark = -1) {
  const double w = 22, gap = 8;
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i], x = x0 + static_cast<double>(i) * (w + gap);
    const double y = v >= 0 ? zero_y - v * scale : zero_y;
    svg.rect(x, y, w, std::abs(v) * scale, static_cast<int64_t>(i) == mark ? "#c4314b" : colour,
             "none");
    svg.text(x + w / 2, v >= 0 ? y - 4 : zero_y - v * scale + 12, fixed(v, 2), {.size = 9.5});
    svg.text(x + w / 2, zero_y + 86, fmt::format("{}", i), {.size = 10, .fill = "#555"});
  }
  svg.line(x0 - 4, zero_y, x0 + static_cast<double>(values.size()) * (w + gap), zero_y, "#777");
}

// Chapter 7: the chapter's row of logits x = (2, 1, 0.1, -1) with target t = 0: the
// probabilities, the one-hot target and the gradient that cross_entropy's backward gives the
// logits, p - q.
Figure cross_entropy_grad() {
  const int64_t target = 0;
  const Tensor logits = tensor({2.0, 1.0, 0.1, -1.0}, {1, 4}).requires_grad_();
  cross_entropy(logits, tensor(std::vector<int64_t>{target}, {1})).backward();
  const std::vector<double> x = logits.detach().to_vector<double>();
  const std::vector<double> p = softmax(logits.detach(), -1).to_vector<double>();
  std::vector<double> q(x.size(), 0.0);
  q[target] = 1;
  const std::vector<double> dx = logits.grad().to_vector<double>();

  Svg svg(680, 262);
  struct Panel {
    std::string title;
    const std::vector<double>* values;
    std::string colour;
  };
  const Panel panels[] = {{"x (logits)", &x, "#9ccfd8"},
                          {"p = softmax(x)", &p, "#f6c177"},
                          {"q = onehot(t), t = 0", &q, "#c4a7e7"},
                          {"dx = p - q", &dx, "#eb6f92"}};
  const double zero_y = 140, scale = 40;
  for (size_t k = 0; k < 4; ++k) {
    const double x0 = 24 + static_cast<double>(k) * 168;
    svg.text(x0, 24, panels[k].title, kCode);
    bars(svg, *panels[k].values, x0, zero_y, scale, panels[k].colour, k == 3 ? target : -1);
  }
  svg.text(24, 254, "cross_entropy(x, t).backward() -> x.grad() = dx", kNote);
  return {"07-cross-entropy-grad.svg", svg.str()};
}

// Chapter 8: the lookup and its backward on ids = (2, 0, 2, 3): rows of the table are copied
// out, and the gradient rows are added back into the rows they came from (row 2 twice, rows
// 1 and 4 never).
Figure embedding_scatter() {
  const std::vector<int64_t> id_list = {2, 0, 2, 3};
  const Tensor ids = tensor(id_list, {4});
  const Tensor table = arange(15, kFloat64).view({5, 3}).requires_grad_();
  const Tensor out = embedding(ids, table);
  const Tensor dout = add(arange(12, kFloat64).view({4, 3}), 1.0);
  out.backward(dout);
  const Tensor dtable = table.grad();

  const double cw = 28, ch = 24, top = 60;
  Svg svg(720, 200);
  auto value = [](const Tensor& t) {
    return [t](int64_t i, int64_t j) { return fmt::format("{:g}", t.at<double>({i, j})); };
  };
  auto used = [&](int64_t v) { return std::count(id_list.begin(), id_list.end(), v); };
  auto row_fill = [&](const std::string& colour) {
    return [&, colour](int64_t i, int64_t) { return used(i) > 0 ? colour : std::string("#eee"); };
  };
  auto rows_label = [&](double x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      svg.text(x, top + (static_cast<double>(i) + 0.5) * ch + 4, fmt::format("{}", i),
               {.size = 10, .fill = "#555"});
    }
  };
  auto links = [&](double from_x, double to_x, bool forward) {
    for (size_t n = 0; n < id_list.size(); ++n) {
      const double row_y = top + (static_cast<double>(id_list[n]) + 0.5) * ch;
      const double pos_y = top + (static_cast<double>(n) + 0.5) * ch;
      if (forward) svg.arrow(from_x, row_y, to_x, pos_y, "#777", 1.2);
      else svg.arrow(from_x, pos_y, to_x, row_y, "#c4314b", 1.2);
    }
  };

  // Forward: table (5, 3) -> out (4, 3).
  svg.text(20, 20, "out = embedding(ids, table)", kCode);
  svg.text(30, top - 8, fmt::format("table {}", table.shape()), kNote);
  rows_label(22, 5);
  grid(svg, 30, top, 5, 3, cw, ch, row_fill("#9ccfd8"), value(table.detach()));
  svg.text(230, top - 8, fmt::format("out {}", out.shape()), kNote);
  for (size_t n = 0; n < id_list.size(); ++n) {
    svg.text(222, top + (static_cast<double>(n) + 0.5) * ch + 4, fmt::format("{}", id_list[n]),
             {.size = 11, .anchor = "end", .fill = "#1f77b4", .bold = true});
  }
  grid(
      svg, 230, top, 4, 3, cw, ch, [](int64_t, int64_t) { return std::string("#9ccfd8"); },
      value(out.detach()));
  links(30 + 3 * cw + 4, 206, true);
  svg.text(200, top + 4 * ch + 22, "ids",
           {.size = 11, .fill = "#1f77b4", .bold = true, .mono = true});

  // Backward: dout (4, 3) -> table.grad() (5, 3), added row by row.
  const double bx = 380;
  svg.text(bx, 20, "out.backward(dout) -> table.grad()", kCode);
  svg.text(bx, top - 8, fmt::format("dout {}", dout.shape()), kNote);
  grid(
      svg, bx, top, 4, 3, cw, ch, [](int64_t, int64_t) { return std::string("#f6c177"); },
      value(dout));
  const double gx = bx + 3 * cw + 96;
  svg.text(gx, top - 8, fmt::format("table.grad() {}", dtable.shape()), kNote);
  rows_label(gx - 8, 5);
  grid(svg, gx, top, 5, 3, cw, ch, row_fill("#f6c177"), value(dtable));
  links(bx + 3 * cw + 4, gx - 16, false);
  return {"08-embedding-scatter.svg", svg.str()};
}

// Chapter 9: one row of C = 8 values, and what LayerNorm and RMSNorm (weight 1, no bias)
// make of it: LayerNorm removes the mean and scales to unit variance, RMSNorm only scales.
Figure norms() {
  const Tensor x = tensor({2.0, 3.5, 1.0, 4.0, 2.5, 3.0, 1.5, 4.5}, {1, 8});
  const Tensor ln = layer_norm(x), rn = rms_norm(x, ones({8}, kFloat64));
  Svg svg(740, 240);
  const double zero_y = 150, scale = 24;
  struct Panel {
    std::string title;
    Tensor t;
    std::string colour;
  };
  const Panel panels[] = {
      {"x", x, "#9ccfd8"}, {"layer_norm(x)", ln, "#f6c177"}, {"rms_norm(x, 1)", rn, "#c4a7e7"}};
  for (size_t k = 0; k < 3; ++k) {
    const double x0 = 24 + static_cast<double>(k) * 240;
    const std::vector<double> v = panels[k].t.to_vector<double>();
    double sum_v = 0, sum_sq = 0;
    for (const double e : v) sum_v += e, sum_sq += e * e;
    const double mu = sum_v / 8, rms = std::sqrt(sum_sq / 8);
    const double sigma = std::sqrt(sum_sq / 8 - mu * mu);
    svg.text(x0, 22, panels[k].title, kCode);
    const double w = 22, gap = 5;
    for (size_t i = 0; i < v.size(); ++i) {
      const double bx = x0 + static_cast<double>(i) * (w + gap);
      svg.rect(bx, v[i] >= 0 ? zero_y - v[i] * scale : zero_y, w, std::abs(v[i]) * scale,
               panels[k].colour);
      svg.text(bx + w / 2, v[i] >= 0 ? zero_y - v[i] * scale - 4 : zero_y - v[i] * scale + 12,
               fixed(v[i], 2), {.size = 8.5});
    }
    svg.line(x0 - 4, zero_y, x0 + 8 * (w + gap), zero_y, "#777");
    svg.line(x0 - 4, zero_y - mu * scale, x0 + 8 * (w + gap), zero_y - mu * scale, "#c4314b", 1.2,
             true);
    svg.text(
        x0, 222,
        fmt::format("mu {}, sqrt(var) {}, rms {}", fixed(mu, 2), fixed(sigma, 2), fixed(rms, 2)),
        kNote);
  }
  return {"09-norms.svg", svg.str()};
}

// Chapter 10: dropout with p = 0.25 on a (4, 8) input, and the backward of dy = 1: the same
// mask, the same 1 / (1 - p).
Figure dropout_mask() {
  Generator gen(10);
  const Tensor x = div(add(arange(32, kFloat64), 1.0), 10.0).view({4, 8}).detach().requires_grad_();
  const Tensor y = dropout(x, 0.25, /*training=*/true, gen);
  y.backward(ones({4, 8}, kFloat64));
  const Tensor dx = x.grad();
  Svg svg(330, 420);
  const double cw = 36, ch = 22;
  struct Panel {
    std::string title;
    Tensor t;
    std::string colour;
  };
  const Panel panels[] = {{"x (4, 8)", x.detach(), "#9ccfd8"},
                          {"y = dropout(x, 0.25, true, gen)", y.detach(), "#f6c177"},
                          {"x.grad(), dy = 1", dx, "#eb6f92"}};
  for (size_t k = 0; k < 3; ++k) {
    const double top = 36 + static_cast<double>(k) * 130;
    const Tensor& t = panels[k].t;
    const bool masked = k > 0;
    svg.text(20, top - 10, panels[k].title, kCode);
    auto dropped = [&](int64_t i, int64_t j) { return masked && y.at<double>({i, j}) == 0; };
    grid(
        svg, 20, top, 4, 8, cw, ch,
        [&](int64_t i, int64_t j) {
          return dropped(i, j) ? std::string("#555") : panels[k].colour;
        },
        [&](int64_t i, int64_t j) {
          return dropped(i, j) ? "" : fixed(t.at<double>({i, j}), 2);
        },
        10);
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 8; ++j) {
        if (!dropped(i, j)) continue;
        svg.text(20 + (static_cast<double>(j) + 0.5) * cw,
                 top + (static_cast<double>(i) + 0.5) * ch + 3.5, "0",
                 {.size = 10, .fill = "white"});
      }
    }
  }
  return {"10-dropout-mask.svg", svg.str()};
}

// Chapter 11: the channel pairs (i, i + D/2) of a row that holds (1, 0) in every pair, after
// rope at positions 0..7: pair i turns by position * theta^(-2i/D), read off the op's output.
Figure rope_rotation() {
  const int64_t T = 8, D = 8, half = D / 2;
  std::vector<double> row(static_cast<size_t>(D), 0.0);
  for (int64_t i = 0; i < half; ++i) row[static_cast<size_t>(i)] = 1;
  std::vector<double> rows;
  for (int64_t t = 0; t < T; ++t) rows.insert(rows.end(), row.begin(), row.end());
  const Tensor y = rope(tensor(rows, {T, D}), arange(static_cast<double>(T), kInt64));

  Svg svg(700, 250);
  svg.text(20, 22, "rope(x, positions), theta = 10000, D = 8, x[p] = (1, 1, 1, 1, 0, 0, 0, 0)",
           kCode);
  const double r = 62;
  for (int64_t i = 0; i < half; ++i) {
    const double cx = 95 + static_cast<double>(i) * 170, cy = 120;
    svg.circle(cx, cy, r, "none", "#ccc");
    svg.line(cx - r - 6, cy, cx + r + 6, cy, "#eee");
    svg.line(cx, cy - r - 6, cx, cy + r + 6, "#eee");
    double last_label = -10;
    for (int64_t t = 0; t < T; ++t) {
      const double c = y.at<double>({t, i}), s = y.at<double>({t, i + half});
      const std::string colour =
          blend(0.25 + 0.75 * static_cast<double>(t) / (T - 1), 31, 119, 180);
      svg.arrow(cx, cy, cx + c * r, cy - s * r, colour, 1.4);
      const double angle = std::atan2(s, c);
      if (t == 0 || std::abs(angle - last_label) > 0.3) {
        svg.text(cx + c * (r + 12), cy - s * (r + 12) + 4, fmt::format("{}", t), {.size = 10});
        last_label = angle;
      }
    }
    const double f = std::atan2(y.at<double>({1, i + half}), y.at<double>({1, i}));
    svg.text(cx, cy + r + 30, fmt::format("i = {}, f_i = {:.4g}", i, f),
             {.size = 11, .mono = true});
  }
  return {"11-rope-rotation.svg", svg.str()};
}

// Chapter 12: the attention weights P of one head with causal = true, T = 6: read off
// scaled_dot_product_attention itself by giving it v = I, so that out = P I = P.
Figure attention_mask() {
  const int64_t T = 6;
  Generator gen(12);
  const Tensor q = randn({1, 1, T, 4}, kFloat64, gen), k = randn({1, 1, T, 4}, kFloat64, gen);
  const Tensor v = eye(T, T, kFloat64).view({1, 1, T, T});
  const Tensor p = scaled_dot_product_attention(q, k, v, Tensor(), /*causal=*/true).view({T, T});

  Svg svg(420, 290);
  svg.text(20, 22, "P = softmax(q k^T / sqrt(D) + M), causal = true", kCode);
  const double x0 = 50, y0 = 70, cw = 46, ch = 34;
  svg.text(x0 + T * cw / 2, y0 - 22, "j", {.size = 12, .mono = true});
  svg.text(x0 - 30, y0 + T * ch / 2, "i", {.size = 12, .mono = true});
  svg.text(x0 + T * cw + 28, y0 - 8, "Σ_j", {.size = 11, .mono = true});
  for (int64_t i = 0; i < T; ++i) {
    double row_sum = 0;
    for (int64_t j = 0; j < T; ++j) {
      const double cx = x0 + static_cast<double>(j) * cw, cy = y0 + static_cast<double>(i) * ch;
      const double pij = p.at<double>({i, j});
      row_sum += pij;
      if (j > i) {  // masked: M = -inf there, so the weight is exactly 0
        svg.rect(cx, cy, cw, ch, "#d0d0d0", "#888", 0.8);
        svg.line(cx, cy + ch, cx + cw, cy, "#aaa");
        svg.text(cx + cw / 2, cy + ch / 2 + 4, fmt::format("{:g}", pij),
                 {.size = 11, .fill = "#777"});
      } else {
        svg.rect(cx, cy, cw, ch, blend(pij, 49, 99, 181), "#888", 0.8);
        svg.text(cx + cw / 2, cy + ch / 2 + 4, fixed(pij, 2),
                 {.size = 11, .fill = pij > 0.6 ? "white" : "#222"});
      }
    }
    svg.text(x0 - 10, y0 + (static_cast<double>(i) + 0.5) * ch + 4, fmt::format("{}", i),
             {.size = 10, .fill = "#555"});
    svg.text(x0 + T * cw + 28, y0 + (static_cast<double>(i) + 0.5) * ch + 4, fixed(row_sum, 2),
             {.size = 11});
  }
  for (int64_t j = 0; j < T; ++j) {
    svg.text(x0 + (static_cast<double>(j) + 0.5) * cw, y0 - 6, fmt::format("{}", j),
             {.size = 10, .fill = "#555"});
  }
  return {"12-attention-mask.svg", svg.str()};
}

}  // namespace

std::vector<Figure> op_figures() {
  std::vector<Figure> all = linear_graphs();
  for (Figure f : {activations(), rms_norm_graph(), cross_entropy_grad(), embedding_scatter(),
                   norms(), dropout_mask(), rope_rotation(), attention_mask()}) {
    all.push_back(std::move(f));
  }
  return all;
}

}  // namespace tg::figures
