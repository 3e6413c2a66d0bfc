// tests/core/safetensors_test.cpp
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "test_util.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
namespace st = safetensors;

/// The 8 little-endian bytes of `n`, spelled out byte by byte (not via memcpy).
std::string le64(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out;
}

/// A file made of a header (JSON text, taken as is) and a data buffer.
std::string file_of(const std::string& header, const std::string& data = "") {
  return le64(header.size()) + header + data;
}

/// The bytes of a tensor in row-major order.
std::string bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), c.numel() * c.element_size());
}

/// A fresh directory for one test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::path(::testing::TempDir()) /
            fmt::format("tapegrad_safetensors_{}_{}", info->name(), ::getpid());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }
  /// The names of the files in the directory, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::ranges::sort(names);
    return names;
  }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A random tensor of any dtype (bools from randint, so every byte is 0 or 1).
Tensor random_tensor(const Shape& shape, DType dtype, Generator& gen) {
  if (is_floating_point(dtype)) return randn(shape, dtype, gen);
  return randint(-5, 5, shape, kInt64, gen).to(dtype);
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_TRUE(got.is_contiguous());
  EXPECT_EQ(bytes_of(got), bytes_of(want));  // bit-exact, NaN payloads included
}

// ---- round trips

TEST(SafetensorsTest, RoundTripsEveryDTypeAndShape) {
  Generator gen(1);
  std::map<std::string, Tensor> tensors;
  for (DType dtype : testing::kAllDTypes) {
    const std::string d(dtype_name(dtype));
    tensors[d + ".matrix"] = random_tensor({2, 3}, dtype, gen);
    tensors[d + ".scalar"] = random_tensor({}, dtype, gen);
    tensors[d + ".empty"] = random_tensor({0, 3}, dtype, gen);
    tensors[d + ".transposed"] = random_tensor({3, 4}, dtype, gen).t();
    tensors[d + ".sliced"] = random_tensor({5, 4}, dtype, gen).slice(0, 1, 5, 2);
  }
  ASSERT_FALSE(tensors["float32.transposed"].is_contiguous());
  ASSERT_FALSE(tensors["bool.sliced"].is_contiguous());

  const st::Contents got = st::parse(st::serialize(tensors), "memory");
  EXPECT_TRUE(got.metadata.empty());
  ASSERT_EQ(got.tensors.size(), tensors.size());
  for (const auto& [name, want] : tensors) {
    ASSERT_TRUE(got.tensors.contains(name)) << name;
    expect_same(got.tensors.at(name), want, name);
  }
}

TEST(SafetensorsTest, LoadedTensorsOwnTheirMemory) {
  const Tensor x = tensor({1.f, 2.f, 3.f});
  std::string bytes = st::serialize({{"x", x}});
  const Tensor y = st::parse(bytes, "memory").tensors.at("x");
  bytes.assign(bytes.size(), '\0');  // the buffer is gone; y must not have pointed into it
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_EQ(y.storage_offset(), 0);
}

TEST(SafetensorsTest, RoundTripsThroughAFileWithMetadata) {
  TempDir dir;
  Generator gen(2);
  const std::map<std::string, Tensor> tensors = {{"w", randn({4, 2}, kFloat64, gen)},
                                                 {"ids", tensor({3, 1, 4}, {3})}};
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"step", "1200"}, {"note", "quote \" and unicode \u00e9"}, {"", ""}};
  st::save(dir / "a.safetensors", tensors, metadata);
  const st::Contents got = st::load(dir / "a.safetensors");
  EXPECT_EQ(got.metadata, metadata);
  ASSERT_EQ(got.tensors.size(), 2u);
  expect_same(got.tensors.at("w"), tensors.at("w"), "w");
  expect_same(got.tensors.at("ids"), tensors.at("ids"), "ids");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"a.safetensors"});  // no temp left over
}

TEST(SafetensorsTest, EmptyFileRoundTrips) {
  const std::string bytes = st::serialize({});
  EXPECT_EQ(bytes, le64(8) + "{}      ");
  const st::Contents got = st::parse(bytes, "memory");
  EXPECT_TRUE(got.tensors.empty());
  EXPECT_TRUE(got.metadata.empty());
}

// ---- the exact bytes

