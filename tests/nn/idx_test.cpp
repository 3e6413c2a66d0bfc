// tests/nn/idx_test.cpp — the IDX reader on files the tests write (plain and gzipped), every
// malformed-file error, and the real Fashion-MNIST test split when it is installed.
#include "nn/idx.h"

#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace tg::nn {
namespace {

namespace fs = std::filesystem;

/// A fresh directory for one test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::path(::testing::TempDir()) /
            fmt::format("tapegrad_idx_{}_{}", info->name(), ::getpid());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

/// The 4 big-endian bytes of n.
std::string be32(uint32_t n) {
  return {static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xff),
          static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
}

/// An IDX file: magic 00 00 type ndims, the sizes, then `data` as is.
std::string idx_file(uint8_t type, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string out{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) out += be32(d);
  return out + data;
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

void write_plain(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

void write_gz(const std::string& path, const std::string& content) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!content.empty()) {
    ASSERT_EQ(gzwrite(f, content.data(), static_cast<unsigned>(content.size())),
              static_cast<int>(content.size()));
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kSmall = idx_file(0x08, {2, 3}, bytes({0, 1, 2, 253, 254, 255}));

TEST(IdxTest, ReadsPlainUnsignedBytesAsFloat32) {
  TempDir dir;
  write_plain(dir / "a-idx2-ubyte", kSmall);
  const Tensor t = read_idx(dir / "a-idx2-ubyte");
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.shape(), Shape({2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 253, 254, 255}));
}

TEST(IdxTest, ReadsGzippedFileAsInt64) {
  TempDir dir;
  write_gz(dir / "a-idx2-ubyte.gz", kSmall);
  // The .gz really is compressed, not the plain bytes under another name.
  ASSERT_EQ(read_bytes(dir / "a-idx2-ubyte.gz").substr(0, 2), "\x1f\x8b");
  const Tensor t = read_idx(dir / "a-idx2-ubyte.gz", kInt64);
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(t.shape(), Shape({2, 3}));
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 253, 254, 255}));
}

TEST(IdxTest, ReadsEveryTypeCodeBigEndian) {
  TempDir dir;
  struct Case {
    uint8_t type;
    std::string data;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {0x09, bytes({0xff, 0x7f, 0x80}), {-1, 127, -128}},
      {0x0B, bytes({0xff, 0xfe, 0x01, 0x2c, 0x80, 0x00}), {-2, 300, -32768}},
      {0x0C,
       bytes({0xff, 0xfe, 0xee, 0x90, 0x00, 0x01, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff}),
       {-70000, 65536, 2147483647}},
      // 1.5f = 0x3fc00000, -0.25f = 0xbe800000, 1e-3f = 0x3a83126f
      {0x0D,
       bytes({0x3f, 0xc0, 0, 0, 0xbe, 0x80, 0, 0, 0x3a, 0x83, 0x12, 0x6f}),
       {1.5, -0.25, static_cast<double>(1e-3f)}},
      // 0.1 = 0x3fb999999999999a, -2 = 0xc000000000000000, 1e300 = 0x7e37e43c8800759c
      {0x0E,
       bytes({0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a, 0xc0, 0,    0,    0,
              0,    0,    0,    0,    0x7e, 0x37, 0xe4, 0x3c, 0x88, 0x00, 0x75, 0x9c}),
       {0.1, -2.0, 1e300}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("type 0x{:02x}", c.type));
    write_plain(dir / "t", idx_file(c.type, {3}, c.data));
    const Tensor t = read_idx(dir / "t", kFloat64);
    EXPECT_EQ(t.shape(), Shape({3}));
    EXPECT_EQ(t.to_vector<double>(), c.expected);
  }
}

TEST(IdxTest, HigherRankAndEmptyDims) {
  TempDir dir;
  write_plain(dir / "r3", idx_file(0x08, {2, 1, 2}, bytes({9, 8, 7, 6})));
  const Tensor t = read_idx(dir / "r3", kInt64);
  EXPECT_EQ(t.shape(), Shape({2, 1, 2}));
  EXPECT_EQ(t.at<int64_t>({1, 0, 0}), 7);
  write_plain(dir / "empty", idx_file(0x08, {0, 28, 28}, ""));
  const Tensor e = read_idx(dir / "empty");
  EXPECT_EQ(e.shape(), Shape({0, 28, 28}));
  EXPECT_EQ(e.numel(), 0);
  // An empty tensor still needs strides that fit: the other sizes' product must not overflow.
  write_plain(dir / "zero", idx_file(0x08, {0xffffffff, 0xffff, 0}, ""));
  EXPECT_EQ(read_idx(dir / "zero").shape(), Shape({0xffffffff, 0xffff, 0}));
  write_plain(dir / "zero_overflow", idx_file(0x08, {0xffffffff, 0xffffffff, 0xffffffff, 0}, ""));
  EXPECT_TG_THROW(read_idx(dir / "zero_overflow"), ValueError, "multiply past what int64");
}

