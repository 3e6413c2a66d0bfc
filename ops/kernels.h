// ops/kernels.h — the one switch between the reference kernels and the fast ones, and the
// rule every kernel follows.
//
// An op that has a fast kernel keeps two versions of it, of one signature:
//   - the reference kernel: plain loops over contiguous memory in the op's own file
//     (ops/<op>.cpp), what the course teaches and its exercises blank;
//   - the fast kernel: vectorised, blocked, threaded, in ops/fast/<op>.cpp (nn/fast/ for the
//     optimizers). A tree without those folders (a learner's student tree) has no fast
//     kernels at all and runs the reference ones.
// The op's header declares the pair (`tg::kernels::rms_norm_forward`, ...); the op file
// defines it with the reference kernel, and ops/fast/install.cpp adds the fast one when the
// library starts. KernelPair::get is the one place that chooses: the fast kernel when the
// switch says so and there is one, else the reference. No op chooses on its own.
//
// The write rule, the same for both versions of every kernel:
//   - a kernel WRITES every element of its outputs and never reads them first;
//   - except a gradient handed over as GradOut with `add` set (an input's existing .grad,
//     Context::grad_buffer): the kernel ADDS its result into what is there.
// It is BLAS's beta: 0 (write) or 1 (add). A reference kernel that sums contributions calls
// zero_unless_adding first and then adds; a fast one writes or adds in its single pass.
//
// The switch starts from the environment variable TAPEGRAD_KERNELS ("fast" or "reference";
// fast by default where fast kernels exist) and can be changed from code; tests use
// KernelPathGuard to run an op on one path, or its forward on one and its backward on the
// other (tests/ops/fast/).
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace tg {

/// Which version of the kernels ops run.
enum class KernelPath { kReference, kFast };

/// The path ops run now.
KernelPath kernel_path();
/// Sets the path. kFast in a tree built without fast kernels is a MisuseError.
void set_kernel_path(KernelPath path);
/// True when this build has the fast kernels (ops/fast/ and nn/fast/ were compiled in).
bool fast_kernels_available();
/// "reference" or "fast".
const char* kernel_path_name(KernelPath path);

/// Runs ops on `path` for the lifetime of the guard, then restores the previous path.
class KernelPathGuard {
 public:
  explicit KernelPathGuard(KernelPath path) : previous_(kernel_path()) { set_kernel_path(path); }
  ~KernelPathGuard() { set_kernel_path(previous_); }
  KernelPathGuard(const KernelPathGuard&) = delete;
  KernelPathGuard& operator=(const KernelPathGuard&) = delete;

 private:
  KernelPath previous_;
};

namespace kernels {

/// One kernel of signature Fn (a function type) in its two versions.
template <class Fn>
class Kernel {
 public:
  constexpr explicit Kernel(Fn* reference_kernel) : reference_(reference_kernel) {}
  /// The kernel to run: the fast one when the path is kFast and there is one, else the
  /// reference. The one place that decides.
  Fn* get() const {
    // kernel_path() first: its first call installs the fast kernels (ops/kernels.cpp).
    return kernel_path() == KernelPath::kFast && fast_ != nullptr ? fast_ : reference_;
  }
  Fn* reference() const { return reference_; }
  Fn* fast() const { return fast_; }
  /// Called by ops/fast/install.cpp (nn/fast/install.cpp) when the library starts.
  void set_fast(Fn* fast_kernel) { fast_ = fast_kernel; }

 private:
  Fn* reference_;
  Fn* fast_ = nullptr;
};

/// A kernel whose signature Fn<F> depends on the compute type, for each F in Types
/// (float and double for most ops): get<F>() picks as Kernel::get does.
template <template <class> class Fn, class... Types>
class KernelPair {
 public:
  constexpr explicit KernelPair(Fn<Types>*... reference)
      : versions_(Kernel<Fn<Types>>(reference)...) {}
  template <class F>
  Fn<F>* get() const {
    return std::get<Kernel<Fn<F>>>(versions_).get();
  }
  template <class F>
  const Kernel<Fn<F>>& of() const {
    return std::get<Kernel<Fn<F>>>(versions_);
  }
  void set_fast(Fn<Types>*... fast) {
    (std::get<Kernel<Fn<Types>>>(versions_).set_fast(fast), ...);
  }

 private:
  std::tuple<Kernel<Fn<Types>>...> versions_;
};

/// A gradient a backward kernel produces: where it goes (null: not needed), and whether the
/// kernel adds into what is there (`add`: an input's existing .grad) or writes over it.
template <class F>
struct GradOut {
  F* data = nullptr;
  bool add = false;
  explicit operator bool() const { return data != nullptr; }
  F& operator[](int64_t i) const { return data[i]; }
  /// Element i's whole gradient v, by the rule: written, or added to what is there.
  void put(int64_t i, F v) const { data[i] = add ? data[i] + v : v; }
};

/// For a reference kernel that sums into a gradient of n elements: starts it at zero, unless
/// it is an existing .grad to add into.
template <class F>
void zero_unless_adding(GradOut<F> g, int64_t n) {
  if (g && !g.add) std::fill(g.data, g.data + n, F{});  // F{}: +0, for the half types too
}

}  // namespace kernels

namespace detail {
/// Adds the fast kernels to every pair of the ops layer; returns whether there are any.
/// Defined in ops/fast/install.cpp, or in ops/reference_only.cpp where ops/fast/ is absent
/// (ops/CMakeLists.txt chooses).
bool install_fast_kernels();
}  // namespace detail

}  // namespace tg
