// ops/fast/gemm.cpp — the blocked GEMM driver: packing, cache blocking, run-time dispatch.
//
// The classic layout (Goto & van de Geijn, "Anatomy of high-performance matrix
// multiplication"): C (m, n) += op(A) (m, k) op(B) (k, n) is cut three ways so that each
// piece of data sits in the cache level where it is reused most.
//
//   for ic over m in steps of MC:
//     for pc over k in steps of KC:
//       pack op(A)[ic.., pc..] into MR-row panels        A block (MC x KC) .... L3 / memory
//       for jc over n in steps of NC:
//         pack op(B)[pc.., jc..] into NR-column panels   B block (KC x NC) .... L2
//         for ir over the block's rows in steps of MR:   A panel (MR x KC) .... L1
//           for jr over the block's columns in steps of NR:
//             micro-kernel: an MR x NR tile of C, kept in registers for all KC steps
//
// (This is BLIS's order for a column-major C^T = B^T A^T: the panel whose values the
// kernel broadcasts stays in L1, the one it loads as vectors streams from L2.)
//
// Packing copies each panel into the order the micro-kernel reads it (one column of the A
// panel, then one row of the B panel, per step of p) and pads the ragged edge with zeros;
// it is also where a transposed operand is read in place, so the kernel never sees strides.
// The first KC block applies the caller's beta, later ones accumulate (beta = 1). The
// order of every sum depends only on (m, n, k) and the path, never on timing: the same
// call gives bit-identical results every time.
//
// bfloat16 operands (float C) take one of two routes through the same loops. Where the CPU
// has AVX512-BF16, the panels are packed as pairs of values along k and the vdpbf16ps
// kernel does two steps of p per instruction (ops/fast/gemm_avx512_bf16.cpp). Elsewhere the
// packing widens each panel to float first and the float kernel of the current path runs:
// the packed panels are then exactly what a float GEMM of the widened matrices would see.
#include "ops/fast/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "core/error.h"
#include "core/parallel.h"
#include "ops/fast/gemm_kernels.h"

namespace tg {
namespace detail {
namespace {

// ---------------------------------------------------------------- the reference
// T: the operands' type; C: that of C, alpha, beta and the sum (bfloat16 is widened to float).
template <class T, class C>
void reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, C alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, C beta, C* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      C acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        const C a_ip = static_cast<C>(trans_a ? a[p * lda + i] : a[i * lda + p]);
        const C b_pj = static_cast<C>(trans_b ? b[j * ldb + p] : b[p * ldb + j]);
        acc += a_ip * b_pj;
      }
      C& c_ij = c[i * ldc + j];
      c_ij = beta == C(0) ? alpha * acc : alpha * acc + beta * c_ij;
    }
  }
}

// ---------------------------------------------------------------- the portable kernel
// Plain loops over a small fixed tile, which the compiler keeps in registers and
// vectorises for whatever the build targets.
constexpr int kPortableMr = 4, kPortableNr = 8;

template <class T>
void gemm_micro_portable(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta) {
  T acc[kPortableMr][kPortableNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kPortableMr; ++i) {
      for (int j = 0; j < kPortableNr; ++j) acc[i][j] += a[i] * b[j];
    }
    a += kPortableMr;
    b += kPortableNr;
  }
  for (int i = 0; i < kPortableMr; ++i) {
    for (int j = 0; j < kPortableNr; ++j) {
      T& out = c[i * ldc + j];
      out = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * out;
    }
  }
}

// ---------------------------------------------------------------- blocking parameters
/// A vectorised packing of one panel (see pack_panels): reads S, writes packed values P.
template <class S, class P>
using PackPanel = void (*)(const S* src, int64_t ld, int64_t kc, int w, int width, P* dst);

/// A micro-kernel and its blocking. S: the element type its packings read (float, double or
/// bfloat16); P: the packed type (S itself, or a word holding two bfloat16 along k).
template <class S, class P = S>
struct Kernel {
  // the type of C, alpha and beta
  using C = std::conditional_t<std::is_same_v<S, double>, double, float>;

