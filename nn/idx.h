// nn/idx.h — reading IDX files (the MNIST format), plain or gzip-compressed, and
// Fashion-MNIST.
//
// An IDX file is a tiny header followed by raw big-endian data:
//
//   bytes 0-1   0x00 0x00                      (the magic's two zero bytes)
//   byte  2     type code: 0x08 unsigned byte, 0x09 signed byte, 0x0B int16,
//               0x0C int32, 0x0D float32, 0x0E float64
//   byte  3     ndims, the number of dims
//   then        ndims sizes, each a big-endian uint32
//   then        prod(sizes) elements of the type, big-endian, row-major
//
// e.g. train-images-idx3-ubyte holds 0x00000803, then 60000, 28, 28, then 47,040,000 pixel
// bytes. The reader opens files with zlib's gzopen, which reads gzip-compressed and plain
// files alike, so `train-images-idx3-ubyte.gz` needs no unpacking. It trusts nothing: a
// short header, a bad magic, an unknown type code, sizes whose product overflows, too little
// data or bytes left over after it each give a tg::ValueError that names the file and what
// was expected. A header cannot make the reader allocate more than 64 MiB before the data
// it promises has actually been read.
//
// Fashion-MNIST comes two ways: load_fashion_mnist gives a split as float32 tensors, the
// simplest thing to train on; nn::FashionMnist keeps the images as the file's bytes, a
// quarter of the memory (47 MB instead of 188 for the training split), and widens to float32
// only the batch a DataLoader asks for.
//
// PyTorch equivalent: torchvision.datasets.FashionMNIST (which unpacks the same files and
// keeps uint8 images), with the transforms ToTensor() and Normalize((0.2860,), (0.3530,)).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/core.h"
#include "nn/loader.h"
#include "ops/ops.h"

namespace tg::nn {

/// The values of an IDX file, converted to `dtype`, with the shape its header gives
/// (e.g. (10000, 28, 28) for t10k-images-idx3-ubyte.gz). The bytes 0..255 of an image file
/// become the floats 0..255; read labels with kInt64. Reads `.gz` files directly.
Tensor read_idx(const std::string& path, DType dtype = kFloat32);

/// Settings of load_fashion_mnist.
struct FashionMnistOptions {
  /// Scale pixels as the benchmark does: x / 255, then (x - 0.2860) / 0.3530, in float32.
  /// Off: the raw values 0..255 as float32.
  bool normalize = true;
};

/// One split of an MNIST-style data set, ready for training.
struct MnistSplit {
  Tensor images;  ///< (N, 784) float32, one flattened 28x28 image per row
  Tensor labels;  ///< (N) int64, class ids 0..9
};

/// Where Debian's `dataset-fashion-mnist` package installs the four files.
inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Fashion-MNIST's "train" (60000 images) or "test" (10000) split from `dir`, which holds
/// train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and
/// t10k-labels-idx1-ubyte.gz (each may also be present unpacked, without `.gz`). A missing
/// file gives an error that says how to get it: `apt-get install dataset-fashion-mnist`.
MnistSplit load_fashion_mnist(const std::string& dir = std::string(kFashionMnistDir),
                              std::string_view split = "train",
                              const FashionMnistOptions& options = {});

/// A split of Fashion-MNIST as a Dataset for DataLoader: the same files, checks and values as
/// load_fashion_mnist, but the images stay bytes until a batch of them is gathered.
///
///   auto train = std::make_shared<nn::FashionMnist>(dir, "train");
///   nn::DataLoader loader(train, {.batch_size = 128}, gen);  // batch[0] (B, 784) float32
class FashionMnist final : public Dataset {
 public:
  explicit FashionMnist(const std::string& dir = std::string(kFashionMnistDir),
                        std::string_view split = "train", const FashionMnistOptions& options = {});

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  /// {images (B, 784) float32, labels (B) int64} of the samples `indices` (int64, 1-D), the
  /// rows load_fashion_mnist would give for them, bit for bit.
  std::vector<Tensor> get_batch(const Tensor& indices) const override;
  /// Keeps only the first n samples (0 <= n <= size()): a subset for a quick run.
  void truncate(int64_t n);

 private:
  friend MnistSplit load_fashion_mnist(const std::string&, std::string_view,
                                       const FashionMnistOptions&);
  // `who` is the function the errors name: FashionMnist or load_fashion_mnist.
  FashionMnist(const std::string& dir, std::string_view split, const FashionMnistOptions& options,
               std::string_view who);

  std::vector<unsigned char> pixels_;  // size() * 784 bytes, image after image
  std::vector<unsigned char> labels_;  // size() class ids, each 0..9
  bool normalize_ = true;              // FashionMnistOptions::normalize
};

}  // namespace tg::nn
