// file: examples/course/tensors_strides.cpp
// Chapter 1: shape, strides and offset. Finds elements of a tensor twice, once with at()
// and once by hand with the address formula
//
//     storage[offset + i0 * stride0 + i1 * stride1 + ...]
//
// for a fresh tensor, for a view that starts in the middle of the storage, and for a
// transposed view.
#include <fmt/format.h>

#include <string>

#include "core/core.h"

namespace {

// Prints the address computation for element `index` of the float tensor `t`, the value
// found at that address in the raw storage, and what Tensor::at() returns for comparison.
void show(const char* name, const tg::Tensor& t, const tg::DimVec& index) {
  const auto* storage = reinterpret_cast<const float*>(t.storage()->data());
  int64_t address = t.storage_offset();
  std::string sum = fmt::format("{}", address);
  for (size_t d = 0; d < t.dim(); ++d) {
    address += index[d] * t.strides()[d];
    sum += fmt::format(" + {}*{}", index[d], t.strides()[d]);
  }
  fmt::print("  {}{}: {} = {} -> storage[{}] = {}, at() = {}\n", name, index, sum, address, address,
             storage[address], t.at<float>(index));
}

void describe(const char* name, const tg::Tensor& t) {
  fmt::print("{}: shape {}, strides {}, offset {}\n", name, t.shape(), t.strides(),
             t.storage_offset());
}

}  // namespace

int main() {
  // 24 numbers in one flat block of memory, seen as 2 blocks of 3 rows of 4 columns.
  const tg::Tensor x = tg::arange(24).view({2, 3, 4});
  fmt::print("{}\n", x);
  describe("x", x);
  show("x", x, {0, 0, 0});
  show("x", x, {0, 1, 0});
  show("x", x, {1, 2, 3});

  // x[1, :, 1:3] is a view: it starts at element (1, 0, 1) of x, so its offset is not 0.
  const tg::Tensor y = x.select(0, 1).narrow(1, 1, 2);
  fmt::print("\ny = x[1, :, 1:3]\n{}\n", y);
  describe("y", y);
  show("y", y, {0, 0});
  show("y", y, {2, 1});

  // Swapping two dims swaps their (size, stride) pairs; the storage is untouched.
  const tg::Tensor z = x.transpose(1, 2);
  fmt::print("\nz = x.transpose(1, 2)\n");
  describe("z", z);
  show("z", z, {0, 3, 1});
  show("z", z, {1, 0, 2});
}
