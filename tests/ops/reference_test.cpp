// tests/ops/reference_test.cpp — every op against PyTorch, case by case.
//
// tests/reference/generate.py ran each op in PyTorch and stored, per case, the inputs, the
// output, a random upstream gradient and the gradient of every input, in one .safetensors
// file per op family (the layout is described in tests/reference/README.md). Here each case
// is replayed: rebuild the inputs (with the same non-contiguous strides when the case says
// so), run the tapegrad op named in the metadata through the table below, compare the
// output, then tg::grad with the stored upstream gradient and compare every input gradient.
//
// A fixture op with no entry in the table FAILS (coverage must not drop silently), and so
// does a stored tensor that no case consumed.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "nn/grad_utils.h"
#include "nn/optim.h"
#include "test_util.h"

namespace {

using tg::DType;
using tg::Tensor;
using tg::testing::as_doubles;

// ------------------------------------------------------------------- tolerances (ONE place)
// |actual - expected| <= atol + rtol * |expected|, elementwise; NaN matches NaN and an
// infinity matches only the same infinity.
struct Tolerance {
  double atol;
  double rtol;
};

Tolerance tolerance_for(DType dtype, const std::string& op) {
  // Conversions are exact by contract (one correctly rounded step), whatever the dtype.
  if (op == "to") return {0.0, 0.0};
  switch (dtype) {
    case DType::Float64: return {1e-10, 1e-9};
    case DType::Float32: return {1e-5, 1e-4};
    // float16/bfloat16 results are float32 results rounded once (generate.py's in_float32
    // does the same in PyTorch). Two float32 computations that differ in their last bits
    // can round to neighbouring half values, so one unit in the last place is allowed:
    // 2^-10 relative for float16 (2^-7 for bfloat16), and below the smallest normal
    // number (2^-14 for float16) an absolute unit.
    case DType::Float16: return {std::ldexp(1.0, -14), std::ldexp(1.0, -10)};
    case DType::BFloat16: return {std::ldexp(1.0, -126), std::ldexp(1.0, -7)};
    case DType::Int64:
    case DType::Bool: return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

// One fixture file per op family (tests/reference/fixtures/<family>.safetensors).
// One per line (clang-format off) so that adding a family is a one-line change.
// clang-format off
const std::vector<std::string> kFamilies = {
    "arithmetic",
    "unary",
    "matmul",
    "reduce",
    "join",
    "index",
    "view",
    "convert",
    "rms_norm",
    "linear",
    "mse_loss",
    "activation",
    "softmax",
    "cross_entropy",
    "embedding",
    "dropout",
    "layer_norm",
    "rope",
    "attention",
    "half",
    "autocast",
    "optim",
};
// clang-format on

std::string fixture_path(const std::string& family) {
  return std::string(TAPEGRAD_FIXTURES_DIR) + "/" + family + ".safetensors";
}

// ------------------------------------------------------------------- case parameters
// "<case>.<key>" metadata holds a JSON value: a number, true/false, null, or a list of ints.
class Params {
 public:
  Params(const std::map<std::string, std::string>& metadata, std::string prefix)
      : metadata_(metadata), prefix_(std::move(prefix)) {}

  bool has(const std::string& key) const { return metadata_.contains(prefix_ + key); }
  const std::string& raw(const std::string& key) const {
    const auto it = metadata_.find(prefix_ + key);
    if (it == metadata_.end()) throw std::runtime_error("missing parameter " + prefix_ + key);
    return it->second;
  }
  double f64(const std::string& key) const { return number(raw(key), key); }
  int64_t i64(const std::string& key) const {
    const double v = f64(key);
    if (v != std::floor(v)) throw std::runtime_error("parameter " + key + " is not an integer");
    return static_cast<int64_t>(v);
  }
  std::optional<double> opt_f64(const std::string& key) const {
    if (raw(key) == "null") return std::nullopt;
    return f64(key);
  }
  bool flag(const std::string& key) const {
    if (raw(key) == "true") return true;
    if (raw(key) == "false") return false;
    throw std::runtime_error("parameter " + key + " is not true/false: " + raw(key));
  }
  std::vector<int64_t> ints(const std::string& key) const {
    std::string text = raw(key);
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
      throw std::runtime_error("parameter " + key + " is not a list: " + text);
    }
    std::vector<int64_t> out;
    std::stringstream items(text.substr(1, text.size() - 2));
    for (std::string item; std::getline(items, item, ',');) {
      out.push_back(static_cast<int64_t>(number(item, key)));
    }
    return out;
  }
  tg::DimVec dims(const std::string& key) const {
    const std::vector<int64_t> v = ints(key);
    return tg::DimVec(std::span<const int64_t>(v));
  }
  /// A JSON string such as "\"float32\"" (no escapes needed in fixtures).
  std::string str(const std::string& key) const {
    const std::string& text = raw(key);
    if (text.size() < 2 || text.front() != '"' || text.back() != '"') {
      throw std::runtime_error("parameter " + key + " is not a string: " + text);
    }
    return text.substr(1, text.size() - 2);
  }
  DType dtype(const std::string& key) const {
    for (DType d : tg::testing::kAllDTypes) {
      if (tg::dtype_name(d) == str(key)) return d;
    }
    throw std::runtime_error("parameter " + key + " is not a dtype: " + raw(key));
  }

 private:
  static double number(const std::string& text, const std::string& key) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    while (end != nullptr && *end == ' ') ++end;
    if (end == text.c_str() || *end != '\0') {
      throw std::runtime_error("parameter " + key + " is not a number: " + text);
    }
    return v;
  }

  const std::map<std::string, std::string>& metadata_;
  std::string prefix_;
};

// ------------------------------------------------------------------- the op table
// The fixture op name -> the tapegrad call with the case's parameters.
using Inputs = std::vector<Tensor>;
using Outputs = std::vector<Tensor>;
using OpFn = std::function<Outputs(const Inputs&, const Params&)>;

// nn/optim.h: runs optimizer Opt on a copy of parameter in[0], one step per gradient of the
// stack in[1]; returns the parameter, then its state (without the step counter).
template <class Opt, class Options>
std::vector<Tensor> optimizer_steps(const std::vector<Tensor>& in, const Options& options) {
  Tensor param = in[0].clone().requires_grad_();
  Opt opt({param}, options);
  for (int64_t k = 0; k < in[1].size(0); ++k) {
    param.set_grad(in[1].select(0, k).clone());
    opt.step();
  }
  std::vector<Tensor> out = {param.detach()};
  for (const auto& [name, t] : opt.state_tensors()) {
    if (!name.ends_with(".step")) out.push_back(t);
  }
  return out;
}

const std::map<std::string, OpFn>& op_table() {
  using P = const Params&;
  using I = const Inputs&;
  static const std::map<std::string, OpFn> table = {
      // ops/arithmetic.h
      {"add", [](I in, P) -> Outputs { return {tg::add(in[0], in[1])}; }},
      {"sub", [](I in, P) -> Outputs { return {tg::sub(in[0], in[1])}; }},
      {"mul", [](I in, P) -> Outputs { return {tg::mul(in[0], in[1])}; }},
      {"div", [](I in, P) -> Outputs { return {tg::div(in[0], in[1])}; }},
      {"neg", [](I in, P) -> Outputs { return {tg::neg(in[0])}; }},
      {"add_scalar", [](I in, P p) -> Outputs { return {tg::add(in[0], p.f64("scalar"))}; }},
      {"sub_scalar", [](I in, P p) -> Outputs { return {tg::sub(in[0], p.f64("scalar"))}; }},
      {"rsub_scalar", [](I in, P p) -> Outputs { return {tg::sub(p.f64("scalar"), in[0])}; }},
      {"mul_scalar", [](I in, P p) -> Outputs { return {tg::mul(in[0], p.f64("scalar"))}; }},
      {"div_scalar", [](I in, P p) -> Outputs { return {tg::div(in[0], p.f64("scalar"))}; }},
      {"rdiv_scalar", [](I in, P p) -> Outputs { return {tg::div(p.f64("scalar"), in[0])}; }},
      // ops/unary.h
      {"pow", [](I in, P p) -> Outputs { return {tg::pow(in[0], p.f64("exponent"))}; }},
      {"exp", [](I in, P) -> Outputs { return {tg::exp(in[0])}; }},
      {"log", [](I in, P) -> Outputs { return {tg::log(in[0])}; }},
      {"sqrt", [](I in, P) -> Outputs { return {tg::sqrt(in[0])}; }},
      {"rsqrt", [](I in, P) -> Outputs { return {tg::rsqrt(in[0])}; }},
      {"abs", [](I in, P) -> Outputs { return {tg::abs(in[0])}; }},
      {"clamp",
       [](I in, P p) -> Outputs { return {tg::clamp(in[0], p.opt_f64("min"), p.opt_f64("max"))}; }},
      // ops/reduce.h
      {"sum",
       [](I in, P p) -> Outputs { return {tg::sum(in[0], p.dims("dims"), p.flag("keepdim"))}; }},
      {"mean",
       [](I in, P p) -> Outputs { return {tg::mean(in[0], p.dims("dims"), p.flag("keepdim"))}; }},
      {"amax",
       [](I in, P p) -> Outputs { return {tg::amax(in[0], p.dims("dims"), p.flag("keepdim"))}; }},
      {"amin",
       [](I in, P p) -> Outputs { return {tg::amin(in[0], p.dims("dims"), p.flag("keepdim"))}; }},
      {"max_dim",
       [](I in, P p) -> Outputs {
         const tg::ValuesIndices r = tg::max(in[0], p.i64("dim"), p.flag("keepdim"));
         return {r.values, r.indices};
       }},
      {"min_dim",
       [](I in, P p) -> Outputs {
         const tg::ValuesIndices r = tg::min(in[0], p.i64("dim"), p.flag("keepdim"));
         return {r.values, r.indices};
       }},
      {"max_all", [](I in, P) -> Outputs { return {tg::max(in[0])}; }},
      {"min_all", [](I in, P) -> Outputs { return {tg::min(in[0])}; }},
      // ops/matmul.h
      {"matmul", [](I in, P) -> Outputs { return {tg::matmul(in[0], in[1])}; }},
      // ops/join.h
      {"cat", [](I in, P p) -> Outputs { return {tg::cat(in, p.i64("dim"))}; }},
      {"stack", [](I in, P p) -> Outputs { return {tg::stack(in, p.i64("dim"))}; }},
      {"split",
       [](I in, P p) -> Outputs {
         if (p.has("sizes")) return tg::split(in[0], p.ints("sizes"), p.i64("dim"));
         return tg::split(in[0], p.i64("split_size"), p.i64("dim"));
       }},
      {"chunk",
       [](I in, P p) -> Outputs { return tg::chunk(in[0], p.i64("chunks"), p.i64("dim")); }},
      // ops/index.h
      {"index_select",
       [](I in, P p) -> Outputs { return {tg::index_select(in[0], p.i64("dim"), in[1])}; }},
      {"gather", [](I in, P p) -> Outputs { return {tg::gather(in[0], p.i64("dim"), in[1])}; }},
      {"where", [](I in, P) -> Outputs { return {tg::where(in[0], in[1], in[2])}; }},
      {"masked_fill",
       [](I in, P p) -> Outputs { return {tg::masked_fill(in[0], in[1], p.f64("value"))}; }},
      // ops/rms_norm.h
      {"rms_norm", [](I in, P p) -> Outputs { return {tg::rms_norm(in[0], in[1], p.f64("eps"))}; }},
      // Hugging Face's order for half inputs: the normalised value rounded, then the weight
      {"rms_norm_weight_after_rounding",
       [](I in, P p) -> Outputs {
         const Tensor ones = tg::ones({in[1].size(0)}, in[1].dtype());
         return {tg::mul(tg::rms_norm(in[0], ones, p.f64("eps")), in[1])};
       }},
      {"add_rms_norm",
       [](I in, P p) -> Outputs {
         const tg::AddRmsNormOutput r = tg::add_rms_norm(in[0], in[1], in[2], p.f64("eps"));
         return {r.out, r.residual};
       }},
      // ops/linear.h (no third input = no bias)
      {"linear",
       [](I in, P) -> Outputs {
         return {tg::linear(in[0], in[1], in.size() > 2 ? in[2] : Tensor())};
       }},
      // ops/mse_loss.h
      {"mse_loss",
       [](I in, P p) -> Outputs { return {tg::mse_loss(in[0], in[1], p.str("reduction"))}; }},
      // ops/activation.h, ops/swiglu.h
      {"relu", [](I in, P) -> Outputs { return {tg::relu(in[0])}; }},
      {"sigmoid", [](I in, P) -> Outputs { return {tg::sigmoid(in[0])}; }},
      {"tanh", [](I in, P) -> Outputs { return {tg::tanh(in[0])}; }},
      {"silu", [](I in, P) -> Outputs { return {tg::silu(in[0])}; }},
      {"gelu", [](I in, P p) -> Outputs { return {tg::gelu(in[0], p.flag("approximate"))}; }},
      {"swiglu", [](I in, P) -> Outputs { return {tg::swiglu(in[0], in[1])}; }},
      {"silu_and_mul", [](I in, P) -> Outputs { return {tg::silu_and_mul(in[0])}; }},
      // ops/embedding.h (padding_idx null = none)
      {"embedding",
       [](I in, P p) -> Outputs {
         const std::optional<double> pad = p.opt_f64("padding_idx");
         return {tg::embedding(in[0], in[1],
                               pad ? std::optional<int64_t>(static_cast<int64_t>(*pad))
                                   : std::nullopt)};
       }},
      // ops/dropout.h (only the deterministic cases: eval, p = 0, p = 1)
      {"dropout",
       [](I in, P p) -> Outputs {
         return {tg::dropout(in[0], p.f64("p"), p.flag("training"))};
       }},
      // ops/layer_norm.h (inputs x, then weight if "weight", then bias if "bias")
      {"layer_norm",
       [](I in, P p) -> Outputs {
         size_t next = 1;
         const Tensor w = p.flag("weight") ? in[next++] : Tensor();
         const Tensor b = p.flag("bias") ? in[next++] : Tensor();
         return {tg::layer_norm(in[0], w, b, p.f64("eps"))};
       }},
      // ops/rope.h
      {"rope", [](I in, P p) -> Outputs { return {tg::rope(in[0], in[1], p.f64("theta"))}; }},
      // nn/optim.h, nn/grad_utils.h: 10 optimizer steps, and clip_grad_norm
      {"sgd_steps",
       [](I in, P p) -> Outputs {
         return optimizer_steps<tg::nn::SGD>(
             in, tg::nn::SGDOptions{.lr = p.f64("lr"),
                                    .momentum = p.f64("momentum"),
                                    .dampening = p.f64("dampening"),
                                    .weight_decay = p.f64("weight_decay"),
                                    .nesterov = p.flag("nesterov")});
       }},
      {"adam_steps",
       [](I in, P p) -> Outputs {
         return optimizer_steps<tg::nn::Adam>(
             in, tg::nn::AdamOptions{.lr = p.f64("lr"),
                                     .betas = {p.f64("beta1"), p.f64("beta2")},
                                     .eps = p.f64("eps"),
                                     .weight_decay = p.f64("weight_decay")});
       }},
      {"adamw_steps",
       [](I in, P p) -> Outputs {
         return optimizer_steps<tg::nn::AdamW>(
             in, tg::nn::AdamWOptions{.lr = p.f64("lr"),
                                      .betas = {p.f64("beta1"), p.f64("beta2")},
                                      .eps = p.f64("eps"),
                                      .weight_decay = p.f64("weight_decay")});
       }},
      {"clip_grad_norm",
       [](I in, P p) -> Outputs {
         std::vector<Tensor> params;
         for (const Tensor& g : in) {
           params.push_back(tg::zeros_like(g).requires_grad_());
           params.back().set_grad(g.clone());
         }
         const double norm_type =
             p.raw("norm_type") == "\"inf\"" ? INFINITY : p.f64("norm_type");
         const double total = tg::nn::clip_grad_norm(params, p.f64("max_norm"), norm_type);
         Outputs out = {tg::scalar_tensor(total, in[0].dtype())};
         for (const Tensor& w : params) out.push_back(w.grad());
         return out;
       }},
      // ops/attention.h (a fourth input is the mask)
      {"scaled_dot_product_attention",
       [](I in, P p) -> Outputs {
         return {tg::scaled_dot_product_attention(
             in[0], in[1], in[2], in.size() > 3 ? in[3] : Tensor(), p.flag("causal"),
             p.opt_f64("scale"), p.has("enable_gqa") && p.flag("enable_gqa"))};
       }},
      // ops/softmax.h
      {"softmax", [](I in, P p) -> Outputs { return {tg::softmax(in[0], p.i64("dim"))}; }},
      {"log_softmax", [](I in, P p) -> Outputs { return {tg::log_softmax(in[0], p.i64("dim"))}; }},
      // ops/cross_entropy.h
      {"cross_entropy",
       [](I in, P p) -> Outputs {
         const std::string reduction = p.str("reduction");
         const tg::CrossEntropyOptions o{.ignore_index = p.i64("ignore_index"),
                                         .reduction = reduction,
                                         .label_smoothing = p.f64("label_smoothing")};
         return {tg::cross_entropy(in[0], in[1], o)};
       }},
      // views and copies (core/tensor.h)
      {"view", [](I in, P p) -> Outputs { return {in[0].view(p.dims("shape"))}; }},
      {"reshape", [](I in, P p) -> Outputs { return {in[0].reshape(p.dims("shape"))}; }},
      {"permute", [](I in, P p) -> Outputs { return {in[0].permute(p.dims("dims"))}; }},
      {"transpose",
       [](I in, P p) -> Outputs { return {in[0].transpose(p.i64("dim0"), p.i64("dim1"))}; }},
      {"t", [](I in, P) -> Outputs { return {in[0].t()}; }},
      {"expand", [](I in, P p) -> Outputs { return {in[0].expand(p.dims("shape"))}; }},
      {"narrow",
       [](I in, P p) -> Outputs {
         return {in[0].narrow(p.i64("dim"), p.i64("start"), p.i64("length"))};
       }},
      {"slice",
       [](I in, P p) -> Outputs {
         return {in[0].slice(p.i64("dim"), p.i64("start"), p.i64("end"), p.i64("step"))};
       }},
      {"select", [](I in, P p) -> Outputs { return {in[0].select(p.i64("dim"), p.i64("index"))}; }},
      {"squeeze", [](I in, P) -> Outputs { return {in[0].squeeze()}; }},
      {"squeeze_dim", [](I in, P p) -> Outputs { return {in[0].squeeze(p.i64("dim"))}; }},
      {"unsqueeze", [](I in, P p) -> Outputs { return {in[0].unsqueeze(p.i64("dim"))}; }},
      {"flatten",
       [](I in, P p) -> Outputs { return {in[0].flatten(p.i64("start_dim"), p.i64("end_dim"))}; }},
      {"unflatten",
       [](I in, P p) -> Outputs { return {in[0].unflatten(p.i64("dim"), p.dims("sizes"))}; }},
      {"contiguous", [](I in, P) -> Outputs { return {in[0].contiguous()}; }},
      {"clone", [](I in, P) -> Outputs { return {in[0].clone()}; }},
      {"to", [](I in, P p) -> Outputs { return {in[0].to(p.dtype("dtype_out"))}; }},
  };
  return table;
}

// ------------------------------------------------------------------- comparing
std::string shape_text(const Tensor& t) { return fmt::format("{}", t.shape()); }

// Compares `actual` with `expected` under the tolerance of expected's dtype; the failure
// names `what`, the first element out of tolerance and how many are.
// Under autocast (`through` set) every value went through roundings to that dtype: two
// computations that differ in their last float32 bits land on neighbouring values, and a
// gradient summed from rounded terms (a broadcast weight's, attention's dq) carries their
// rounding errors, which scale with the terms rather than with the sum. So one unit of that
// dtype is allowed relative to each value and, absolutely, to the largest value of the tensor.
::testing::AssertionResult close_to(const Tensor& actual, const Tensor& expected,
                                    const std::string& op, const std::string& what,
                                    std::optional<DType> through = std::nullopt) {
  if (!actual.defined()) return ::testing::AssertionFailure() << what << ": no tensor computed";
  if (actual.dtype() != expected.dtype() || !(actual.shape() == expected.shape())) {
    return ::testing::AssertionFailure()
           << what << ": got " << tg::dtype_name(actual.dtype()) << " " << shape_text(actual)
           << ", PyTorch gave " << tg::dtype_name(expected.dtype()) << " " << shape_text(expected);
  }
  Tolerance tol = tolerance_for(through.value_or(expected.dtype()), op);
  const std::vector<double> a = as_doubles(actual);
  const std::vector<double> e = as_doubles(expected);
  if (through) {
    double largest = 0;
    for (double v : e) largest = std::isfinite(v) ? std::max(largest, std::abs(v)) : largest;
    tol.atol = std::max(tol.atol, tol.rtol * largest);
  }
  size_t bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    bool ok = false;
    if (std::isnan(e[i]) || std::isnan(a[i])) {
      ok = std::isnan(e[i]) && std::isnan(a[i]);
    } else if (std::isinf(e[i]) || std::isinf(a[i])) {
      ok = a[i] == e[i];
    } else {
      ok = std::abs(a[i] - e[i]) <= tol.atol + tol.rtol * std::abs(e[i]);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": " << bad << " of " << e.size() << " elements differ from PyTorch; "
         << fmt::format("first at flat index {}: got {}, PyTorch {} (atol {}, rtol {})", first,
                        a[first], e[first], tol.atol, tol.rtol);
}

// ------------------------------------------------------------------- running one case
// Rebuilds `values` with the strides that "<case>.layout.in<i>" describes (see generate.py).
Tensor with_layout(const Tensor& values, const std::string& layout) {
  std::istringstream words(layout);
  std::string kind;
  int64_t a = 0;
  int64_t b = 0;
  words >> kind >> a >> b;
  if (words.fail()) throw std::runtime_error("malformed layout '" + layout + "'");
  if (kind == "transpose") return values.transpose(a, b).contiguous().transpose(a, b);
  if (kind == "slice") {  // a = dim, b = step
    tg::Shape shape = values.shape();
    shape[static_cast<size_t>(a)] *= b;
    Tensor base = tg::zeros(shape, values.dtype());
    Tensor view = base.slice(a, 0, shape[static_cast<size_t>(a)], b);
    view.copy_(values);
    return view;
  }
  throw std::runtime_error("unknown layout '" + layout + "'");
}

// Runs case `name` of `contents`; adds the names of the tensors it read to `used`.
::testing::AssertionResult run_case(const tg::safetensors::Contents& contents,
                                    const std::string& name, std::set<std::string>* used) {
  const auto& tensors = contents.tensors;
  const auto& metadata = contents.metadata;
  auto fail = [&] { return ::testing::AssertionFailure() << "case " << name << ": "; };
  auto find = [&](const std::string& suffix) -> const Tensor* {
    const auto it = tensors.find(name + "." + suffix);
    if (it == tensors.end()) return nullptr;
    used->insert(it->first);
    return &it->second;
  };

  const auto op_it = metadata.find(name + ".op");
  if (op_it == metadata.end()) return fail() << "no '" << name << ".op' in the metadata";
  const auto fn_it = op_table().find(op_it->second);
  if (fn_it == op_table().end()) {
    return fail() << "op '" << op_it->second
                  << "' has no C++ mapping in reference_test.cpp's op table";
  }

  try {
    // Inputs in0, in1, ...; those with a reference gradient grad<i> require grad.
    Inputs inputs;
    std::vector<size_t> with_grad;
    for (size_t i = 0;; ++i) {
      const Tensor* values = find(fmt::format("in{}", i));
      if (values == nullptr) break;
      Tensor x = values->clone();
      const auto layout = metadata.find(fmt::format("{}.layout.in{}", name, i));
      if (layout != metadata.end()) {
        x = with_layout(*values, layout->second);
        if (x.is_contiguous()) return fail() << "layout '" << layout->second << "' is contiguous";
      }
      if (tensors.contains(fmt::format("{}.grad{}", name, i))) {
        x.requires_grad_();
        with_grad.push_back(i);
      }
      inputs.push_back(x);
    }
    if (inputs.empty()) return fail() << "no inputs";

    // An "autocast" case runs its op under the guard, as PyTorch ran it under torch.autocast.
    const Params params(metadata, name + ".");
    std::optional<DType> through;
    if (params.has("autocast")) through = params.dtype("autocast");
    Outputs outputs;
    {
      std::optional<tg::AutocastGuard> autocast;
      if (through) autocast.emplace(*through);
      outputs = fn_it->second(inputs, params);
    }

    // Outputs: "out" for one, "out0", "out1", ... for several.
    std::vector<std::string> out_names;
    if (tensors.contains(name + ".out")) {
      out_names.push_back("");
    } else {
      for (size_t k = 0; tensors.contains(fmt::format("{}.out{}", name, k)); ++k) {
        out_names.push_back(std::to_string(k));
      }
    }
    if (outputs.size() != out_names.size()) {
      return fail() << "tapegrad returned " << outputs.size() << " outputs, PyTorch "
                    << out_names.size();
    }
    Outputs seeded;
    Outputs gouts;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto r = close_to(outputs[k], *find("out" + out_names[k]), op_it->second,
                              "out" + out_names[k], through);
      if (!r) return fail() << r.message();
      if (const Tensor* gout = find("gout" + out_names[k])) {
        seeded.push_back(outputs[k]);
        gouts.push_back(*gout);
      }
    }

    // Gradients: every floating-point input must have one once an upstream gradient exists,
    // so that a generator change cannot silently drop the backward check.
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool listed = std::find(with_grad.begin(), with_grad.end(), i) != with_grad.end();
      if (!gouts.empty() && tg::is_floating_point(inputs[i].dtype()) && !listed) {
        return fail() << "input " << i << " is floating point but has no reference grad" << i;
      }
    }
    if (with_grad.empty()) return ::testing::AssertionSuccess();
    if (gouts.empty()) return fail() << "reference gradients but no upstream gradient";
    Inputs wrt;
    for (size_t i : with_grad) wrt.push_back(inputs[i]);
    const std::vector<Tensor> grads = tg::grad(seeded, wrt, gouts);
    for (size_t j = 0; j < with_grad.size(); ++j) {
      const std::string g = fmt::format("grad{}", with_grad[j]);
      const auto r = close_to(grads[j], *find(g), op_it->second, g, through);
      if (!r) return fail() << r.message();
    }
  } catch (const std::exception& e) {
    return fail() << "threw: " << e.what();
  }
  return ::testing::AssertionSuccess();
}