TEST(SafetensorsTest, WritesTheExactLayoutOfOneTensor) {
  // JSON is 54 bytes; 8 + 54 = 62, so 2 spaces pad the header to 56 and the data to 64.
  const std::string json = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ASSERT_EQ(json.size(), 54u);
  const std::string want = std::string("\x38\0\0\0\0\0\0\0", 8) + json + "  " +
                           std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);  // 1.0f, -2.0f
  const std::string got = st::serialize({{"x", tensor({1.f, -2.f})}});
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), 72u);
}

TEST(SafetensorsTest, WritesMetadataFirstThenSortedNamesPackedInOrder) {
  // 139 bytes of JSON; 8 + 139 = 147, padded by 5 spaces to 152 = 19 * 8. "a" (3 bool
  // bytes) comes before "b" (one int64 at offset 3: the data itself is not aligned).
  const std::string json = R"({"__metadata__":{"format":"pt"},)"
                           R"("a":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]},)"
                           R"("b":{"dtype":"I64","shape":[],"data_offsets":[3,11]}})";
  ASSERT_EQ(json.size(), 139u);
  const std::string want = std::string("\x90\0\0\0\0\0\0\0", 8) + json + "     " +
                           std::string("\x01\x00\x01\x05\x00\x00\x00\x00\x00\x00\x00", 11);
  const std::string got =
      st::serialize({{"b", scalar_tensor(5, kInt64)}, {"a", tensor({true, false, true}, {3})}},
                    {{"format", "pt"}});
  EXPECT_EQ(got, want);
  EXPECT_EQ((8 + got.size() - 11) % 8, 0u);
}

TEST(SafetensorsTest, ReadsAHandWrittenFileWithOtherKeyOrderAndPadding) {
  // Keys in another order, whitespace inside, trailing-space padding, no alignment.
  const std::string json = R"({ "y": {"data_offsets": [2, 4], "shape": [1], "dtype": "BF16"},)"
                           R"( "x": {"shape": [1], "dtype": "F16", "data_offsets": [0, 2]} }   )";
  const std::string data("\x00\x3c\x80\x3f", 4);  // f16 1.0, bf16 1.0
  const st::Contents got = st::parse(file_of(json, data), "hand");
  EXPECT_EQ(got.tensors.at("x").dtype(), kFloat16);
  EXPECT_EQ(testing::as_doubles(got.tensors.at("x")), std::vector<double>{1.0});
  EXPECT_EQ(got.tensors.at("y").dtype(), kBFloat16);
  EXPECT_EQ(testing::as_doubles(got.tensors.at("y")), std::vector<double>{1.0});
}

// ---- malformed input: each problem named

const std::string kF32x2 = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
const std::string kEightBytes(8, '\0');

TEST(SafetensorsTest, RejectsTooFewBytes) {
  EXPECT_TG_THROW(st::parse("", "src"), ValueError, "safetensors", "src", "0 bytes",
                  "fewer than the 8-byte header length");
  EXPECT_TG_THROW(st::parse(std::string(7, '\0'), "src"), ValueError, "safetensors", "7 bytes");
}

TEST(SafetensorsTest, RejectsTruncatedOrAbsurdHeaderLength) {
  EXPECT_TG_THROW(st::parse(le64(100) + "{}", "src"), ValueError, "safetensors", "src",
                  "truncated header", "says 100 bytes but only 2 follow");
  EXPECT_TG_THROW(st::parse(le64(uint64_t{1} << 40) + "{}", "src"), ValueError, "safetensors",
                  "header length 1099511627776 is absurd");
  EXPECT_TG_THROW(st::parse(le64(~uint64_t{0}) + "{}", "src"), ValueError, "safetensors", "absurd");
}

TEST(SafetensorsTest, RejectsBadJson) {
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":)"), "src"), ValueError, "safetensors", "src",
                  "header is not valid JSON");
  EXPECT_TG_THROW(st::parse(file_of("{} x"), "src"), ValueError, "safetensors",
                  "header is not valid JSON");
  // nlohmann would stop reading at a NUL byte and accept the "{}" before it.
  EXPECT_TG_THROW(st::parse(file_of(std::string("{}\0\0", 4)), "src"), ValueError, "safetensors",
                  "header is not valid JSON (NUL byte at header offset 2)");
  EXPECT_TG_THROW(st::parse(file_of(std::string("{}\0{\"x\":1}", 10)), "src"), ValueError,
                  "NUL byte");
  EXPECT_TG_THROW(st::parse(file_of("[1, 2]"), "src"), ValueError, "safetensors",
                  "header is not a JSON object (got array)");
  EXPECT_TG_THROW(st::parse(file_of(R"("text")"), "src"), ValueError, "safetensors",
                  "not a JSON object (got string)");
  const std::string deep = R"({"x":{"dtype":"F32","shape":)" + std::string(100000, '[');
  EXPECT_TG_THROW(st::parse(file_of(deep), "src"), ValueError, "safetensors",
                  "nested deeper than 16");
}

