#include "engine/backend/cpu/float_env.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace mavg {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFtz = 1u << 15;  // MXCSR flush-to-zero: subnormal results become 0
constexpr unsigned kDaz = 1u << 6;   // MXCSR denormals-are-zero: subnormal inputs read as 0
#elif defined(__aarch64__)
constexpr uint64_t kFz = uint64_t{1} << 24;  // FPCR FZ: both, for single and double precision
#endif

}  // namespace

bool FlushSubnormalsOnThisThread() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | kFtz | kDaz);
  return true;
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  fpcr |= kFz;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
  return true;
#else
  return false;
#endif
}

bool SubnormalsFlushedOnThisThread() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & (kFtz | kDaz)) == (kFtz | kDaz);
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return (fpcr & kFz) != 0;
#else
  return false;
#endif
}

}  // namespace mavg
