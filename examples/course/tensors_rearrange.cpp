// file: examples/course/tensors_rearrange.cpp
// Chapter 1: a batch of images (B, C, H, W) rearranged into a batch of pixel "tokens"
// (B, H*W, C), with one row of C channel values per pixel. Each element of the input
// holds its own row-major index, so every printed number says where it came from.
#include <fmt/format.h>

#include "core/core.h"

int main() {
  const int64_t B = 2, C = 3, H = 2, W = 2;
  const tg::Tensor images = tg::arange(24).view({B, C, H, W});
  fmt::print("images: shape {}, strides {}\n", images.shape(), images.strides());

  // Step 1: move C to the end. A view: only the (size, stride) pairs are reordered.
  const tg::Tensor nhwc = images.permute({0, 2, 3, 1});
  fmt::print("nhwc = images.permute({{0, 2, 3, 1}}): shape {}, strides {}, contiguous {}\n",
             nhwc.shape(), nhwc.strides(), nhwc.is_contiguous());

  // Step 2: merge H and W. They are still adjacent in memory (stride 2 = 2 * stride 1),
  // so this reshape is a view as well.
  const tg::Tensor tokens = nhwc.reshape({B, H * W, C});
  fmt::print("tokens = nhwc.reshape({{B, H * W, C}}): shape {}, strides {}, contiguous {}\n",
             tokens.shape(), tokens.strides(), tokens.is_contiguous());
  fmt::print("tokens shares the images' storage: {}\n", tokens.storage() == images.storage());
  fmt::print("{}\n", tokens);

  // Check the meaning: tokens[b, h*W + w, c] must be images[b, c, h, w].
  int64_t checked = 0, wrong = 0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t w = 0; w < W; ++w) {
          ++checked;
          if (tokens.at<float>({b, h * W + w, c}) != images.at<float>({b, c, h, w})) ++wrong;
        }
      }
    }
  }
  fmt::print("checked {} elements, {} wrong\n", checked, wrong);

  // A kernel that wants each token's C values side by side asks for a contiguous copy.
  const tg::Tensor dense = tokens.contiguous();
  fmt::print("\ntokens.contiguous(): strides {}, shares storage: {}\n", dense.strides(),
             dense.storage() == images.storage());

  // The classic mistake: reshape without the permute. The shape is right, the meaning is
  // not: the first "token" is pixels 0, 1, 2 of channel 0 instead of pixel 0 of 3 channels.
  fmt::print("\nimages.reshape({{B, H * W, C}}) (wrong!):\n{}\n", images.reshape({B, H * W, C}));
}