// The case names of a file: the prefixes of its "<case>.op" metadata keys.
std::vector<std::string> case_names(const tg::safetensors::Contents& contents) {
  std::vector<std::string> names;
  for (const auto& [key, value] : contents.metadata) {
    if (key.size() > 3 && key.ends_with(".op")) names.push_back(key.substr(0, key.size() - 3));
  }
  return names;
}

// Runs every case of `contents`; one failure per failing case, plus one per stray tensor
// (one that no passing case read, and that belongs to no failing case).
std::vector<std::string> run_all(const tg::safetensors::Contents& contents) {
  std::vector<std::string> failures;
  std::set<std::string> used;
  for (const std::string& name : case_names(contents)) {
    const auto r = run_case(contents, name, &used);
    if (r) continue;
    failures.push_back(r.message());
    for (const auto& [tensor_name, tensor] : contents.tensors) {
      if (tensor_name.starts_with(name + ".")) used.insert(tensor_name);
    }
  }
  for (const auto& [name, tensor] : contents.tensors) {
    if (!used.contains(name)) failures.push_back("tensor " + name + " was not used by any case");
  }
  return failures;
}

// ------------------------------------------------------------------- the fixtures
class ReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceTest, MatchesPyTorch) {
  const std::string path = fixture_path(GetParam());
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run /usr/bin/python3 tests/reference/generate.py";
  const tg::safetensors::Contents contents = tg::safetensors::load(path);
  const std::vector<std::string> names = case_names(contents);
  EXPECT_GE(names.size(), 5u) << path;
  for (const std::string& failure : run_all(contents)) ADD_FAILURE() << failure;
  RecordProperty("cases", static_cast<int>(names.size()));
}

