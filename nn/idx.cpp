// nn/idx.cpp — the IDX reader: header, then data, each checked against the file's length.
#include "nn/idx.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "core/simd.h"  // TG_WIDE_VECTORS

namespace tg::nn {
namespace {

/// One IDX element type: its code in the magic, a name for messages, its size in bytes.
struct IdxType {
  uint8_t code;
  const char* name;
  size_t size;
};
constexpr std::array<IdxType, 6> kIdxTypes = {{{0x08, "unsigned byte", 1},
                                               {0x09, "signed byte", 1},
                                               {0x0B, "int16", 2},
                                               {0x0C, "int32", 4},
                                               {0x0D, "float32", 4},
                                               {0x0E, "float64", 8}}};

/// A gzFile that closes itself. gzread passes plain (non-gzip) files through unchanged.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    TG_CHECK(file_ != nullptr, ValueError, "read_idx: cannot open '{}': {}", path,
             errno != 0 ? std::strerror(errno) : "out of memory");
    gzbuffer(file_, 1 << 17);  // larger than zlib's 8 KiB default: fewer system calls
  }
  ~GzReader() { gzclose(file_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  /// Reads up to n bytes into `out`; fewer only at the end of the file.
  size_t read(void* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      const auto chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
      const int got = gzread(file_, static_cast<unsigned char*>(out) + done, chunk);
      int errnum = Z_OK;
      const char* message = gzerror(file_, &errnum);
      // A gzip stream cut short reads as Z_BUF_ERROR ("unexpected end of file").
      TG_CHECK(got >= 0 && errnum == Z_OK, ValueError,
               "read_idx: '{}' is not readable: corrupt or truncated gzip data ({})", path_,
               message);
      done += static_cast<size_t>(got);
      if (static_cast<unsigned>(got) < chunk) break;
    }
    return done;
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

/// An IDX file's header and its data bytes, still big-endian.
struct RawIdx {
  const IdxType* type = nullptr;
  Shape shape;
  int64_t numel = 0;
  std::vector<unsigned char> bytes;
};

std::string hex_bytes(const unsigned char* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}{:02x}", i == 0 ? "" : " ", p[i]);
  return out;
}

RawIdx read_raw(const std::string& path) {
  GzReader in(path);
  RawIdx raw;

  std::array<unsigned char, 4> magic{};
  const size_t got_magic = in.read(magic.data(), magic.size());
  TG_CHECK(got_magic == 4, ValueError,
           "read_idx: '{}' is too short for an IDX file: expected a 4-byte magic number "
           "(00 00 type ndims), got {} bytes",
           path, got_magic);
  TG_CHECK(magic[0] == 0 && magic[1] == 0, ValueError,
           "read_idx: '{}' is not an IDX file: expected a magic number starting with two "
           "zero bytes (00 00 type ndims), got {}",
           path, hex_bytes(magic.data(), 4));
  const auto type = std::ranges::find(kIdxTypes, magic[2], &IdxType::code);
  TG_CHECK(type != kIdxTypes.end(), ValueError,
           "read_idx: '{}' has the unknown IDX type code 0x{:02x}; expected 0x08 (unsigned "
           "byte), 0x09 (signed byte), 0x0b (int16), 0x0c (int32), 0x0d (float32) or "
           "0x0e (float64)",
           path, magic[2]);
  raw.type = &*type;

  const size_t ndims = magic[3];
  std::vector<unsigned char> dims(4 * ndims);
  const size_t got_dims = in.read(dims.data(), dims.size());
  TG_CHECK(got_dims == dims.size(), ValueError,
           "read_idx: '{}' is truncated: its header declares {} dims ({} bytes of sizes) but "
           "only {} bytes follow the magic number",
           path, ndims, dims.size(), got_dims);
  // The product of the sizes, refusing anything whose byte count would not fit in int64.
  const auto limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / raw.type->size;
  uint64_t numel = 1;
  bool overflow = false;
  for (size_t d = 0; d < ndims; ++d) {
    const unsigned char* p = dims.data() + 4 * d;
    const uint64_t size =
        (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | uint64_t{p[3]};
    raw.shape.push_back(static_cast<int64_t>(size));
    // Zero sizes are skipped: a tensor's strides are products of the other sizes, which
    // must fit even when the tensor is empty.
    if (size != 0 && numel > limit / size) overflow = true;
    numel = overflow || size == 0 ? numel : numel * size;
  }
  const bool empty_dim = std::ranges::find(raw.shape, 0) != raw.shape.end();
  TG_CHECK(!overflow, ValueError,
           "read_idx: '{}' declares the shape {} of {}, whose sizes multiply past what int64 "
           "can index; the header is corrupt",
           path, raw.shape, raw.type->name);
  raw.numel = empty_dim ? 0 : static_cast<int64_t>(numel);
  const size_t nbytes = static_cast<size_t>(raw.numel) * raw.type->size;

  // Grow the buffer with the data actually read (a lying header cannot make us allocate
  // gigabytes up front): reserve at most 64 MiB, then read in 1 MiB chunks.
  raw.bytes.reserve(std::min<size_t>(nbytes, size_t{1} << 26));
  while (raw.bytes.size() < nbytes) {
    const size_t old = raw.bytes.size();
    const size_t chunk = std::min<size_t>(nbytes - old, size_t{1} << 20);
    raw.bytes.resize(old + chunk);
    const size_t got = in.read(raw.bytes.data() + old, chunk);
    raw.bytes.resize(old + got);
    if (got < chunk) break;
  }
  TG_CHECK(raw.bytes.size() == nbytes, ValueError,
           "read_idx: '{}' is truncated: its header promises shape {} of {}, {} bytes of "
           "data, but only {} bytes follow the header",
           path, raw.shape, raw.type->name, nbytes, raw.bytes.size());
  unsigned char extra = 0;
  TG_CHECK(in.read(&extra, 1) == 0, ValueError,
           "read_idx: '{}' has trailing bytes after the {} bytes of data that its header "
           "(shape {} of {}) promises; the dims do not match the data",
           path, nbytes, raw.shape, raw.type->name);
  return raw;
}

/// Element i of the big-endian data, as a double (exact for every IDX type).
template <uint8_t kCode>
double element(const unsigned char* p) {
  if constexpr (kCode == 0x08) {
    return p[0];
  } else if constexpr (kCode == 0x09) {
    return static_cast<signed char>(p[0]);
  } else if constexpr (kCode == 0x0B) {
    return static_cast<int16_t>(static_cast<uint16_t>((p[0] << 8) | p[1]));
  } else {
    uint64_t bits = 0;
    constexpr size_t n = kCode == 0x0E ? 8 : 4;
    for (size_t k = 0; k < n; ++k) bits = (bits << 8) | p[k];
    if constexpr (kCode == 0x0C) return static_cast<int32_t>(static_cast<uint32_t>(bits));
    if constexpr (kCode == 0x0D) return std::bit_cast<float>(static_cast<uint32_t>(bits));
    if constexpr (kCode == 0x0E) return std::bit_cast<double>(bits);
  }
}

template <uint8_t kCode, class T>
void decode(const RawIdx& raw, T* out) {
  constexpr size_t size = kCode == 0x0E ? 8 : kCode == 0x0B ? 2 : kCode >= 0x0C ? 4 : 1;
  for (int64_t i = 0; i < raw.numel; ++i) {
    out[i] = convert<T>(element<kCode>(raw.bytes.data() + static_cast<size_t>(i) * size));
  }
}

Tensor to_tensor(const RawIdx& raw, DType dtype) {
  Tensor out = empty(raw.shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    T* o = out.data<T>();
    switch (raw.type->code) {
      case 0x08: return decode<0x08>(raw, o);
      case 0x09: return decode<0x09>(raw, o);
      case 0x0B: return decode<0x0B>(raw, o);
      case 0x0C: return decode<0x0C>(raw, o);
      case 0x0D: return decode<0x0D>(raw, o);
      default: return decode<0x0E>(raw, o);
    }
  });
  return out;
}

/// `dir/name.gz`, or `dir/name` unpacked; an error saying how to get it if neither exists.
std::string find_fashion_file(const std::string& dir, const std::string& name,
                              std::string_view what, std::string_view who) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(dir) / name;
  std::error_code ec;
  const std::string gz = base.string() + ".gz";
  if (fs::is_regular_file(gz, ec)) return gz;
  if (fs::is_regular_file(base, ec)) return base.string();
  tg::detail::raise<ValueError>(
      "{}: expected the Fashion-MNIST {} in IDX format at '{}' (or unpacked "
      "at '{}'), but there is no such file; install Debian's copy with `apt-get install "
      "dataset-fashion-mnist` (it goes to {}) or pass the directory that holds the four files",
      who, what, gz, base.string(), kFashionMnistDir);
}