  int mr, nr;          // the register tile
  int64_t kc, mc, nc;  // the cache blocks (mc a multiple of mr, nc of nr)
  GemmMicroKernel<C, P> fn;
  // Optional, vectorised packings; without them the plain loops of pack_a / pack_b run.
  // pack_transposed: a full panel whose rows are contiguous (a row-major A, a transposed B);
  // pack_rows: a panel whose columns are contiguous (a transposed A, a row-major B).
  PackPanel<S, P> pack_transposed = nullptr;
  PackPanel<S, P> pack_rows = nullptr;
  int k_step = 1;  // values of k in one packed value: 2 for bfloat16 pairs
};

constexpr int kMaxTile = 16 * 32;  // the largest mr * nr of any kernel

// KC: the MR x KC micro-panel of A stays in L1 (48 KiB) while the kernel sweeps across the
// B block; NC: the KC x NC block of B stays in L2 (2 MiB), about 0.7 MiB of it; MC: the
// MC x KC block of A, packed once per KC step, a few MiB (L3 or memory).
constexpr int64_t kMc = 2520, kNc = 480;  // multiples of every MR (4, 6, 12, 14) and NR

template <class T>
Kernel<T> kernel_for(GemmPath path) {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (path == GemmPath::kAvx512)
      return {kAvx512MrF32,
              kAvx512NrF32,
              384,
              kMc,
              kNc,
              gemm_micro_avx512_f32,
              gemm_pack_transposed_avx512_f32,
              gemm_pack_rows_avx512_f32};
    if (path == GemmPath::kAvx2)
      return {kAvx2MrF32, kAvx2NrF32, 384, kMc, kNc, gemm_micro_avx2_f32};
  } else {
    if (path == GemmPath::kAvx512)
      return {kAvx512MrF64, kAvx512NrF64, 256, kMc, kNc / 2, gemm_micro_avx512_f64};
    if (path == GemmPath::kAvx2)
      return {kAvx2MrF64, kAvx2NrF64, 256, kMc, kNc / 2, gemm_micro_avx2_f64};
  }
#endif
  return {kPortableMr, kPortableNr, 256, kMc, kNc / 2, gemm_micro_portable<T>};
}

/// The vdpbf16ps kernel: the float kernel's tile and blocks, with a KC twice as deep, since a
/// pair of bfloat16 takes the bytes of one float (the panels fill the caches as before).
Kernel<BFloat16, uint32_t> bf16_dot_kernel() {
#if defined(__x86_64__)
  return {kAvx512MrBf16,
          kAvx512NrBf16,
          768,
          kMc,
          kNc,
          gemm_micro_avx512_bf16,
          gemm_pack_pairs_transposed_avx512_bf16,
          gemm_pack_pairs_rows_avx512_bf16,
          /*k_step=*/2};
#else
  return {};  // never called: no CPU here has vdpbf16ps
#endif
}

// ---------------------------------------------------------------- packing
/// A growable 64-byte-aligned scratch buffer, one per thread, element type and `which`: 0 and
/// 1 the packed panels, 2 a widened panel, 3 gemm_round's float C where it cannot round in
/// the tile (held while gemm() uses the others).
template <class T>
T* scratch(int which, size_t count) {
  struct Buffer {
    struct Free {
      void operator()(T* p) const { ::operator delete (p, std::align_val_t{64}); }
    };
    std::unique_ptr<T, Free> data;
    size_t size = 0;
  };
  thread_local Buffer buffers[4];
  Buffer& buf = buffers[which];
  if (buf.size < count) {
    buf.data.reset(static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{64})));
    buf.size = count;
  }
  return buf.data.get();
}