INSTANTIATE_TEST_SUITE_P(Families, ReferenceTest, ::testing::ValuesIn(kFamilies),
                         [](const auto& family) { return family.param; });

// Attention's second kernel (ops/attention_tiled.cpp) against the same PyTorch fixtures, with
// tiles of 3 queries and 2 keys: most fixture lengths are not multiples of either.
TEST(ReferenceTiledAttentionTest, AttentionFixturesMatchPyTorch) {
  const tg::AttentionAlgorithmGuard tiled({tg::AttentionKernel::kTiled, 3, 2});
  const tg::safetensors::Contents contents = tg::safetensors::load(fixture_path("attention"));
  EXPECT_GE(case_names(contents).size(), 10u);
  for (const std::string& failure : run_all(contents)) ADD_FAILURE() << failure;
}

// Fixture files that hold no op cases and are run by other test programs, not by this one.
const std::set<std::string> kOtherFixtures = {
    "golden",  // whole training runs: tests/nn/golden_test.cpp
};

TEST(ReferenceCoverageTest, EveryFixtureFileIsRun) {
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(TAPEGRAD_FIXTURES_DIR)) {
    const std::string stem = entry.path().stem();
    if (entry.path().extension() == ".safetensors" && !kOtherFixtures.contains(stem)) {
      on_disk.insert(stem);
    }
  }
  EXPECT_EQ(on_disk, std::set<std::string>(kFamilies.begin(), kFamilies.end()));
}