// ---- malformed files: each error names the file and what was expected

TEST(IdxTest, MissingFile) {
  TempDir dir;
  EXPECT_TG_THROW(read_idx(dir / "nope.gz"), ValueError, "read_idx", "cannot open", dir / "nope.gz",
                  "No such file");
}

TEST(IdxTest, TruncatedMagic) {
  TempDir dir;
  write_plain(dir / "empty", "");
  EXPECT_TG_THROW(read_idx(dir / "empty"), ValueError, "read_idx", dir / "empty", "too short",
                  "4-byte magic", "got 0 bytes");
  write_gz(dir / "two.gz", bytes({0, 0}));
  EXPECT_TG_THROW(read_idx(dir / "two.gz"), ValueError, "too short", "got 2 bytes");
}

TEST(IdxTest, TruncatedDims) {
  TempDir dir;
  write_plain(dir / "f", bytes({0, 0, 8, 3, 0, 0, 0, 2, 0}));
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f", "truncated", "declares 3 dims",
                  "12 bytes of sizes", "only 5 bytes");
}

TEST(IdxTest, TruncatedData) {
  TempDir dir;
  write_plain(dir / "f", kSmall.substr(0, kSmall.size() - 2));
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f", "truncated", "shape (2, 3)",
                  "unsigned byte", "6 bytes of data", "only 4 bytes");
  write_gz(dir / "f.gz", kSmall.substr(0, kSmall.size() - 6));
  EXPECT_TG_THROW(read_idx(dir / "f.gz"), ValueError, "truncated", "only 0 bytes");
}

TEST(IdxTest, BadMagic) {
  TempDir dir;
  write_plain(dir / "f", "PK\x03\x04rest");
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f", "not an IDX file", "00 00 type ndims",
                  "got 50 4b 03 04");
}

TEST(IdxTest, UnknownTypeCode) {
  TempDir dir;
  write_plain(dir / "f", idx_file(0x0A, {1}, "x"));
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f", "unknown IDX type code 0x0a",
                  "0x08 (unsigned byte)");
}

TEST(IdxTest, TrailingBytes) {
  TempDir dir;
  write_plain(dir / "f", kSmall + "zz");
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f", "trailing bytes", "6 bytes of data",
                  "shape (2, 3) of unsigned byte", "do not match");
  write_gz(dir / "f.gz", kSmall + "z");
  EXPECT_TG_THROW(read_idx(dir / "f.gz"), ValueError, "trailing bytes");
}

TEST(IdxTest, DimsDisagreeWithData) {
  TempDir dir;
  const std::string six = bytes({1, 2, 3, 4, 5, 6});
  write_plain(dir / "small", idx_file(0x08, {2, 2}, six));  // promises 4, holds 6
  EXPECT_TG_THROW(read_idx(dir / "small"), ValueError, "trailing bytes", "shape (2, 2)");
  write_plain(dir / "big", idx_file(0x08, {3, 3}, six));  // promises 9, holds 6
  EXPECT_TG_THROW(read_idx(dir / "big"), ValueError, "truncated", "shape (3, 3)", "9 bytes",
                  "only 6 bytes");
  write_plain(dir / "wide", idx_file(0x0E, {1}, six));  // one float64 needs 8 bytes
  EXPECT_TG_THROW(read_idx(dir / "wide"), ValueError, "truncated", "float64", "8 bytes");
}

TEST(IdxTest, DimsProductOverflow) {
  TempDir dir;
  write_plain(dir / "f", idx_file(0x08, {0xffffffff, 0xffffffff, 0xffffffff}, "abc"));
  EXPECT_TG_THROW(read_idx(dir / "f"), ValueError, dir / "f",
                  "(4294967295, 4294967295, 4294967295)", "multiply past what int64");
  // A huge but representable size is not allocated up front: the reader reports truncation.
  write_plain(dir / "g", idx_file(0x0E, {0xffffffff, 0xffff}, "abc"));
  EXPECT_TG_THROW(read_idx(dir / "g"), ValueError, "truncated", "only 3 bytes");
}

