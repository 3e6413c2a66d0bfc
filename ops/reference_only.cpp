// ops/reference_only.cpp — compiled instead of ops/fast/ in a tree without that folder (a
// learner's student tree, tools/student_tree.cpp): there are no fast kernels to install,
// so every op runs its reference kernel (ops/kernels.h).
#include "ops/kernels.h"

namespace tg::detail {

bool install_fast_kernels() { return false; }

}  // namespace tg::detail