TEST(ReferenceCoverageTest, EveryMappedOpHasAFixture) {
  std::set<std::string> seen;
  for (const std::string& family : kFamilies) {
    const auto contents = tg::safetensors::load(fixture_path(family));
    for (const std::string& name : case_names(contents))
      seen.insert(contents.metadata.at(name + ".op"));
  }
  for (const auto& [op, fn] : op_table()) EXPECT_TRUE(seen.contains(op)) << op;
}

// ------------------------------------------------------------------- the checker can fail
// A hand-made case in memory: add of (2) and (1), out = a + b, gout, grads gout and sum(gout).
tg::safetensors::Contents hand_made_add() {
  tg::safetensors::Contents c;
  c.tensors["c.in0"] = tg::tensor({1.0, 2.0});
  c.tensors["c.in1"] = tg::tensor({0.5});
  c.tensors["c.out"] = tg::tensor({1.5, 2.5});
  c.tensors["c.gout"] = tg::tensor({3.0, -1.0});
  c.tensors["c.grad0"] = tg::tensor({3.0, -1.0});
  c.tensors["c.grad1"] = tg::tensor({2.0});
  c.metadata["c.op"] = "add";
  return c;
}

std::string failure_of(const tg::safetensors::Contents& c) {
  const std::vector<std::string> failures = run_all(c);
  return failures.empty() ? "" : failures.front();
}