void check_ubyte(const RawIdx& raw, const std::string& path, std::string_view who) {
  TG_CHECK(raw.type->code == 0x08, ValueError,
           "{}: expected unsigned bytes (IDX type 0x08) in '{}', got {}", who, path,
           raw.type->name);
}

}  // namespace

Tensor read_idx(const std::string& path, DType dtype) { return to_tensor(read_raw(path), dtype); }

FashionMnist::FashionMnist(const std::string& dir, std::string_view split,
                           const FashionMnistOptions& options)
    : FashionMnist(dir, split, options, "FashionMnist") {}

FashionMnist::FashionMnist(const std::string& dir, std::string_view split,
                           const FashionMnistOptions& options, std::string_view who) {
  TG_CHECK(split == "train" || split == "test", ValueError,
           "{}: split must be \"train\" or \"test\", got \"{}\"", who, split);
  const std::string prefix = split == "train" ? "train" : "t10k";
  const std::string images_path =
      find_fashion_file(dir, prefix + "-images-idx3-ubyte", fmt::format("{} images", split), who);
  const std::string labels_path =
      find_fashion_file(dir, prefix + "-labels-idx1-ubyte", fmt::format("{} labels", split), who);

  RawIdx images = read_raw(images_path);
  check_ubyte(images, images_path, who);
  TG_CHECK(images.shape.size() == 3 && images.shape[1] == 28 && images.shape[2] == 28, ValueError,
           "{}: expected images of shape (N, 28, 28) in '{}', got {}", who, images_path,
           images.shape);
  RawIdx labels = read_raw(labels_path);
  check_ubyte(labels, labels_path, who);
  const int64_t n = images.shape[0];
  TG_CHECK(labels.shape.size() == 1 && labels.shape[0] == n, ValueError,
           "{}: expected {} labels (one per image of '{}') in '{}', got shape {}", who, n,
           images_path, labels_path, labels.shape);
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char label = labels.bytes[static_cast<size_t>(i)];
    TG_CHECK(label <= 9, ValueError,
             "{}: label {} of sample {} in '{}' is outside the 10 classes 0..9", who, label, i,
             labels_path);
  }
  pixels_ = std::move(images.bytes);
  labels_ = std::move(labels.bytes);
  normalize_ = options.normalize;
}

