// core/safetensors.cpp — the .safetensors reader and writer (format: core/safetensors.h).
//
// Reading is parse(bytes): split the 8-byte length, the JSON header and the data buffer,
// validate every header entry against the buffer before touching any data, then memcpy each
// tensor's bytes into a fresh tensor. Writing is serialize(): sorted names, data packed
// back to back in that order, the header padded with spaces so the buffer starts at a
// multiple of 8 bytes. save() writes those bytes with write_file_atomically
// (core/atomic_file.h: temp file, fsync, rename).
#include "core/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <vector>

#include "core/atomic_file.h"
#include "core/factories.h"

namespace tg::safetensors {

// The file stores numbers little-endian and we memcpy them, so the host must be too.
static_assert(std::endian::native == std::endian::little,
              "core/safetensors.cpp assumes a little-endian host");

namespace {

using nlohmann::json;

/// A header longer than this is refused before it is parsed (a corrupt length field).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// Deepest JSON nesting accepted; a valid header needs 3 (root, entry, shape).
constexpr int kMaxJsonDepth = 16;
/// The data buffer starts at a multiple of this many bytes from the start of the file.
constexpr size_t kAlignment = 8;

struct DTypeCode {
  DType dtype;
  std::string_view code;
};
constexpr DTypeCode kCodes[] = {{kFloat32, "F32"},   {kFloat64, "F64"}, {kFloat16, "F16"},
                                {kBFloat16, "BF16"}, {kInt64, "I64"},   {kBool, "BOOL"}};

std::string_view code_of(DType dtype) {
  for (const auto& c : kCodes) {
    if (c.dtype == dtype) return c.code;
  }
  detail::raise<ValueError>("safetensors: dtype {} has no safetensors code", dtype);
}

std::optional<DType> dtype_of_code(std::string_view code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return c.dtype;
  }
  return std::nullopt;
}

/// Every reader error: "safetensors: <what>: <problem>".
template <class... Args>
[[noreturn]] void fail(const std::string& what, fmt::format_string<Args...> format,
                       Args&&... args) {
  throw ValueError(
      fmt::format("safetensors: {}: {}", what, fmt::format(format, std::forward<Args>(args)...)));
}

std::string errno_text(int err) { return std::system_category().message(err); }

/// One validated header entry: where its bytes are and what tensor they make.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin;
  uint64_t end;
};

Shape parse_shape(const json& j, const std::string& what, const std::string& name) {
  if (!j.is_array())
    fail(what, "tensor '{}': \"shape\" is not an array (got {})", name, j.type_name());
  Shape shape;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& d = j[i];
    if (d.is_number_unsigned()) {
      const uint64_t u = d.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) {
        fail(what, "tensor '{}': shape dim {} is {}, too large for int64", name, i, u);
      }
      shape.push_back(static_cast<int64_t>(u));
    } else if (d.is_number_integer()) {
      shape.push_back(d.get<int64_t>());  // negative: checked_numel names it below
    } else {
      fail(what, "tensor '{}': shape dim {} is not an integer (got {})", name, i, d.dump());
    }
  }
  try {
    checked_numel(shape, "shape");
    contiguous_strides(shape);  // a zero-size shape can still have overflowing strides
  } catch (const ShapeError& e) {
    fail(what, "tensor '{}': invalid {}", name, e.what());
  }
  return shape;
}

Entry parse_entry(const std::string& name, const json& j, const std::string& what) {
  if (!j.is_object())
    fail(what, "tensor '{}': entry is not an object (got {})", name, j.type_name());
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!j.contains(key)) fail(what, "tensor '{}': missing \"{}\"", name, key);
  }
  const json& jd = j["dtype"];
  if (!jd.is_string())
    fail(what, "tensor '{}': \"dtype\" is not a string (got {})", name, jd.dump());
  const std::string code = jd.get<std::string>();
  const std::optional<DType> dtype = dtype_of_code(code);
  if (!dtype) {
    fail(what, "tensor '{}': unknown dtype '{}' (supported: F32, F64, F16, BF16, I64, BOOL)", name,
         code);
  }
  Shape shape = parse_shape(j["shape"], what, name);
  const json& jo = j["data_offsets"];
  if (!jo.is_array() || jo.size() != 2 || !jo[0].is_number_unsigned() ||
      !jo[1].is_number_unsigned()) {
    fail(what, "tensor '{}': \"data_offsets\" must be two non-negative integers, got {}", name,
         jo.dump());
  }
  const uint64_t begin = jo[0].get<uint64_t>(), end = jo[1].get<uint64_t>();
  if (begin > end) {
    fail(what, "tensor '{}': data_offsets [{}, {}] are decreasing", name, begin, end);
  }
  return Entry{name, *dtype, std::move(shape), begin, end};
}

std::map<std::string, std::string> parse_metadata(const json& j, const std::string& what) {
  if (!j.is_object()) fail(what, "\"__metadata__\" is not an object (got {})", j.type_name());
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) {
      fail(what, "metadata value for key '{}' is not a string (got {})", key, value.dump());
    }
    out[key] = value.get<std::string>();
  }
  return out;
}