TEST(ReferenceSelfTest, HandMadeCasePasses) {
  EXPECT_THAT(run_all(hand_made_add()), ::testing::IsEmpty());
}

TEST(ReferenceSelfTest, PerturbedOutputFails) {
  auto c = hand_made_add();
  c.tensors["c.out"] = tg::tensor({1.5, 2.5 + 1e-8});  // far beyond float64's tolerance
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("case c", "out", "flat index 1"));
}

TEST(ReferenceSelfTest, PerturbedGradientFails) {
  auto c = hand_made_add();
  c.tensors["c.grad1"] = tg::tensor({2.001});
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("case c", "grad1", "2.001"));
}

TEST(ReferenceSelfTest, DifferenceWithinToleranceIsAccepted) {
  auto c = hand_made_add();
  c.tensors["c.out"] = tg::tensor({1.5, 2.5 + 1e-12});
  EXPECT_THAT(run_all(c), ::testing::IsEmpty());
}

TEST(ReferenceSelfTest, WrongShapeOrDTypeFails) {
  auto c = hand_made_add();
  c.tensors["c.out"] = tg::tensor({1.5, 2.5}, {2, 1});
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("out", "(2)", "(2, 1)"));
  c = hand_made_add();
  c.tensors["c.out"] = tg::tensor({1.5f, 2.5f});
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("out", "float64", "float32"));
}

