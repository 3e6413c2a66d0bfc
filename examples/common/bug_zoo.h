// examples/common/bug_zoo.h — four kernels with the bugs learners write most, each beside
// its repair, for course chapter 19 ("a bug zoo"). Every specimen is a real op on the tape
// (or a real forward), so the checks that catch it are the project's own: gradcheck, a
// reference implementation, a property of the op.
//
//   specimen                 bug                                   what catches it
//   bias_add                 db = the first row of dy, not the     gradcheck, on b
//                            sum over the broadcast rows
//   gather_rows              dtable[id] = g, not += g              gradcheck, only when an id
//                                                                  repeats in the inputs
//   rms_norm_f16             the sum of squares kept in float16    the float32 reference: an
//                            (it overflows past 65504)             f64 gradcheck cannot see it
//   causal_attention         query i also sees key i + 1           the causality property (and
//                                                                  the reference attention);
//                                                                  gradcheck passes: forward
//                                                                  and backward agree
//
// Each takes a Variant: kBroken runs the specimen, kRepaired the repair, which is the
// chapter's exercise (bug_zoo.repairs, fenced in bug_zoo.cpp).
#pragma once

#include "core/core.h"

namespace tg::examples::zoo {

enum class Variant { kBroken, kRepaired };

/// y (N, C) = x (N, C) + b (C), b broadcast over the rows. float64 only.
Tensor bias_add(const Tensor& x, const Tensor& b, Variant v);

/// out (N, D) = table (V, D) rows ids (N), as embedding does. float64 table, int64 ids.
Tensor gather_rows(const Tensor& table, const Tensor& ids, Variant v);

/// RMSNorm without a weight over the last dim of a float16 (rows, C) tensor, float16 out.
/// Forward only: the bug is in the forward.
Tensor rms_norm_f16(const Tensor& x, double eps, Variant v);

/// Causal softmax(q k^T / sqrt(D)) v from primitives (matmul, where, softmax), q, k, v
/// (B, T, D) float64; the mask says which keys query i sees (zoo_visible).
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, Variant v_);

/// Whether query i may see key j, as the specimen has it and as the repair has it.
bool visible(int64_t i, int64_t j, Variant v);

}  // namespace tg::examples::zoo
