// core/generator.h — a seedable random generator whose streams are the same everywhere.
//
// tapegrad uses Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), a counter-based generator: word n of the stream for a seed is a pure
// function of (seed, n),
//
//     block(n / 4) = Philox4x32-10(counter = (n/4 low 32 bits, n/4 high 32 bits, 0, 0),
//                                  key     = (seed low 32 bits, seed high 32 bits))
//     word n       = block(n / 4)[n % 4]
//
// so a generator's whole state is (seed, offset = words consumed so far), it can seek
// anywhere in O(1), and no platform detail (libm, compiler, CPU) changes a number.
//
// Distributions, built only from those words and exactly-rounded arithmetic:
//   float32 uniform [0,1): (next_u32() >> 8) * 2^-24             (1 word)
//   float16 uniform [0,1): (next_u32() >> 21) * 2^-11            (1 word)
//   bfloat16 uniform[0,1): (next_u32() >> 24) * 2^-8             (1 word)
//   float64 uniform [0,1): (next_u64() >> 11) * 2^-53            (2 words: high, then low)
//   normal pair: Marsaglia's polar method on float64 uniforms, with tapegrad's own log
//           (see generator.cpp) so that no libm version can change it; randn fills a
//           tensor two elements per pair, dropping the last one for an odd count.
//   integer in [low, high): next_u64() with rejection of the biased low range, then mod.
#pragma once

#include <array>
#include <cstdint>

namespace tg {

class Generator {
 public:
  /// PyTorch's default seed, so a fresh program is reproducible too.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  explicit Generator(uint64_t seed = kDefaultSeed) { manual_seed(seed); }

  /// Restarts the stream of `seed` from its beginning.
  void manual_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  /// Number of 32-bit words consumed: with seed(), the complete state.
  uint64_t offset() const { return offset_; }
  /// Jumps to word `offset` of the current seed's stream.
  void set_offset(uint64_t offset) { offset_ = offset; }

  uint32_t next_u32();
  /// Two words, the first one the high half.
  uint64_t next_u64();
  float uniform_float();
  double uniform_double();
  /// Two independent standard normal draws (mean 0, variance 1), computed in double.
  std::array<double, 2> normal_pair();
  /// Uniform in [low, high); requires low < high.
  int64_t integer(int64_t low, int64_t high);

  /// The raw Philox4x32-10 block function, exposed for the known-answer tests.
  static std::array<uint32_t, 4> philox(std::array<uint32_t, 4> counter,
                                        std::array<uint32_t, 2> key);

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
};

/// The generator that random factories use when none is given.
Generator& default_generator();
/// Reseeds the default generator (like torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace tg