TEST(IdxTest, CorruptGzipStream) {
  TempDir dir;
  // Enough data that the compressed stream is long, then cut it in the middle.
  std::string data;
  for (int i = 0; i < 4000; ++i) data.push_back(static_cast<char>((i * 7919) % 251));
  write_gz(dir / "full.gz", idx_file(0x08, {4000}, data));
  const std::string gz = read_bytes(dir / "full.gz");
  write_plain(dir / "cut.gz", gz.substr(0, gz.size() / 2));
  EXPECT_TG_THROW(read_idx(dir / "cut.gz"), ValueError, dir / "cut.gz",
                  "corrupt or truncated gzip");
  std::string flipped = gz;
  flipped[gz.size() / 2] = static_cast<char>(~flipped[gz.size() / 2]);
  write_plain(dir / "flipped.gz", flipped);
  EXPECT_THROW(read_idx(dir / "flipped.gz"), ValueError);
  EXPECT_EQ(read_idx(dir / "full.gz", kInt64).at<int64_t>({3999}), (3999 * 7919) % 251);
}

// Every prefix of a valid file, plain and gzipped, and every single-byte change of its
// header, is rejected with a ValueError or read correctly; never a crash (see the sanitizer
// build) or an out-of-bounds read.
TEST(IdxTest, EveryPrefixAndHeaderCorruptionIsHandled) {
  TempDir dir;
  const std::string full = idx_file(0x0B, {2, 3}, std::string(12, '\x01'));
  for (size_t n = 0; n < full.size(); ++n) {
    write_plain(dir / "p", full.substr(0, n));
    EXPECT_THROW(read_idx(dir / "p"), ValueError) << "prefix of " << n << " bytes";
    write_gz(dir / "p.gz", full.substr(0, n));
    EXPECT_THROW(read_idx(dir / "p.gz"), ValueError) << "gzipped prefix of " << n << " bytes";
  }
  for (size_t pos = 0; pos < 12; ++pos) {
    for (int v : {0x00, 0x01, 0x0C, 0x7f, 0xff}) {
      std::string bad = full;
      bad[pos] = static_cast<char>(v);
      write_plain(dir / "h", bad);
      try {
        // Read successfully: then the header must describe exactly the bytes that follow.
        const Tensor t = read_idx(dir / "h");
        const auto type = static_cast<unsigned char>(bad[2]);
        const size_t size = type == 0x0E ? 8 : type >= 0x0C ? 4 : type == 0x0B ? 2 : 1;
        const size_t ndims = static_cast<unsigned char>(bad[3]);
        EXPECT_EQ(4 + 4 * ndims + static_cast<size_t>(t.numel()) * size, bad.size())
            << "byte " << pos << " set to " << v;
      } catch (const ValueError&) {
      }
    }
  }
}

// ---- Fashion-MNIST

/// A fake Fashion-MNIST directory holding `n` test images (pixel i of image k is (k + i) %
/// 256) and labels k % 10, gzipped.
void write_fake_fashion(const TempDir& dir, uint32_t n, bool gz = true) {
  std::string pixels;
  std::string labels;
  for (uint32_t k = 0; k < n; ++k) {
    for (uint32_t i = 0; i < 784; ++i) pixels.push_back(static_cast<char>((k + i) % 256));
    labels.push_back(static_cast<char>(k % 10));
  }
  auto write = gz ? write_gz : write_plain;
  const std::string ext = gz ? ".gz" : "";
  write(dir / ("t10k-images-idx3-ubyte" + ext), idx_file(0x08, {n, 28, 28}, pixels));
  write(dir / ("t10k-labels-idx1-ubyte" + ext), idx_file(0x08, {n}, labels));
}

TEST(FashionMnistTest, NormalisesLikeTheBenchmark) {
  TempDir dir;
  write_fake_fashion(dir, 3);
  const MnistSplit s = load_fashion_mnist(dir.str(), "test");
  EXPECT_EQ(s.images.shape(), Shape({3, 784}));
  EXPECT_EQ(s.images.dtype(), kFloat32);
  EXPECT_EQ(s.labels.shape(), Shape({3}));
  EXPECT_EQ(s.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  // PyTorch: torch.tensor([0., 128., 255.]).div_(255).sub_(0.2860).div_(0.3530), bit for bit.
  EXPECT_EQ(s.images.at<float>({0, 0}), -0.8101983666419983f);
  EXPECT_EQ(s.images.at<float>({0, 128}), 0.6117870211601257f);
  EXPECT_EQ(s.images.at<float>({0, 255}), 2.022662878036499f);
  EXPECT_EQ(s.images.at<float>({2, 126}), 0.6117870211601257f);  // (2 + 126) % 256 = 128

  const MnistSplit raw = load_fashion_mnist(dir.str(), "test", {.normalize = false});
  EXPECT_EQ(raw.images.at<float>({1, 783}), static_cast<float>((1 + 783) % 256));
}

TEST(FashionMnistTest, ReadsUnpackedFilesToo) {
  TempDir dir;
  write_fake_fashion(dir, 2, /*gz=*/false);
  EXPECT_EQ(load_fashion_mnist(dir.str(), "test").images.shape(), Shape({2, 784}));
}

TEST(FashionMnistTest, MissingFilesSayHowToGetThem) {
  TempDir dir;
  EXPECT_TG_THROW(load_fashion_mnist(dir / "absent", "train"), ValueError, "load_fashion_mnist",
                  "train images", dir / "absent/train-images-idx3-ubyte.gz",
                  "apt-get install dataset-fashion-mnist");
  write_fake_fashion(dir, 2);
  fs::remove(dir / "t10k-labels-idx1-ubyte.gz");
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "test"), ValueError, "test labels",
                  "t10k-labels-idx1-ubyte.gz", "apt-get install dataset-fashion-mnist");
}

