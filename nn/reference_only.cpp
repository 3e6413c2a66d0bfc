// nn/reference_only.cpp — compiled instead of nn/fast/ in a tree without that folder (a
// learner's student tree): no fast kernels to install; the optimizers run their reference
// update (nn/adam.h).
#include "nn/adam.h"

namespace tg::nn::detail {

bool install_fast_kernels() { return false; }

}  // namespace tg::nn::detail