TEST(SafetensorsTest, RejectsEntriesWithMissingKeysOrWrongTypes) {
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":[1]})"), "src"), ValueError, "safetensors",
                  "tensor 'x': entry is not an object (got array)");
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"shape":[],"data_offsets":[0,4]}})"), "src"),
                  ValueError, "safetensors", "src", "tensor 'x': missing \"dtype\"");
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"dtype":"F32","data_offsets":[0,4]}})"), "src"),
                  ValueError, "safetensors", "tensor 'x': missing \"shape\"");
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"dtype":"F32","shape":[]}})"), "src"), ValueError,
                  "safetensors", "tensor 'x': missing \"data_offsets\"");
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"dtype":4,"shape":[],"data_offsets":[0,4]}})"), "s"),
                  ValueError, "safetensors", "tensor 'x': \"dtype\" is not a string (got 4)");
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F32","shape":2,"data_offsets":[0,4]}})"), "s"),
      ValueError, "safetensors", "\"shape\" is not an array (got number)");
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})"), "s"),
      ValueError, "safetensors", "shape dim 0 is not an integer (got 1.5)");
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F32","shape":[1,"2"],"data_offsets":[0,4]}})"), "s"),
      ValueError, "safetensors", "shape dim 1 is not an integer (got \"2\")");
  for (const char* offsets : {R"("0,4")", "[0]", "[0,4,8]", "[0,-4]", "[0,4.0]", "[-1,3]"}) {
    SCOPED_TRACE(offsets);
    const std::string json =
        fmt::format(R"({{"x":{{"dtype":"F32","shape":[1],"data_offsets":{}}}}})", offsets);
    EXPECT_TG_THROW(st::parse(file_of(json, kEightBytes), "s"), ValueError, "safetensors",
                    "tensor 'x': \"data_offsets\" must be two non-negative integers");
  }
}

TEST(SafetensorsTest, RejectsUnknownDType) {
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", "abcd"),
                "src"),
      ValueError, "safetensors", "src", "tensor 'w': unknown dtype 'I32'",
      "supported: F32, F64, F16, BF16, I64, BOOL");
  // Codes are case-sensitive, as in the format.
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"w":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})", "abcd"),
                "src"),
      ValueError, "safetensors", "unknown dtype 'f32'");
}

TEST(SafetensorsTest, RejectsNegativeOrOverflowingShapes) {
  const auto with_shape = [](const std::string& shape) {
    return file_of(
        fmt::format(R"({{"x":{{"dtype":"F32","shape":{},"data_offsets":[0,0]}}}})", shape));
  };
  EXPECT_TG_THROW(st::parse(with_shape("[2,-1]"), "src"), ValueError, "safetensors", "src",
                  "tensor 'x'", "negative size -1 in dim 1");
  EXPECT_TG_THROW(st::parse(with_shape("[4294967296,4294967296]"), "src"), ValueError,
                  "safetensors", "tensor 'x'", "more elements than int64 can count");
  EXPECT_TG_THROW(st::parse(with_shape("[9223372036854775808]"), "src"), ValueError, "safetensors",
                  "shape dim 0 is 9223372036854775808, too large for int64");
  // Zero elements, but the row-major strides still overflow: refused rather than made.
  EXPECT_TG_THROW(st::parse(with_shape("[0,4611686018427387904,4611686018427387904]"), "src"),
                  ValueError, "safetensors", "tensor 'x'", "overflow");
}

