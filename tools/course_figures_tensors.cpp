// tools/course_figures_tensors.cpp — the figures of chapters 1 to 3: strides and views,
// broadcasting forward and backward, the tape of chapter 2's program, a fan-out's gradients,
// and the error of finite differences against the step h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/core.h"
#include "ops/ops.h"
#include "tools/course_figures.h"

namespace tg::figures {
namespace {

constexpr TextStyle kSmall{.size = 11, .fill = "#555", .mono = true};

// The storage address of element (i, j) of a 2-D view: the formula of chapter 1, section 1,
// on the tensor's own metadata.
int64_t address(const Tensor& t, int64_t i, int64_t j) {
  return t.storage_offset() + i * t.strides()[0] + j * t.strides()[1];
}

// A light-to-dark blue for address a of n, so that equal colours mean one memory cell.
std::string address_colour(int64_t a, int64_t n) {
  return blend(0.12 + 0.6 * static_cast<double>(a) / static_cast<double>(n - 1), 66, 133, 244);
}

// Chapter 1, section 1: one storage, three views of it, each element labelled with the
// storage address that its shape, strides and offset give.
Figure strides() {
  const Tensor x = arange(12).view({3, 4});
  const int64_t n = x.numel();
  Svg svg(620, 290);
  const double cw = 32, ch = 26;
  svg.text(20, 34, "x.storage()", kCode);
  grid(
      svg, 120, 16, 1, n, cw, ch, [&](int64_t, int64_t j) { return address_colour(j, n); },
      [](int64_t, int64_t j) { return fmt::format("{}", j); });

  struct Panel {
    std::string code;
    Tensor view;
    double x;
  };
  const Panel panels[] = {
      {"x = arange(12).view({3, 4})", x, 20},
      {"x.t()", x.t(), 250},
      {"x.narrow(1, 1, 2)", x.narrow(1, 1, 2), 430},
  };
  for (const Panel& p : panels) {
    const Tensor& v = p.view;
    svg.text(p.x, 80, p.code, {.size = 12, .anchor = "start", .bold = true, .mono = true});
    svg.text(p.x, 98, fmt::format("shape {}", v.shape()), kNote);
    svg.text(p.x, 113, fmt::format("strides {}", v.strides()), kNote);
    svg.text(p.x, 128, fmt::format("offset {}", v.storage_offset()), kNote);
    const double gx = p.x + 16, gy = 156;
    for (int64_t i = 0; i < v.size(0); ++i) {
      svg.text(p.x + 6, gy + static_cast<double>(i) * ch + 17, fmt::format("{}", i), kSmall);
    }
    for (int64_t j = 0; j < v.size(1); ++j) {
      svg.text(gx + (static_cast<double>(j) + 0.5) * cw, gy - 6, fmt::format("{}", j), kSmall);
    }
    grid(
        svg, gx, gy, v.size(0), v.size(1), cw, ch,
        [&](int64_t i, int64_t j) { return address_colour(address(v, i, j), n); },
        [&](int64_t i, int64_t j) { return fmt::format("{}", address(v, i, j)); });
  }
  return {"01-strides.svg", svg.str()};
}

// Chapter 1, section 5: (3, 1) + (1, 4) -> (3, 4). The stretched copies of expand() are
// the same memory read again (stride 0), drawn faded.
Figure broadcast() {
  const Tensor a = tensor({0.f, 10.f, 20.f}, {3, 1});
  const Tensor b = tensor({0.f, 1.f, 2.f, 3.f}, {1, 4});
  const Tensor ae = a.expand({3, 4}), be = b.expand({3, 4});
  const Tensor y = add(a, b);
  Svg svg(640, 250);
  const double cw = 34, ch = 28, top = 80, below = top + 3 * ch + 20;
  auto value = [](const Tensor& t) {
    return [t](int64_t i, int64_t j) { return fmt::format("{:g}", t.at<float>({i, j})); };
  };
  auto label = [&](double x, double at, const std::string& s, bool code = true) {
    svg.text(x, at, s, code ? kCode : kNote);
  };
  const std::string solid = "#f6c177", faded = "#fbe6c6", solid_b = "#9ccfd8", faded_b = "#d8eef1";

  grid(
      svg, 20, top, 3, 1, cw, ch, [&](int64_t, int64_t) { return solid; }, value(a));
  label(20, below, fmt::format("a {}", a.shape()));
  svg.arrow(60, top + 42, 88, top + 42, "#777");
  grid(
      svg, 92, top, 3, 4, cw, ch, [&](int64_t, int64_t j) { return j == 0 ? solid : faded; },
      value(ae));
  label(92, below, "a.expand({3, 4})");
  label(92, below + 15, fmt::format("strides {}", ae.strides()), false);
  svg.text(248, top + 48, "+", {.size = 20});

  const double bx = 266;
  grid(
      svg, bx, 14, 1, 4, cw, ch, [&](int64_t, int64_t) { return solid_b; }, value(b));
  label(bx - 76, 32, fmt::format("b {}", b.shape()));
  svg.arrow(bx + 2 * cw, 46, bx + 2 * cw, top - 4, "#777");
  grid(
      svg, bx, top, 3, 4, cw, ch, [&](int64_t i, int64_t) { return i == 0 ? solid_b : faded_b; },
      value(be));
  label(bx, below, "b.expand({3, 4})");
  label(bx, below + 15, fmt::format("strides {}", be.strides()), false);
  svg.text(bx + 4 * cw + 18, top + 48, "=", {.size = 20});

  const double yx = bx + 4 * cw + 36;
  grid(
      svg, yx, top, 3, 4, cw, ch, [](int64_t, int64_t) { return std::string("#e0def4"); },
      value(y));
  label(yx, below, "a + b");
  label(yx, below + 15, fmt::format("shape {}", y.shape()), false);
  return {"01-broadcast.svg", svg.str()};
}

// Chapter 1, the backward of broadcasting: each input gets dout summed over the dims it was
// stretched along, as the real backward (sum_to) computes it.
Figure broadcast_backward() {
  Tensor a = tensor({0.0, 10.0, 20.0}, {3, 1}).requires_grad_();
  Tensor b = tensor({0.0, 1.0, 2.0, 3.0}, {1, 4}).requires_grad_();
  const Tensor dout = arange(12, kFloat64).view({3, 4});
  add(a, b).backward(dout);
  const Tensor da = a.grad(), db = b.grad();
  auto value = [](const Tensor& t) {
    return [t](int64_t i, int64_t j) { return fmt::format("{:g}", t.at<double>({i, j})); };
  };
  Svg svg(480, 250);
  const double cw = 34, ch = 28, x0 = 30, y0 = 44;
  svg.text(x0, y0 - 12, fmt::format("dout {}", dout.shape()), kCode);
  grid(
      svg, x0, y0, 3, 4, cw, ch, [](int64_t, int64_t) { return std::string("#e0def4"); },
      value(dout));

  const double ax = x0 + 4 * cw + 150;
  for (int64_t i = 0; i < 3; ++i) {
    const double yy = y0 + (static_cast<double>(i) + 0.5) * ch;
    svg.arrow(x0 + 4 * cw + 6, yy, ax - 6, yy, "#c4314b", 1.2);
  }
  svg.text((x0 + 4 * cw + ax) / 2, y0 - 12, fmt::format("sum_to(dout, {})", a.shape()),
           {.size = 11, .fill = "#c4314b", .mono = true});
  svg.text(ax, y0 - 12, fmt::format("a.grad() {}", da.shape()), kCode);
  grid(
      svg, ax, y0, 3, 1, cw, ch, [](int64_t, int64_t) { return std::string("#f6c177"); },
      value(da));

  const double by = y0 + 3 * ch + 90;
  for (int64_t j = 0; j < 4; ++j) {
    const double xx = x0 + (static_cast<double>(j) + 0.5) * cw;
    svg.arrow(xx, y0 + 3 * ch + 6, xx, by - 6, "#c4314b", 1.2);
  }
  svg.text(x0 + 4 * cw + 10, y0 + 3 * ch + 50, fmt::format("sum_to(dout, {})", b.shape()),
           {.size = 11, .anchor = "start", .fill = "#c4314b", .mono = true});
  svg.text(x0 + 4 * cw + 10, by + 20, fmt::format("b.grad() {}", db.shape()), kCode);
  grid(
      svg, x0, by, 1, 4, cw, ch, [](int64_t, int64_t) { return std::string("#9ccfd8"); },
      value(db));
  return {"01-broadcast-backward.svg", svg.str()};
}

// Chapter 2: the graph of examples/course/autograd_tape.cpp after its backward, exactly
// what that program prints (the chapter shows the same text).
Figure tape_graph() {
  Generator gen(0);
  const Tensor x = randn({4, 3}, kFloat32, gen);
  const Tensor w = randn({3}, kFloat32, gen).requires_grad_();
  const Tensor b = zeros({3}).requires_grad_();
  const Tensor h = x * w + b;
  const Tensor l = h * h;
  l.backward(ones({4, 3}));
  return {"02-tape-graph.dot", dot_figure(to_dot(l))};
}

// Chapter 2, fan-out: y = u * u + u at u = 3. Each edge carries, in the backward, what the
// op it enters sends back to that input; the three pieces reaching u add up to u.grad().
Figure fan_out() {
  Tensor u = scalar_tensor(3.0, kFloat64).requires_grad_();
  const Tensor sq = u * u;
  sq.retain_grad();
  const Tensor y = sq + u;
  y.retain_grad();
  y.backward();
  const double dy = y.grad().item<double>();    // backward starts from dy/dy = 1
  const double dsq = sq.grad().item<double>();  // add passes dy on to both its inputs
  const double via_add = dy;
  // mul sends each of its two inputs dsq times the other one, which is u both times.
  const double via_mul = mul(sq.grad(), u.detach()).item<double>();
  const double total = u.grad().item<double>();

  Svg svg(560, 250);
  const std::string fwd = "#888", back = "#c4314b";
  const double ux = 70, uy = 140, mx = 250, my = 190, ax = 410, ay = 120, yx = 510;
  // A forward edge (grey), labelled in red with the gradient it carries back; `lift` moves
  // the label off the curve, whose middle is p0/4 + c/2 + p2/4.
  auto edge = [&](double x1, double y1, double cx, double cy, double x2, double y2, double grad,
                  double lift) {
    svg.curve_arrow(x1, y1, cx, cy, x2, y2, fwd);
    svg.text(x1 / 4 + cx / 2 + x2 / 4, y1 / 4 + cy / 2 + y2 / 4 + lift, fmt::format("{:g}", grad),
             {.size = 13, .fill = back, .bold = true});
  };
  edge(ux + 30, uy + 4, 150, uy - 20, mx - 32, my - 8, via_mul, -8);  // u -> mul, twice
  edge(ux + 30, uy + 12, 150, my + 40, mx - 32, my + 4, via_mul, 18);
  edge(ux + 20, uy - 16, 220, 10, ax - 32, ay - 8, via_add, -8);  // u -> add
  edge(mx + 32, my - 8, (mx + ax) / 2, (my + ay) / 2, ax - 32, ay + 6, dsq, 14);
  edge(ax + 32, ay, (ax + yx) / 2, ay, yx - 30, ay, dy, -8);

  svg.ellipse(ux, uy, 36, 20, "lightblue", "#333");
  svg.text(ux, uy + 4, fmt::format("u = {:g}", u.item<double>()), {.size = 12, .mono = true});
  svg.rect(mx - 32, my - 16, 64, 32, "lightgray", "#333");
  svg.text(mx, my + 4, "#0 mul", {.size = 12, .mono = true});
  svg.rect(ax - 32, ay - 16, 64, 32, "#caff70", "#333");
  svg.text(ax, ay + 4, "#1 add", {.size = 12, .mono = true});
  svg.text(yx, ay + 4, fmt::format("y = {:g}", y.item<double>()), kCode);
  svg.text(ux - 40, 236,
           fmt::format("u.grad() = {:g} + {:g} + {:g} = {:g}", via_mul, via_mul, via_add, total),
           {.size = 13, .anchor = "start", .fill = back, .bold = true, .mono = true});
  return {"02-fan-out.svg", svg.str()};
}

// Chapter 3: |numeric - exact| of d sqrt(x)/dx at x = 1 against the step h, for the three
// difference quotients in float64 and the central one in float32, as the chapter's table
// (examples/course/gradcheck_stencils.cpp) but with three steps per decade. Each h is 1/d
// for a d that is exact in double, and sqrt, + - * / are correctly rounded, so the curves
// are the same on every machine.
Figure eps_error() {
  std::vector<double> steps;
  for (double decade = 1; decade <= 1e12; decade *= 10) {
    for (const double c : {5.0, 2.0, 1.0}) {
      if (c * decade >= 5 && c * decade <= 1e12) steps.push_back(1 / (c * decade));
    }
  }
  std::sort(steps.begin(), steps.end(), std::greater<>());  // largest h first
  std::vector<double> at64;
  std::vector<float> at32;
  for (const double h : steps) {
    for (const double x : {1 + 2 * h, 1 + h, 1.0, 1 - h, 1 - 2 * h}) at64.push_back(x);
    const auto hf = static_cast<float>(h);
    at32.push_back(1.0f + hf);
    at32.push_back(1.0f - hf);
  }
  const std::vector<double> s = sqrt(tensor(at64)).to_vector<double>();
  const std::vector<float> s32 = sqrt(tensor(at32)).to_vector<float>();

  const double px0 = 80, px1 = 420, py0 = 30, py1 = 320;  // plot box
  auto px = [&](double log_h) { return px0 + (log_h + 12) / 12 * (px1 - px0); };
  auto py = [&](double err) {
    const double e = err > 0 ? std::max(std::log10(err), -14.0) : -14.0;
    return py1 - (e + 14) / 14 * (py1 - py0);
  };
  Svg svg(700, 370);
  for (int e = -12; e <= 0; ++e) {
    svg.line(px(e), py0, px(e), py1, "#eee");
    if (e % 2 == 0) svg.text(px(e), py1 + 16, e == 0 ? "1" : fmt::format("1e{}", e), {.size = 11});
  }
  for (int e = -14; e <= 0; e += 2) {
    svg.line(px0, py(std::pow(10.0, e)), px1, py(std::pow(10.0, e)), "#eee");
    svg.text(px0 - 6, py(std::pow(10.0, e)) + 4, e == 0 ? "1" : fmt::format("1e{}", e),
             {.size = 11, .anchor = "end"});
  }
  svg.rect(px0, py0, px1 - px0, py1 - py0, "none", "#999");
  svg.line(px(-6), py0, px(-6), py1, "#555", 1, true);
  svg.text(px(-6) + 4, py0 + 14, "eps = 1e-6", kNote);
  svg.text((px0 + px1) / 2, py1 + 36, "h", {.size = 13, .mono = true});
  svg.text(px0, py0 - 12, "|D(h) - 0.5|,  f(x) = sqrt(x),  f'(1) = 0.5", kCode);

  struct Curve {
    std::string colour, formula, dtype;
    std::vector<std::pair<double, double>> points;
  };
  std::vector<Curve> curves = {
      {"#1f77b4", "(f(1+h) - f(1)) / h", "float64", {}},
      {"#2ca02c", "(f(1+h) - f(1-h)) / 2h", "float64", {}},
      {"#9467bd", "(-f(1+2h) + 8f(1+h) - 8f(1-h) + f(1-2h)) / 12h", "float64", {}},
      {"#d62728", "(f(1+h) - f(1-h)) / 2h", "float32", {}},
  };
  for (size_t k = 0; k < steps.size(); ++k) {
    const double h = steps[k], log_h = std::log10(h);
    const double* v = &s[5 * k];  // f(1+2h), f(1+h), f(1), f(1-h), f(1-2h)
    const double forward = (v[1] - v[2]) / h, central = (v[1] - v[3]) / (2 * h);
    const double four = (-v[0] + 8 * v[1] - 8 * v[3] + v[4]) / (12 * h);
    const auto hf = static_cast<float>(h);
    const float c32 = (s32[2 * k] - s32[2 * k + 1]) / (2 * hf);
    const double d[] = {forward, central, four, static_cast<double>(c32)};
    for (size_t c = 0; c < curves.size(); ++c) {
      curves[c].points.emplace_back(px(log_h), py(std::abs(d[c] - 0.5)));
    }
  }
  double ly = py0 + 20;
  for (const Curve& c : curves) {
    svg.polyline(c.points, c.colour, 1.8);
    for (const auto& [x, y] : c.points) svg.circle(x, y, 2, c.colour);
    svg.line(px1 + 16, ly - 4, px1 + 40, ly - 4, c.colour, 2.5);
    svg.text(px1 + 46, ly, c.dtype, {.size = 11, .anchor = "start", .mono = true});
    svg.text(px1 + 16, ly + 15, c.formula,
             {.size = c.formula.size() > 30 ? 8.5 : 10,
              .anchor = "start",
              .fill = "#555",
              .mono = true});
    ly += 44;
  }
  return {"03-eps-error.svg", svg.str()};
}

}  // namespace

std::vector<Figure> tensor_figures() {
  return {strides(), broadcast(), broadcast_backward(), tape_graph(), fan_out(), eps_error()};
}

}  // namespace tg::figures