/// Checks the entry's byte range against the buffer and its shape and dtype.
void check_range(const Entry& e, uint64_t buffer_size, const std::string& what) {
  if (e.end > buffer_size) {
    fail(what,
         "truncated data: tensor '{}' needs bytes [{}, {}) of the data buffer, which has only {} "
         "bytes ({} bytes missing)",
         e.name, e.begin, e.end, buffer_size, e.end - buffer_size);
  }
  const auto numel = static_cast<uint64_t>(checked_numel(e.shape, "shape"));
  uint64_t need = 0;
  const bool overflow = __builtin_mul_overflow(numel, element_size(e.dtype), &need);
  if (overflow || need != e.end - e.begin) {
    fail(what, "tensor '{}': data_offsets [{}, {}) hold {} bytes but shape {} of {} needs {}",
         e.name, e.begin, e.end, e.end - e.begin, e.shape, code_of(e.dtype),
         overflow ? std::string("more than 2^64") : std::to_string(need));
  }
}

/// Two tensors may not share a byte (empty ranges share none).
void check_overlaps(std::vector<const Entry*> entries, const std::string& what) {
  std::erase_if(entries, [](const Entry* e) { return e->begin == e->end; });
  std::ranges::sort(entries, {}, [](const Entry* e) { return e->begin; });
  for (size_t i = 1; i < entries.size(); ++i) {
    const Entry& a = *entries[i - 1];
    const Entry& b = *entries[i];
    if (b.begin < a.end) {
      fail(what, "tensors '{}' [{}, {}) and '{}' [{}, {}) overlap in the data buffer", a.name,
           a.begin, a.end, b.name, b.begin, b.end);
    }
  }
}

json parse_header(std::string_view text, const std::string& what) {
  // nlohmann's parser is iterative, but bound the depth anyway: nothing valid is deep.
  const json::parser_callback_t limit_depth = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) fail(what, "header JSON is nested deeper than {}", kMaxJsonDepth);
    return true;
  };
  // nlohmann stops at a NUL byte as if the input ended there; the format has no such end.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail(what, "header is not valid JSON (NUL byte at header offset {})", nul);
  }
  try {
    return json::parse(text.begin(), text.end(), limit_depth);  // trailing spaces are allowed
  } catch (const json::exception& e) {
    fail(what, "header is not valid JSON ({})", e.what());
  }
}

}  // namespace

Contents parse(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 8) {
    fail(what, "{} bytes is fewer than the 8-byte header length field", bytes.size());
  }
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderBytes) {
    fail(what, "header length {} is absurd (more than {} bytes)", n, kMaxHeaderBytes);
  }
  if (n > bytes.size() - 8) {
    fail(what, "truncated header: the length field says {} bytes but only {} follow", n,
         bytes.size() - 8);
  }
  const json header = parse_header(std::string_view(bytes).substr(8, n), what);
  if (!header.is_object()) fail(what, "header is not a JSON object (got {})", header.type_name());

  const std::string_view buffer = std::string_view(bytes).substr(8 + n);
  Contents out;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      out.metadata = parse_metadata(value, what);
    } else {
      entries.push_back(parse_entry(name, value, what));
      check_range(entries.back(), buffer.size(), what);
    }
  }
  std::vector<const Entry*> pointers;
  for (const Entry& e : entries) pointers.push_back(&e);
  check_overlaps(std::move(pointers), what);

  for (const Entry& e : entries) {
    const char* src = buffer.data() + e.begin;
    const size_t nbytes = e.end - e.begin;
    if (e.dtype == kBool) {
      // A bool byte other than 0 or 1 is undefined behaviour in C++: refuse it.
      for (size_t i = 0; i < nbytes; ++i) {
        const auto byte = static_cast<unsigned char>(src[i]);
        if (byte > 1) {
          fail(what, "tensor '{}': bool element {} is byte 0x{:02x}, not 0 or 1", e.name, i, byte);
        }
      }
    }
    Tensor t = empty(e.shape, e.dtype);
    if (nbytes > 0) std::memcpy(t.raw_data(), src, nbytes);
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

std::string serialize(const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // ordered_json keeps insertion order: "__metadata__" first, then the names sorted.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> contiguous;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    TG_CHECK(name != "__metadata__", ValueError,
             "safetensors: '__metadata__' is reserved and cannot name a tensor");
    TG_CHECK(tensor.defined(), ValueError, "safetensors: tensor '{}' is undefined", name);
    const Tensor c = tensor.detach().contiguous();
    const uint64_t nbytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    header[name] = {{"dtype", code_of(c.dtype())},
                    {"shape", std::vector<int64_t>(c.shape().begin(), c.shape().end())},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    contiguous.push_back(c);
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    detail::raise<ValueError>("safetensors: cannot write the header ({})", e.what());
  }
  // Pad with spaces so that 8 + header length is a multiple of kAlignment.
  text.append((kAlignment - (8 + text.size()) % kAlignment) % kAlignment, ' ');

  std::string out;
  out.reserve(8 + text.size() + offset);
  const uint64_t n = text.size();
  out.append(reinterpret_cast<const char*>(&n), 8);
  out += text;
  for (const Tensor& c : contiguous) {
    out.append(static_cast<const char*>(c.raw_data()), c.numel() * c.element_size());
  }
  return out;
}

Contents load(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open file: {}", errno_text(errno));
  std::string bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) bytes.reserve(st.st_size);
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      fail(path, "cannot read file: {}", errno_text(err));
    }
    if (got == 0) break;
    bytes.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return parse(bytes, path);
}

void save(const std::string& path, const std::map<std::string, Tensor>& tensors,
          const std::map<std::string, std::string>& metadata) {
  const std::string bytes = serialize(tensors, metadata);  // may throw: no file touched yet
  write_file_atomically(path, bytes, "safetensors");
}

}  // namespace tg::safetensors
