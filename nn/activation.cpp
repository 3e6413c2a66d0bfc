// nn/activation.cpp — the printed settings of GELU, and Dropout.
#include "nn/activation.h"

namespace tg::nn {

std::string GELU::extra_repr() const {
  return approximate ? "approximate='tanh'" : "approximate='none'";
}

Dropout::Dropout(double probability, Generator& gen)
    : UnaryModule("Dropout"), p(probability), gen_(&gen) {
  TG_CHECK(p >= 0.0 && p <= 1.0, ValueError, "Dropout: p must be in [0, 1], got {}", p);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p, is_training(), *gen_); }

std::string Dropout::extra_repr() const { return fmt::format("p={}", p); }

}  // namespace tg::nn
