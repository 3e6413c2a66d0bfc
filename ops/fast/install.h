// ops/fast/install.h — one function per op file of ops/fast/: each puts its fast kernels
// into the op's kernel pairs (ops/kernels.h). ops/fast/install.cpp calls them all, once,
// when the library starts.
#pragma once

namespace tg::fast {

void install_activation();
void install_attention();
void install_attention_tiled();
void install_cross_entropy();
void install_embedding();
void install_linear();
void install_matmul();
void install_reduce();
void install_rms_norm();
void install_swiglu();

}  // namespace tg::fast
