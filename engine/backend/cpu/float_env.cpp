#include "engine/backend/cpu/float_env.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace mavg {
namespace {

// The calling thread's FP control register and the bits that flush subnormals, where known.
#if defined(__x86_64__) || defined(__i386__)
constexpr bool kKnown = true;
// MXCSR flush-to-zero (subnormal results become 0) and denormals-are-zero (inputs read as 0).
constexpr uint64_t kFlushBits = (uint64_t{1} << 15) | (uint64_t{1} << 6);
uint64_t ReadControl() { return _mm_getcsr(); }
void WriteControl(uint64_t v) { _mm_setcsr(static_cast<unsigned>(v)); }
#elif defined(__aarch64__)
constexpr bool kKnown = true;
constexpr uint64_t kFlushBits = uint64_t{1} << 24;  // FPCR FZ: results and inputs, both widths
uint64_t ReadControl() {
  uint64_t v = 0;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void WriteControl(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v)); }
#else
constexpr bool kKnown = false;
constexpr uint64_t kFlushBits = 0;
uint64_t ReadControl() { return 0; }
void WriteControl(uint64_t) {}
#endif

}  // namespace

bool FlushSubnormalsOnThisThread() {
  if (!kKnown) return false;
  WriteControl(ReadControl() | kFlushBits);
  return true;
}

bool SubnormalsFlushedOnThisThread() {
  return kKnown && (ReadControl() & kFlushBits) == kFlushBits;
}

}  // namespace mavg