TEST(ReferenceSelfTest, NaNMustMatchNaN) {
  auto c = hand_made_add();
  c.tensors["c.out"] = tg::tensor({1.5, std::nan("")});
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("out", "nan"));
}

TEST(ReferenceSelfTest, UnmappedOpFails) {
  auto c = hand_made_add();
  c.metadata["c.op"] = "frobnicate";
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("frobnicate", "no C++ mapping"));
}

TEST(ReferenceSelfTest, MissingGradientFails) {
  auto c = hand_made_add();
  c.tensors.erase("c.grad1");
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("input 1", "no reference grad1"));
}

TEST(ReferenceSelfTest, StrayTensorFails) {
  auto c = hand_made_add();
  c.tensors["c.grad7"] = tg::tensor({0.0});
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("c.grad7", "not used"));
}

TEST(ReferenceSelfTest, LayoutsAreRebuiltNonContiguous) {
  const Tensor v = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  const Tensor t = with_layout(v, "transpose 0 1");
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(as_doubles(t), as_doubles(v));
  const Tensor s = with_layout(v, "slice 1 2");
  EXPECT_FALSE(s.is_contiguous());
  EXPECT_EQ(s.stride(1), 2);
  EXPECT_EQ(as_doubles(s), as_doubles(v));
  EXPECT_THROW(with_layout(v, "shuffle 0 1"), std::runtime_error);
}