TEST(FashionMnistTest, RejectsBadSplitsAndContents) {
  TempDir dir;
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "valid"), ValueError, "load_fashion_mnist",
                  "\"train\" or \"test\"", "\"valid\"");
  write_fake_fashion(dir, 2);
  const std::string labels = dir / "t10k-labels-idx1-ubyte.gz";
  const std::string images = dir / "t10k-images-idx3-ubyte.gz";
  write_gz(labels, idx_file(0x08, {2}, bytes({3, 10})));
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "test"), ValueError, "label 10 of sample 1", "0..9",
                  labels);
  write_gz(labels, idx_file(0x08, {3}, bytes({1, 2, 3})));
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "test"), ValueError, "expected 2 labels",
                  "shape (3)");
  write_gz(labels, idx_file(0x0B, {2}, bytes({0, 1, 0, 2})));
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "test"), ValueError, "unsigned bytes", "int16",
                  labels);
  write_gz(images, idx_file(0x08, {1, 28, 27}, std::string(28 * 27, '\0')));
  EXPECT_TG_THROW(load_fashion_mnist(dir.str(), "test"), ValueError, "(N, 28, 28)", "(1, 28, 27)",
                  images);
}

TEST(FashionMnistTest, RealTestSplit) {
  const std::string dir(kFashionMnistDir);
  if (!fs::exists(dir + "/t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << dir << " is not installed (apt-get install dataset-fashion-mnist)";
  }
  const MnistSplit s = load_fashion_mnist(dir, "test");
  ASSERT_EQ(s.images.shape(), Shape({10000, 784}));
  ASSERT_EQ(s.labels.shape(), Shape({10000}));
  const std::vector<int64_t> labels = s.labels.to_vector<int64_t>();
  EXPECT_EQ((std::vector<int64_t>(labels.begin(), labels.begin() + 5)),
            (std::vector<int64_t>{9, 2, 1, 1, 6}));
  std::vector<int> counts(10, 0);
  for (int64_t y : labels) {
    ASSERT_GE(y, 0);
    ASSERT_LE(y, 9);
    ++counts[static_cast<size_t>(y)];
  }
  EXPECT_EQ(counts, std::vector<int>(10, 1000));  // the test split is balanced
  // The constants 0.2860 / 0.3530 are the train split's mean and std, so the test split's
  // mean is near 0 but not 0: numpy over the same float32 values gives 0.0024058728577591.
  // Summing 7.84M values of magnitude <= 2.03 in double loses < 1e-9 relative, hence 1e-9.
  double sum = 0;
  for (float v : s.images.to_vector<float>()) sum += v;
  const double mean = sum / (10000.0 * 784.0);
  EXPECT_NEAR(mean, 0.0024058728577591474, 1e-9);
  EXPECT_LT(std::abs(mean), 0.01);
  // Unnormalised, the pixel sum is an exact integer: it checks every byte was read.
  double raw_sum = 0;
  for (float v : load_fashion_mnist(dir, "test", {.normalize = false}).images.to_vector<float>()) {
    raw_sum += v;
  }
  EXPECT_EQ(raw_sum, 573469082.0);
}

// ---- FashionMnist: the same split as a Dataset, its images kept as bytes

TEST(FashionMnistDatasetTest, BatchesAreTheRowsLoadFashionMnistGives) {
  TempDir dir;
  write_fake_fashion(dir, 13);
  for (const bool normalize : {true, false}) {
    SCOPED_TRACE(normalize ? "normalised" : "raw");
    const MnistSplit all = load_fashion_mnist(dir.str(), "test", {.normalize = normalize});
    const FashionMnist data(dir.str(), "test", {.normalize = normalize});
    EXPECT_EQ(data.size(), 13);
    const std::vector<int64_t> ids{12, 0, 5, 5, 9};
    const std::vector<Tensor> batch = data.get_batch(tensor(ids));
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].shape(), Shape({5, 784}));
    EXPECT_EQ(batch[0].dtype(), kFloat32);
    EXPECT_EQ(batch[1].dtype(), kInt64);
    const Tensor rows = index_select(all.images, 0, tensor(ids));
    EXPECT_EQ(batch[0].to_vector<float>(), rows.to_vector<float>());  // bit for bit
    EXPECT_EQ(batch[1].to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 5, 5, 9}));
  }
  // A literal: pixel 3 of image 12 is byte 15.
  const FashionMnist data(dir.str(), "test");
  EXPECT_EQ(data.get_batch(tensor(std::vector<int64_t>{12}))[0].at<float>({0, 3}),
            (15.0f / 255.0f - 0.2860f) / 0.3530f);
  // Non-contiguous indices: every other element of 0..9.
  const Tensor strided = arange(0.0, 10.0, 1.0, kInt64).view({5, 2}).select(1, 0);
  ASSERT_FALSE(strided.is_contiguous());
  EXPECT_EQ(data.get_batch(strided)[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  // No indices: empty batches of the right shapes.
  const std::vector<Tensor> none = data.get_batch(zeros({0}, kInt64));
  EXPECT_EQ(none[0].shape(), Shape({0, 784}));
  EXPECT_EQ(none[1].shape(), Shape({0}));
}

TEST(FashionMnistDatasetTest, LoaderGivesTheSameBatchesAsOverTheTensors) {
  TempDir dir;
  write_fake_fashion(dir, 21);
  const MnistSplit all = load_fashion_mnist(dir.str(), "test");
  Generator g1(4);
  Generator g2(4);
  DataLoader over_tensors({all.images, all.labels}, {.batch_size = 8}, g1);
  DataLoader over_bytes(std::make_shared<FashionMnist>(dir.str(), "test"), {.batch_size = 8}, g2);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::vector<float>> a;
    std::vector<std::vector<float>> b;
    for (const auto& batch : over_tensors) a.push_back(batch[0].to_vector<float>());
    for (const auto& batch : over_bytes) b.push_back(batch[0].to_vector<float>());
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a, b);
  }
}