/// Packs the kc x count matrix M with M(p, j) = src[p * rs + j * cs] (p runs along k) into
/// ceil(count / width) panels, each kc rows of `width` values, zero-padded after the last j:
/// the order in which the micro-kernel reads a panel, one k step at a time. A panel of
/// op(B) is its rows (j a column of B, width NR); a panel of op(A) is the same thing with
/// the roles of the strides swapped (j a row of A, width MR): see pack_a and pack_b.
/// With bfloat16 pairs (k_step 2) a panel has ceil(kc / 2) rows of words instead.
/// T is the type of M: the kernel's own S, or bfloat16 for a float kernel (widened first).
template <class T, class S, class P>
void pack_panels(const T* src, int64_t rs, int64_t cs, int64_t kc, int64_t count, int width, P* dst,
                 const Kernel<S, P>& kern) {
  const int64_t rows = (kc + kern.k_step - 1) / kern.k_step;  // packed rows per panel
  for (int64_t j0 = 0; j0 < count; j0 += width, dst += width * rows) {
    const int64_t w = std::min<int64_t>(width, count - j0);
    if constexpr (!std::is_same_v<T, S>) {
      // bfloat16 for a float kernel: widen the panel's w x kc values into a compact copy laid
      // out like the source (one of rs, cs is 1), then pack that copy as any float panel.
      float* wide = scratch<float>(2, static_cast<size_t>(w * kc));
      if (cs == 1) {  // M(p, j) at wide[p * w + j]
        for (int64_t p = 0; p < kc; ++p) widen(src + p * rs + j0, wide + p * w, w);
        pack_panels(wide, w, 1, kc, w, width, dst, kern);
      } else {  // rs == 1: M(p, j) at wide[j * kc + p]
        for (int64_t j = 0; j < w; ++j) widen(src + (j0 + j) * cs, wide + j * kc, kc);
        pack_panels(wide, 1, kc, kc, w, width, dst, kern);
      }
    } else {
      // The vectorised packings pad a short panel with zeros themselves. (Pairs of bfloat16
      // are packed by them only: the kernel that reads pairs always brings both.)
      if (cs == 1 && kern.pack_rows != nullptr) {
        kern.pack_rows(src + j0, rs, kc, static_cast<int>(w), width, dst);
        continue;
      }
      if (rs == 1 && kern.pack_transposed != nullptr) {
        kern.pack_transposed(src + j0 * cs, cs, kc, static_cast<int>(w), width, dst);
        continue;
      }
      if constexpr (std::is_same_v<S, P>) {
        if (w < width) std::fill(dst, dst + width * kc, P(0));
        if (cs == 1) {  // the rows of M are contiguous: whole rows of the panel are copied
          for (int64_t p = 0; p < kc; ++p) std::copy_n(src + p * rs + j0, w, dst + p * width);
        } else {  // the columns of M are contiguous: read along them
          for (int64_t j = 0; j < w; ++j) {
            const T* col = src + (j0 + j) * cs;
            for (int64_t p = 0; p < kc; ++p) dst[p * width + j] = col[p * rs];
          }
        }
      }
    }
  }
}

/// Element (i, p) of op(A) is a[i * rs + p * cs]: panels of mr rows, kc columns each.
template <class T, class S, class P>
void pack_a(const T* a, int64_t rs, int64_t cs, int64_t rows, int64_t kc, P* dst,
            const Kernel<S, P>& kern) {
  pack_panels(a, cs, rs, kc, rows, kern.mr, dst, kern);
}

/// Element (p, j) of op(B) is b[p * rs + j * cs]: panels of nr columns, kc rows each.
template <class T, class S, class P>
void pack_b(const T* b, int64_t rs, int64_t cs, int64_t kc, int64_t cols, P* dst,
            const Kernel<S, P>& kern) {
  pack_panels(b, rs, cs, kc, cols, kern.nr, dst, kern);
}

/// C = beta * C (the whole answer when k == 0 or alpha == 0).
template <class C>
void scale(int64_t m, int64_t n, C beta, C* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == C(0) ? C(0) : beta * c[i * ldc + j];
  }
}

/// Where gemm_round writes: bfloat16 C (same leading dimension as a float C would have), and
/// a bias added to each row before the rounding. Null `c`: the float C of gemm().
struct RoundedOut {
  BFloat16* c = nullptr;
  const float* bias = nullptr;
};