TEST(ReferenceSelfTest, ParamsParseJsonValues) {
  const std::map<std::string, std::string> m = {
      {"c.dims", "[0, -1]"}, {"c.k", "true"}, {"c.x", "0.1"},   {"c.n", "null"},
      {"c.s", "\"int64\""},  {"c.e", "[]"},   {"c.bad", "1.5x"}};
  const Params p(m, "c.");
  EXPECT_EQ(p.ints("dims"), (std::vector<int64_t>{0, -1}));
  EXPECT_TRUE(p.flag("k"));
  EXPECT_EQ(p.f64("x"), 0.1);
  EXPECT_FALSE(p.opt_f64("n").has_value());
  EXPECT_TRUE(p.ints("e").empty());
  EXPECT_EQ(p.dtype("s"), tg::kInt64);
  EXPECT_THROW(p.str("x"), std::runtime_error);
  EXPECT_THROW(p.f64("bad"), std::runtime_error);
  EXPECT_THROW(p.i64("x"), std::runtime_error);
  EXPECT_THROW(p.f64("missing"), std::runtime_error);
}

// An "autocast" case runs under the guard: a linear of float32 inputs returns bfloat16, so a
// fixture that says float32 (the rule broken) fails, and the same values in bfloat16 pass.
TEST(ReferenceSelfTest, AutocastCasesRunUnderTheGuard) {
  tg::safetensors::Contents c;
  c.tensors["c.in0"] = tg::tensor({1.0f, 2.0f}, {1, 2});
  c.tensors["c.in1"] = tg::tensor({0.5f, 0.25f}, {1, 2});
  c.tensors["c.out"] = tg::tensor({1.0f}, {1, 1});
  c.metadata["c.op"] = "linear";
  c.metadata["c.autocast"] = "\"bfloat16\"";
  EXPECT_THAT(failure_of(c),
              tg::testing::MessageHas("out", "got bfloat16", "PyTorch gave float32"));
  c.tensors["c.out"] = c.tensors["c.out"].to(tg::kBFloat16);
  EXPECT_THAT(run_all(c), ::testing::IsEmpty());
  c.metadata.erase("c.autocast");
  EXPECT_THAT(failure_of(c), tg::testing::MessageHas("out", "got float32"));
}