TEST(SafetensorsTest, RejectsBadDataOffsets) {
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", kEightBytes),
                "src"),
      ValueError, "safetensors", "src", "tensor 'x': data_offsets [8, 0] are decreasing");
  // Truncated data: 16 bytes needed, 10 present.
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                                    std::string(10, 'z')),
                            "src"),
                  ValueError, "safetensors", "src", "truncated data",
                  "tensor 'x' needs bytes [0, 16)", "has only 10 bytes (6 bytes missing)");
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEightBytes),
                "src"),
      ValueError, "safetensors", "tensor 'x': data_offsets [0, 8) hold 8 bytes",
      "shape (3) of F32 needs 12");
  EXPECT_TG_THROW(
      st::parse(file_of(R"({"x":{"dtype":"F64","shape":[],"data_offsets":[0,4]}})", kEightBytes),
                "src"),
      ValueError, "safetensors", "hold 4 bytes but shape () of F64 needs 8");
  // numel * 8 overflows uint64 although numel fits int64.
  EXPECT_TG_THROW(st::parse(file_of(R"({"x":{"dtype":"I64","shape":[4611686018427387904],)"
                                    R"("data_offsets":[0,8]}})",
                                    kEightBytes),
                            "src"),
                  ValueError, "safetensors", "needs more than 2^64");
}

TEST(SafetensorsTest, RejectsOverlappingTensors) {
  const std::string json =
      "{\"a\":" + kF32x2 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_TG_THROW(st::parse(file_of(json, std::string(12, '\0')), "src"), ValueError, "safetensors",
                  "src", "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  // Identical ranges overlap too; touching ones and empty ones do not.
  const std::string same = "{\"a\":" + kF32x2 + ",\"b\":" + kF32x2 + "}";
  EXPECT_TG_THROW(st::parse(file_of(same, kEightBytes), "src"), ValueError, "safetensors",
                  "overlap");
  const std::string fine = "{\"a\":" + kF32x2 +
                           R"(,"b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                           R"("c":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  EXPECT_EQ(st::parse(file_of(fine, std::string(12, '\0')), "src").tensors.size(), 3u);
}

TEST(SafetensorsTest, RejectsBadMetadata) {
  EXPECT_TG_THROW(st::parse(file_of(R"({"__metadata__":{"k":"v","n":3}})"), "src"), ValueError,
                  "safetensors", "src", "metadata value for key 'n' is not a string (got 3)");
  EXPECT_TG_THROW(st::parse(file_of(R"({"__metadata__":["k"]})"), "src"), ValueError, "safetensors",
                  "\"__metadata__\" is not an object (got array)");
}

TEST(SafetensorsTest, RejectsBoolBytesOtherThanZeroOrOne) {
  const std::string json = R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})";
  EXPECT_EQ(st::parse(file_of(json, std::string("\x01\x00\x01", 3)), "src")
                .tensors.at("m")
                .to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_TG_THROW(st::parse(file_of(json, std::string("\x01\x02\x00", 3)), "src"), ValueError,
                  "safetensors", "src", "tensor 'm': bool element 1 is byte 0x02, not 0 or 1");
  EXPECT_TG_THROW(st::parse(file_of(json, std::string("\x00\x00\xff", 3)), "src"), ValueError,
                  "bool element 2 is byte 0xff");
}

TEST(SafetensorsTest, RefusesToWriteReservedOrUndefinedTensors) {
  EXPECT_TG_THROW(st::serialize({{"__metadata__", tensor({1.f})}}), ValueError, "safetensors",
                  "'__metadata__' is reserved");
  EXPECT_TG_THROW(st::serialize({{"x", Tensor()}}), ValueError, "safetensors",
                  "tensor 'x' is undefined");
  EXPECT_TG_THROW(st::serialize({{std::string("\xff"), tensor({1.f})}}), ValueError, "safetensors",
                  "cannot write the header");
}

// ---- files on disk

TEST(SafetensorsTest, LoadNamesAMissingOrUnreadableFile) {
  TempDir dir;
  const std::string missing = dir / "missing.safetensors";
  EXPECT_TG_THROW(st::load(missing), ValueError, "safetensors", missing, "cannot open file",
                  "No such file or directory");
  EXPECT_TG_THROW(st::load(dir.path().string()), ValueError, "safetensors", "cannot read file",
                  "Is a directory");
}

TEST(SafetensorsTest, TruncatedFilesOnDiskAreValueErrors) {
  TempDir dir;
  Generator gen(3);
  const std::string path = dir / "t.safetensors";
  st::save(path, {{"a", randn({3, 5}, kFloat32, gen)}, {"b", tensor({1, 2}, {2})}});
  const std::string full = read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, full.data(), 8);
  const size_t data_start = 8 + n;
  ASSERT_EQ(data_start % 8, 0u);
  for (size_t keep :
       {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, data_start / 2, data_start - 1,
        data_start, data_start + 1, data_start + 60, full.size() - 1}) {
    SCOPED_TRACE(keep);
    write_file(path, full.substr(0, keep));
    EXPECT_TG_THROW(st::load(path), ValueError, "safetensors", path);
  }
  write_file(path, full);
  EXPECT_EQ(st::load(path).tensors.size(), 2u);
}