TEST(FashionMnistDatasetTest, TruncateKeepsTheFirstSamples) {
  TempDir dir;
  write_fake_fashion(dir, 7);
  FashionMnist data(dir.str(), "test");
  data.truncate(3);
  EXPECT_EQ(data.size(), 3);
  EXPECT_EQ(data.get_batch(tensor(std::vector<int64_t>{2}))[1].to_vector<int64_t>(),
            (std::vector<int64_t>{2}));
  EXPECT_TG_THROW(data.get_batch(tensor(std::vector<int64_t>{3})), IndexError,
                  "FashionMnist.get_batch", "index 3", "3 samples");
  EXPECT_TG_THROW(data.truncate(4), ValueError, "FashionMnist.truncate", "[0, 3]", "got 4");
  EXPECT_TG_THROW(data.truncate(-1), ValueError, "got -1");
  data.truncate(0);
  EXPECT_EQ(data.size(), 0);
}

TEST(FashionMnistDatasetTest, Errors) {
  TempDir dir;
  // The file errors of load_fashion_mnist, naming FashionMnist.
  EXPECT_TG_THROW(FashionMnist(dir / "absent", "train"), ValueError, "FashionMnist", "train images",
                  "apt-get install dataset-fashion-mnist");
  EXPECT_TG_THROW(FashionMnist(dir.str(), "val"), ValueError, "FashionMnist",
                  "\"train\" or \"test\"", "\"val\"");
  write_fake_fashion(dir, 4);
  const FashionMnist data(dir.str(), "test");
  EXPECT_TG_THROW(data.get_batch(tensor(std::vector<int64_t>{0, 4})), IndexError,
                  "FashionMnist.get_batch", "index 4 (position 1)", "4 samples");
  EXPECT_TG_THROW(data.get_batch(tensor(std::vector<int64_t>{-1})), IndexError, "index -1");
  EXPECT_TG_THROW(data.get_batch(tensor(std::vector<float>{0})), ValueError,
                  "FashionMnist.get_batch", "1-D int64", "float32 of shape (1)");
  EXPECT_TG_THROW(data.get_batch(zeros({2, 2}, kInt64)), ValueError, "int64 of shape (2, 2)");
  EXPECT_TG_THROW(data.get_batch(Tensor()), ValueError, "an undefined tensor");
}

}  // namespace
}  // namespace tg::nn
