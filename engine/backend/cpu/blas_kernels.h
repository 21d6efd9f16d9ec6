#pragma once
// Which OpenBLAS kernel family the CPU backend runs, chosen right on any x86-64.
//
// OpenBLAS built with DYNAMIC_ARCH picks its kernels when it is loaded, from the CPU's vendor,
// family and model. A CPU newer than the OpenBLAS build is unknown to it and gets a generic
// fallback (Debian 12's 0.3.21 runs its SSE3 "Prescott" kernels on Intel Xeons of family 6
// model 207, about a quarter of the CPU's SGEMM rate), silently. mavg compares the family
// OpenBLAS chose with the best vector ISA the CPU and the OS support (cpuid, xgetbv) and, where
// the choice is below it and the build has kernels at a higher level, switches OpenBLAS to the
// best of those before the first BLAS call: OPENBLAS_CORETYPE set for the moment OpenBLAS's own
// core selection runs again (gotoblas_dynamic_init, what its load-time constructor calls), then
// the environment restored, so that child processes (sweep workers, MPI ranks, SLURM tasks)
// decide for themselves on their own CPUs. A user's own OPENBLAS_CORETYPE wins, unless it asks
// for instructions the CPU lacks (OpenBLAS would die of SIGILL at the first GEMM): that is an
// error. The family in use is logged once and recorded with every run (result.json's
// `blas_kernels`), so timings from different kernels are never compared unknowingly.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mavg {

// The vector instruction sets OpenBLAS's x86-64 kernel families are written for, in order.
// What decides an FP32 GEMM's speed: BF16/VNNI/AMX extensions do not change it.
enum class Isa { kUnknown, kSse2, kSse3, kSsse3, kSse42, kAvx, kAvx2, kAvx512 };
std::string_view IsaName(Isa isa);

// What this CPU and its OS can run.
struct CpuInfo {
  bool x86_64 = false;
  std::string vendor;      // cpuid's vendor string: "GenuineIntel", "AuthenticAMD", ...
  std::string model_name;  // the brand string, e.g. "Intel(R) Xeon(R) Platinum 8581C"
  int family = 0, model = 0;
  Isa isa = Isa::kUnknown;   // the best level whose every instruction the CPU and OS support
  bool avx512_bf16 = false;  // AVX512_BF16 as well (OpenBLAS's Cooperlake family)
  bool fma4 = false;         // AMD's FMA4 (OpenBLAS's Bulldozer ... Excavator kernels use it)
  bool amd3dnow = false;     // AMD's 3DNow! (its Athlon and Opteron kernels use it)
};
// From cpuid and xgetbv (a level counts only where the OS saves its registers).
CpuInfo DetectCpu();

// The ISA an OpenBLAS x86-64 kernel family (an OPENBLAS_CORETYPE name, any case) needs;
// kUnknown for names of other architectures or newer than this table.
Isa FamilyIsa(std::string_view family);
// Whether `cpu` can run every instruction of `family`'s kernels: its ISA level, and the AMD
// extensions some families use beyond it (FMA4 for Bulldozer to Excavator, 3DNow! for Athlon
// and Opteron), which Intel CPUs and AMD's Zen lack. A family mavg does not know: true.
bool CpuRuns(const CpuInfo& cpu, std::string_view family);

// What to do about OpenBLAS's choice.
struct KernelDecision {
  enum class Action {
    kKeep,    // run what OpenBLAS chose
    kSwitch,  // switch to `family`
    kRefuse,  // the user's OPENBLAS_CORETYPE needs instructions this CPU lacks: an error
  };
  Action action = Action::kKeep;
  std::string family;      // kSwitch: the family to run; else what OpenBLAS chose
  bool below_cpu = false;  // the family kept is below what the CPU supports
  std::string note;        // one line: why
};

// `chosen`: the family OpenBLAS runs now; `user_coretype`: the user's OPENBLAS_CORETYPE, if
// set; `available`: the families this OpenBLAS build has (empty when it cannot switch: not
// DYNAMIC_ARCH). Targets, highest level first: AVX-512 Cooperlake (with AVX512_BF16) or
// SkylakeX; AVX2 Zen (AMD) or Haswell; AVX Sandybridge; SSE4.2 Nehalem; SSSE3 Core2.
KernelDecision DecideKernels(const CpuInfo& cpu, std::string_view chosen,
                             const std::optional<std::string>& user_coretype,
                             const std::vector<std::string>& available);

// The process's BLAS kernels, settled once (SelectBlasKernels).
struct BlasKernels {
  std::string library;          // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." (openblas_get_config)
  std::string family;           // the kernel family in use: "Zen", "Cooperlake", ...
  std::string openblas_choice;  // what OpenBLAS chose by itself (or was told by the user)
  std::string source;           // "openblas" | "mavg" (switched) | "user" (OPENBLAS_CORETYPE)
  std::string note;             // one line for the log
  bool below_cpu = false;       // slower kernels than the CPU supports (told, not fixed)
  std::string error;            // non-empty: training must refuse (see KernelDecision::kRefuse)
  CpuInfo cpu;
};

// Settles the kernels on first call (before any BLAS call: the CPU backend calls it when it is
// created, mavg's main first thing) and returns them; later calls return the same. Testing
// hook: MAVG_TEST_OPENBLAS_START=FAMILY first switches OpenBLAS to FAMILY, as if OpenBLAS had
// chosen it itself, so that the correction can be tested on any CPU.
const BlasKernels& SelectBlasKernels();

}  // namespace mavg