/// One finished tile of float sums (h x w of `tile`, row stride nr), plus the bias, rounded
/// once into bfloat16 C: the same two roundings as a float C holding the bias with beta = 1
/// (fl(bias + sum)), then narrowed, but without C's float32 copy ever reaching memory. Only
/// the dot path rounds in the tile, so the AVX-512 rounding is always there to call.
inline void round_tile(const float* tile, int64_t nr, int64_t h, int64_t w, const float* bias,
                       BFloat16* c, int64_t ldc) {
#if defined(__x86_64__)
  gemm_round_tile_avx512_bf16(tile, nr, static_cast<int>(h), static_cast<int>(w), bias, c, ldc);
#else
  (void)tile, (void)nr, (void)h, (void)w, (void)bias, (void)c, (void)ldc;
#endif
}

/// T: the operands' type; S, P: what the kernel packs from and into (see Kernel); C: the type
/// of C, alpha and beta. With `rounded.c` set (gemm_round: alpha 1, beta 0, k within one KC
/// block), each tile is rounded into rounded.c instead of stored into c.
template <class T, class S, class P, class C>
void gemm_blocked(const Kernel<S, P>& kern, bool trans_a, bool trans_b, int64_t m, int64_t n,
                  int64_t k, C alpha, const T* a, int64_t lda, const T* b, int64_t ldb, C beta,
                  C* c, int64_t ldc, RoundedOut rounded = {}) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == C(0)) return scale(m, n, beta, c, ldc);
  const int mr = kern.mr, nr = kern.nr, ks = kern.k_step;
  // op(A)(i, p) = a[i * a_rs + p * a_cs], op(B)(p, j) = b[p * b_rs + j * b_cs]
  const int64_t a_rs = trans_a ? 1 : lda, a_cs = trans_a ? lda : 1;
  const int64_t b_rs = trans_b ? 1 : ldb, b_cs = trans_b ? ldb : 1;
  // k is cut into equal KC blocks of at most kern.kc (784 = 392 + 392, not 384 + 384 + 16):
  // a thin last block would pay the loads and stores of C for a few multiply-adds. A block
  // is a whole number of pairs where the kernel packs pairs, so that only the last block
  // can end in a half pair. The cut depends on k alone, so every thread and every call sums
  // in the same order.
  const int64_t k_blocks = (k + kern.kc - 1) / kern.kc;
  const int64_t kc_max = ((k + k_blocks - 1) / k_blocks + ks - 1) / ks * ks;
  const int64_t mc_max = std::min(kern.mc, (m + mr - 1) / mr * mr);
  const int64_t nc_max = std::min(kern.nc, (n + nr - 1) / nr * nr);
  P* a_pack = scratch<P>(0, static_cast<size_t>(mc_max * kc_max / ks));
  P* b_pack = scratch<P>(1, static_cast<size_t>(nc_max * kc_max / ks));
  alignas(64) C tile[kMaxTile];
  for (int64_t ic = 0; ic < m; ic += kern.mc) {
    const int64_t mc = std::min(kern.mc, m - ic);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      const int64_t kp = (kc + ks - 1) / ks;  // packed rows of each panel of this block
      const C beta_block = pc == 0 ? beta : C(1);
      pack_a(a + ic * a_rs + pc * a_cs, a_rs, a_cs, mc, kc, a_pack, kern);
      for (int64_t jc = 0; jc < n; jc += kern.nc) {
        const int64_t nc = std::min(kern.nc, n - jc);
        pack_b(b + pc * b_rs + jc * b_cs, b_rs, b_cs, kc, nc, b_pack, kern);
        for (int64_t ir = 0; ir < mc; ir += mr) {
          const int64_t h = std::min<int64_t>(mr, mc - ir);
          const P* ap = a_pack + ir * kp;
          for (int64_t jr = 0; jr < nc; jr += nr) {
            const int64_t w = std::min<int64_t>(nr, nc - jr);
            const P* bp = b_pack + jr * kp;
            if constexpr (std::is_same_v<C, float>) {
              if (rounded.c != nullptr) {
                kern.fn(kp, ap, bp, tile, nr, alpha, C(0));
                round_tile(tile, nr, h, w,
                           rounded.bias == nullptr ? nullptr : rounded.bias + jc + jr,
                           rounded.c + (ic + ir) * ldc + jc + jr, ldc);
                continue;
              }
            }
            C* cp = c + (ic + ir) * ldc + jc + jr;
            if (h == mr && w == nr) {
              kern.fn(kp, ap, bp, cp, ldc, alpha, beta_block);
              continue;
            }
            // A ragged edge: compute the whole tile aside, then merge its valid part.
            kern.fn(kp, ap, bp, tile, nr, alpha, C(0));
            for (int64_t i = 0; i < h; ++i) {
              for (int64_t j = 0; j < w; ++j) {
                C& out = cp[i * ldc + j];
                const C t = tile[i * nr + j];
                out = beta_block == C(0) ? t : t + beta_block * out;
              }
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- threads
// Threads share out C, never a sum: each thread runs the blocked loop above on its own
// slab of rows (or of columns) of C, packing its own panels. A slab starts at a multiple of
// MR (or NR), so C is cut into exactly the tiles one thread would use, each summed over the
// same KC blocks in the same order: the result is bit-identical for any thread count.
//
// Which way to cut? Every thread packs the whole of the operand it does not cut: cutting
// the rows of C makes each thread pack all of op(B) (k x n), cutting the columns all of
// op(A) (m x k). So cut the longer side, and the smaller operand is the one packed twice.

template <class T, class S, class P, class C>
void gemm_threaded(const Kernel<S, P>& kern, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, C alpha, const T* a, int64_t lda, const T* b, int64_t ldb, C beta,
                   C* c, int64_t ldc, RoundedOut rounded = {}) {
  if (m <= 0 || n <= 0 || k <= 0) {
    gemm_blocked(kern, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, rounded);
    return;
  }
  const bool cut_rows = m >= n;
  const int64_t step = cut_rows ? kern.mr : kern.nr;  // a slab is a whole number of tiles
  const int64_t units = ((cut_rows ? m : n) + step - 1) / step;
  const int64_t macs_per_unit = step * (cut_rows ? n : m) * k;
  parallel_rows(units, macs_per_unit / 16, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * step, hi = std::min(end * step, cut_rows ? m : n);
    RoundedOut slab = rounded;
    if (cut_rows) {  // rows lo..hi of C come from rows lo..hi of op(A)
      const T* a_slab = a + lo * (trans_a ? 1 : lda);
      if (slab.c != nullptr) slab.c += lo * ldc;
      gemm_blocked(kern, trans_a, trans_b, hi - lo, n, k, alpha, a_slab, lda, b, ldb, beta,
                   c == nullptr ? c : c + lo * ldc, ldc, slab);
    } else {  // columns lo..hi of C come from columns lo..hi of op(B)
      const T* b_slab = b + lo * (trans_b ? ldb : 1);
      if (slab.c != nullptr) slab.c += lo;
      if (slab.bias != nullptr) slab.bias += lo;
      gemm_blocked(kern, trans_a, trans_b, m, hi - lo, k, alpha, a, lda, b_slab, ldb, beta,
                   c == nullptr ? c : c + lo, ldc, slab);
    }
  });
}

// ---------------------------------------------------------------- dispatch
std::atomic<GemmPath> forced_path{GemmPath::kAuto};

bool cpu_has(GemmPath path) {
#if defined(__x86_64__)
  if (path == GemmPath::kAvx512) return __builtin_cpu_supports("avx512f");
  if (path == GemmPath::kAvx2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return path == GemmPath::kPortable || path == GemmPath::kAuto;
}

// vdpbf16ps is AVX512-BF16; its packings use AVX512-BW and -VL too. (libgcc reports an
// AVX-512 feature only where the OS also saves the zmm and mask registers, as for kAvx512.)
bool cpu_has_bf16_dot() {
#if defined(__clang__)
  // Built by clang (the sanitize preset), the dot path returned zeros in every test
  // (2026-11-26, clang 16, -O0 with ASan/UBSan); until that is understood, clang builds take
  // the widening path, which the same tests hold to the same bound.
  return false;
#elif defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

/// Whether the bfloat16 gemm runs vdpbf16ps: wherever the CPU has it, unless switched off.
std::atomic<bool>& bf16_dot_on() {
  static std::atomic<bool> on{cpu_has_bf16_dot()};
  return on;
}

GemmPath current_path() {
  const GemmPath path = forced_path.load(std::memory_order_relaxed);
  return path == GemmPath::kAuto ? best_gemm_path() : path;
}

template <class T, class C>
void gemm_dispatch(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, C alpha, const T* a,
                   int64_t lda, const T* b, int64_t ldb, C beta, C* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (bf16_dot_on().load(std::memory_order_relaxed)) {
      gemm_threaded(bf16_dot_kernel(), trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                    ldc);
      return;
    }
    // Widened to float while packing, for the float kernel of the current path.
    gemm_threaded(kernel_for<float>(current_path()), trans_a, trans_b, m, n, k, alpha, a, lda, b,
                  ldb, beta, c, ldc);
  } else {
    gemm_threaded(kernel_for<T>(current_path()), trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                  beta, c, ldc);
  }
}

}  // namespace

GemmPath set_gemm_path(GemmPath path) {
  TG_CHECK(gemm_path_supported(path), ValueError, "set_gemm_path: {} is not supported here",
           gemm_path_name(path));
  return forced_path.exchange(path);
}

bool gemm_path_supported(GemmPath path) {
#if !(defined(__x86_64__))
  if (path == GemmPath::kAvx2 || path == GemmPath::kAvx512) return false;
#endif
  return cpu_has(path);
}

GemmPath best_gemm_path() {
  static const GemmPath best = cpu_has(GemmPath::kAvx512) ? GemmPath::kAvx512
                               : cpu_has(GemmPath::kAvx2) ? GemmPath::kAvx2
                                                          : GemmPath::kPortable;
  return best;
}

const char* gemm_path_name(GemmPath path) {
  switch (path) {
    case GemmPath::kAuto: return "auto";
    case GemmPath::kPortable: return "portable";
    case GemmPath::kAvx2: return "avx2";
    case GemmPath::kAvx512: return "avx512";
  }
  return "?";
}

bool set_gemm_bf16_dot(bool on) {
  TG_CHECK(!on || gemm_bf16_dot_supported(), ValueError,
           "set_gemm_bf16_dot: this CPU has no AVX512-BF16 (vdpbf16ps); the bfloat16 gemm "
           "widens to float here");
  return bf16_dot_on().exchange(on);
}

bool gemm_bf16_dot_supported() { return cpu_has_bf16_dot(); }

const char* gemm_bf16_path_name() {
  if (bf16_dot_on().load(std::memory_order_relaxed)) return "avx512_bf16";
  switch (current_path()) {
    case GemmPath::kAvx512: return "widen+avx512";
    case GemmPath::kAvx2: return "widen+avx2";
    default: return "widen+portable";
  }
}

}  // namespace detail

void gemm_round(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const BFloat16* a,
                int64_t lda, const BFloat16* b, int64_t ldb, const float* bias, BFloat16* c,
                int64_t ldc) {
  using namespace detail;
  if (m <= 0 || n <= 0) return;
  if (bf16_dot_on().load(std::memory_order_relaxed)) {
    const Kernel<BFloat16, uint32_t> kern = bf16_dot_kernel();
    if (k > 0 && k <= kern.kc) {  // one KC block: each tile's sums are final when it is done
      gemm_threaded(kern, trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f,
                    static_cast<float*>(nullptr), ldc, {c, bias});
      return;
    }
  }
  // Elsewhere: float C, bias first, then one rounding pass (the same numbers).
  // (Kept from call to call: a fresh allocation of this size is fresh pages, and faulting
  // them in cost 6% of a 1024^3 product.)
  float* y = scratch<float>(3, static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    if (bias != nullptr) std::copy(bias, bias + n, y + i * n);
  }
  gemm(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, bias != nullptr ? 1.0f : 0.0f, y, n);
  for (int64_t i = 0; i < m; ++i) narrow(y + i * n, c + i * ldc, n);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  detail::gemm_dispatch(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  detail::gemm_dispatch(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  detail::gemm_dispatch(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tg

namespace tg {

void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc) {
  detail::reference(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                    const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                    double* c, int64_t ldc) {
  detail::reference(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta,
                    float* c, int64_t ldc) {
  detail::reference(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tg