TEST(ReferenceSelfTest, HalfResultsMayDifferByOneUnitInTheLastPlace) {
  // 1.0 in float16 has neighbours 1 + 2^-10 and 1 + 2^-9 (one and two units away).
  const Tensor expected = tg::tensor({1.0, 1.0}).to(tg::kFloat16);
  const Tensor one_ulp = tg::tensor({1.0, 1.0 + std::ldexp(1.0, -10)}).to(tg::kFloat16);
  const Tensor two_ulps = tg::tensor({1.0, 1.0 + std::ldexp(1.0, -9)}).to(tg::kFloat16);
  EXPECT_TRUE(close_to(one_ulp, expected, "silu", "out"));
  EXPECT_FALSE(close_to(two_ulps, expected, "silu", "out"));
  // bfloat16 keeps 8 significant bits: its unit at 1.0 is 2^-7.
  const Tensor bf_expected = expected.to(tg::kBFloat16);
  EXPECT_TRUE(close_to(tg::tensor({1.0, 1.0 + std::ldexp(1.0, -7)}).to(tg::kBFloat16), bf_expected,
                       "silu", "out"));
  EXPECT_FALSE(close_to(tg::tensor({1.0, 1.0 + std::ldexp(1.0, -6)}).to(tg::kBFloat16), bf_expected,
                        "silu", "out"));
  // Conversions are correctly rounded, so `to` must match exactly.
  EXPECT_FALSE(close_to(one_ulp, expected, "to", "out"));
}

}  // namespace