namespace {

/// One image: 784 bytes to floats, normalised with the benchmark's float32 steps
/// x.div_(255).sub_(0.2860).div_(0.3530), so the inputs match PyTorch's bit for bit. (A
/// table of the 256 possible floats would do too, but a lookup per byte does not vectorise;
/// this loop widens and divides 16 bytes at once, and division is correctly rounded in
/// vectors as in scalars.)
TG_WIDE_VECTORS void widen_image(const unsigned char* __restrict src, float* __restrict dst,
                                 bool normalize) {
  if (normalize) {
    for (int k = 0; k < 784; ++k)
      dst[k] = (static_cast<float>(src[k]) / 255.0f - 0.2860f) / 0.3530f;
  } else {
    for (int k = 0; k < 784; ++k) dst[k] = static_cast<float>(src[k]);
  }
}

}  // namespace

std::vector<Tensor> FashionMnist::get_batch(const Tensor& indices) const {
  TG_CHECK(indices.defined() && indices.dtype() == kInt64 && indices.dim() == 1, ValueError,
           "FashionMnist.get_batch: indices must be a 1-D int64 tensor, got {}",
           indices.defined() ? fmt::format("{} of shape {}", indices.dtype(), indices.shape())
                             : std::string("an undefined tensor"));
  const std::vector<int64_t> rows = indices.to_vector<int64_t>();
  const auto b = static_cast<int64_t>(rows.size());
  for (int64_t r = 0; r < b; ++r) {
    const int64_t i = rows[static_cast<size_t>(r)];
    TG_CHECK(i >= 0 && i < size(), IndexError,
             "FashionMnist.get_batch: index {} (position {}) is out of range for {} samples", i, r,
             size());
  }
  Tensor images = empty({b, 784}, kFloat32);
  Tensor labels = empty({b}, kInt64);
  float* x = images.data<float>();
  int64_t* y = labels.data<int64_t>();
  // An image reads 784 bytes and writes 784 floats; images go to threads whole. A shuffled
  // batch reads its images from all over the data set, so each one starts with a wait for
  // memory: the next image's cache lines are asked for while this one is widened.
  parallel_rows(b, 2 * 784, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto i = static_cast<size_t>(rows[static_cast<size_t>(r)]);
      if (r + 1 < end) {
        const unsigned char* next = pixels_.data() + rows[static_cast<size_t>(r + 1)] * 784;
        for (int line = 0; line < 784; line += 64) __builtin_prefetch(next + line);
        __builtin_prefetch(next + 783);
      }
      widen_image(pixels_.data() + i * 784, x + r * 784, normalize_);
      y[r] = labels_[i];
    }
  });
  return {std::move(images), std::move(labels)};
}

void FashionMnist::truncate(int64_t n) {
  TG_CHECK(n >= 0 && n <= size(), ValueError,
           "FashionMnist.truncate: n must be in [0, {}], the samples there are, got {}", size(), n);
  pixels_.resize(static_cast<size_t>(n) * 784);
  pixels_.shrink_to_fit();
  labels_.resize(static_cast<size_t>(n));
  labels_.shrink_to_fit();
}

MnistSplit load_fashion_mnist(const std::string& dir, std::string_view split,
                              const FashionMnistOptions& options) {
  const FashionMnist data(dir, split, options, "load_fashion_mnist");
  std::vector<Tensor> all =
      data.get_batch(arange(0.0, static_cast<double>(data.size()), 1.0, kInt64));
  return {std::move(all[0]), std::move(all[1])};
}

}  // namespace tg::nn
