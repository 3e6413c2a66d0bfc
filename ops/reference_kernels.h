// ops/reference_kernels.h — the switch between the fast kernels and the plain ones.
//
// Every op keeps its plain, readable loop (the reference kernel) next to any fast kernel
// that replaces it. With the switch on, everything runs on the plain loops: use it to
// check a result against the textbook computation, or to read what an op does in a
// debugger. The switch starts from the environment variable TAPEGRAD_REFERENCE_KERNELS
// ("1" = on) and can be flipped at any time from code.
#pragma once

namespace tg {

/// Runs every op on its plain reference kernel (true) or on the fast kernels (false).
void set_reference_kernels(bool on);

/// True when ops should use their plain reference kernels.
bool reference_kernels();

/// The setting when TAPEGRAD_REFERENCE_KERNELS is not set: on in a student tree (the
/// course's exercises are the plain kernels, tools/student_tree.cpp), off otherwise.
bool reference_kernels_by_default();

/// Turns the reference kernels on for the lifetime of the guard, then restores the setting.
class ReferenceKernelsGuard {
 public:
  explicit ReferenceKernelsGuard(bool on = true) : previous_(reference_kernels()) {
    set_reference_kernels(on);
  }
  ~ReferenceKernelsGuard() { set_reference_kernels(previous_); }
  ReferenceKernelsGuard(const ReferenceKernelsGuard&) = delete;
  ReferenceKernelsGuard& operator=(const ReferenceKernelsGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tg
