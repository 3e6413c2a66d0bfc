// nn/recompute.h — activation checkpointing: run part of a model without keeping what its
// ops save for the backward, and run that part again when the backward needs it.
//
// What it trades. A forward keeps, for every op, the tensors its backward will read
// (chapter 18 counts them: most of a step's memory). recompute(fn, inputs, params) runs fn
// with the tape off, so none of fn's ops are recorded and none of their tensors kept; it
// records ONE node instead, which saves only fn's inputs. When the backward reaches that
// node, it runs fn again from the saved inputs, this time on the tape, differentiates the
// result with tg::grad, and hands the gradients of the inputs and of the parameters on.
// Memory: fn's activations exist only while its own backward runs, one recomputed piece at a
// time. Time: fn's forward runs twice, about a third more for a whole model (a backward
// costs about two forwards).
//
// The recomputation must see what the first run saw, or the gradients belong to another
// function: it runs under the same autocast state and attention algorithm, and from the
// same position of tg::default_generator() (a dropout inside fn draws the same mask); the
// generator's position after the backward is where it was before it. fn must not draw from
// any other generator, and must not change anything but its result. A parameter changed in
// place between the forward and the backward is a MisuseError, as for any saved tensor.
//
// PyTorch: torch.utils.checkpoint.checkpoint (use_reentrant=True), with the parameters
// named explicitly here instead of found by the engine.
// Tests: tests/nn/recompute_test.cpp. Course: docs/course/23-recompute.md.
#pragma once

#include <functional>
#include <vector>

#include "core/tensor.h"

namespace tg::nn {

/// fn(inputs), recorded as one node "recompute" that saves only `inputs` (see the top).
/// `params` are the leaves fn reads besides its inputs (a module's parameters()): the node
/// passes their gradients on as it does the inputs'. Without grad mode, or when nothing
/// requires grad, it is just fn(inputs).
Tensor recompute(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& params = {});

}  // namespace tg::nn
