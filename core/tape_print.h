// core/tape_print.h — looking at the tape: as text, and as a Graphviz picture.
//
// tg::backward replays the nodes that lead to a tensor in reverse tape order (see
// core/autograd.h). These two functions show you that list before you run it:
//
//   print_tape(loss)   one line per recorded op, oldest first: its position, name, input
//                      shapes (and where each input came from) -> output shapes, the bytes
//                      it saved for backward, and the line of your code that called it;
//   to_dot(loss)       the same graph in Graphviz DOT, drawn as PyTorch's torchviz draws
//                      it: leaves (ellipses) -> ops (boxes) -> ... -> the op that made
//                      `loss`. After a backward, each leaf also shows a summary of its
//                      values and the L2 norm of its .grad. Render with
//                      `dot -Tsvg tape.dot -o tape.svg`.
//
// Both only read the graph: they never run a backward or free anything.
#pragma once

#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"

namespace tg {

/// One op on the tape, as print_tape lists it, for programs that count what a step costs
/// (nn/accounting.h) without reading text.
struct TapeEntry {
  std::string op;                   // the op's name: "linear"
  std::vector<TensorMeta> inputs;   // shape and dtype of each tensor input, in order
  std::vector<TensorMeta> outputs;  // and of each output
  size_t saved_bytes = 0;           // what it saved for backward (0 once backward freed it)
};

/// The ops on the tape that `root` depends on, oldest first: the rows of print_tape.
/// MisuseError if root is undefined; empty for a leaf.
std::vector<TapeEntry> tape_entries(const Tensor& root);

/// The ops on the tape that `root` depends on, one line each in tape order (oldest first),
/// then the total number of bytes they saved for backward. MisuseError if root is undefined.
std::string print_tape(const Tensor& root);

/// The graph that leads to `root` as Graphviz DOT text: one box per op node (position,
/// op name, output shapes), one ellipse per leaf tensor (shape, dtype; value min/mean/max
/// and gradient norm once it has a .grad), edges from inputs to the ops that use them.
std::string to_dot(const Tensor& root);

}  // namespace tg