TEST(SafetensorsTest, SaveReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir / "c.safetensors";
  st::save(path, {{"old", tensor({1.f, 2.f})}});
  st::save(path, {{"new", tensor({3.0})}}, {{"v", "2"}});
  const st::Contents got = st::load(path);
  EXPECT_EQ(got.tensors.size(), 1u);
  EXPECT_EQ(got.tensors.at("new").to_vector<double>(), std::vector<double>{3.0});
  EXPECT_EQ(got.metadata.at("v"), "2");
  EXPECT_EQ(read_file(path), st::serialize({{"new", tensor({3.0})}}, {{"v", "2"}}));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"c.safetensors"});
}

TEST(SafetensorsTest, FailedSavesLeaveNoTempFileAndTheOldFileIntact) {
  TempDir dir;
  const std::string path = dir / "c.safetensors";
  st::save(path, {{"old", tensor({1.f, 2.f})}});
  const std::string old = read_file(path);

  // Into a directory that does not exist: the temp file cannot even be created.
  const std::string nowhere = dir / "no/such/dir/c.safetensors";
  EXPECT_TG_THROW(st::save(nowhere, {{"x", tensor({1.f})}}), ValueError, "safetensors",
                  "cannot save '" + nowhere + "'", "No such file or directory");

  // Over a directory: the temp file is written, then the rename fails and it is removed.
  fs::create_directory(dir / "target");
  EXPECT_TG_THROW(st::save(dir / "target", {{"x", tensor({1.f})}}), ValueError, "safetensors",
                  dir / "target", "renaming", "Is a directory");
  EXPECT_TRUE(fs::is_directory(dir / "target"));

  // A save that fails while building the bytes never touches the old file.
  EXPECT_TG_THROW(st::save(path, {{"x", Tensor()}}), ValueError, "safetensors", "undefined");

  EXPECT_EQ(read_file(path), old);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"c.safetensors", "target"}));
}

// ---- fuzz

TEST(SafetensorsTest, RandomMutationsParseOrThrowValueError) {
  Generator gen(4);
  std::map<std::string, Tensor> tensors;
  for (DType dtype : testing::kAllDTypes) {
    tensors[std::string(dtype_name(dtype))] = random_tensor({2, 2}, dtype, gen);
  }
  tensors["empty"] = zeros({0});
  const std::string valid = st::serialize(tensors, {{"k", "v"}});
  uint64_t n = 0;
  std::memcpy(&n, valid.data(), 8);
  const auto header_end = static_cast<int64_t>(8 + n);

  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string bytes = valid;
    const int edits = static_cast<int>(gen.integer(1, 4));
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      // Most edits land in the header, where the parsing is.
      const int64_t limit = gen.integer(0, 4) == 0 ? static_cast<int64_t>(bytes.size())
                                                   : std::min<int64_t>(header_end, bytes.size());
      const auto pos = static_cast<size_t>(gen.integer(0, limit));
      const char byte = static_cast<char>(gen.integer(0, 256));
      switch (gen.integer(0, 5)) {
        case 0: bytes[pos] = byte; break;
        case 1: bytes[pos] = "0123456789[]{},:\"-e. "[gen.integer(0, 21)]; break;
        case 2: bytes.insert(pos, 1, byte); break;
        case 3: bytes.erase(pos, 1); break;
        case 4: bytes.resize(pos); break;
      }
    }
    // An exact-size copy, so that ASan sees a read past the end (resize keeps capacity).
    const std::string exact(bytes.begin(), bytes.end());
    try {
      const st::Contents c = st::parse(exact, "fuzz");
      ++parsed;
      for (const auto& [name, t] : c.tensors) {
        if (t.dtype() != kBool) continue;
        for (char b : bytes_of(t)) ASSERT_TRUE(b == 0 || b == 1) << name;
      }
    } catch (const ValueError& e) {
      ++rejected;
      ASSERT_THAT(e.what(), ::testing::HasSubstr("safetensors: fuzz: "));
    }
  }
  EXPECT_GT(parsed, 20);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace tg
