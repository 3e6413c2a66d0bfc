// nn/sequential.cpp — Sequential's chain and MLP's layer list.
#include "nn/sequential.h"

#include "nn/activation.h"
#include "nn/linear.h"

namespace tg::nn {

UnaryModule& Sequential::push_back(std::unique_ptr<UnaryModule> layer) {
  TG_CHECK(layer != nullptr, ValueError, "{}::push_back: the layer is null", type_name());
  register_module(std::to_string(layers_.size()), *layer);
  layers_.push_back(std::move(layer));
  return *layers_.back();
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& layer : layers_) h = layer->forward(h);
  return h;
}

UnaryModule& Sequential::operator[](size_t i) const {
  TG_CHECK(i < layers_.size(), IndexError, "{}: index {} out of range for {} layers", type_name(),
           i, layers_.size());
  return *layers_[i];
}

namespace {

std::unique_ptr<UnaryModule> make_activation(Activation a) {
  switch (a) {
    case Activation::kReLU: return std::make_unique<ReLU>();
    case Activation::kSiLU: return std::make_unique<SiLU>();
    case Activation::kGELU: return std::make_unique<GELU>();
  }
  tg::detail::raise<ValueError>("MLP: unknown activation {}", static_cast<int>(a));
}

}  // namespace

MLP::MLP(const std::vector<int64_t>& sizes, MLPOptions options, Generator& gen)
    : Sequential("MLP") {
  TG_CHECK(sizes.size() >= 2, ValueError, "MLP: sizes needs at least {{in, out}}, got {} entries",
           sizes.size());
  for (int64_t s : sizes) {
    TG_CHECK(s > 0, ValueError, "MLP: every size must be positive, got {}", fmt::join(sizes, ", "));
  }
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    emplace_back<Linear>(sizes[i], sizes[i + 1],
                         LinearOptions{.bias = options.bias, .dtype = options.dtype}, gen);
    if (i + 2 < sizes.size()) push_back(make_activation(options.activation));
  }
}

}  // namespace tg::nn
