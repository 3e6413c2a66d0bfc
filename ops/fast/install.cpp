// ops/fast/install.cpp — puts every fast kernel of ops/fast/ into its op's kernel pair. Called
// once, on the first use of the switch (ops/kernels.cpp); a tree without ops/fast/ compiles
// ops/reference_only.cpp instead.
#include "ops/fast/install.h"
#include "ops/kernels.h"

namespace tg::detail {

bool install_fast_kernels() {
  fast::install_activation();
  fast::install_attention();
  fast::install_attention_tiled();
  fast::install_cross_entropy();
  fast::install_embedding();
  fast::install_linear();
  fast::install_matmul();
  fast::install_reduce();
  fast::install_rms_norm();
  fast::install_swiglu();
  return true;
}

}  // namespace tg::detail
