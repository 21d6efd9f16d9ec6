#include "engine/backend/cpu/blas_kernels.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

extern "C" {
// OpenBLAS's public API (cblas.h declares them in most versions; repeated for the others).
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace mavg {
namespace {

struct Family {
  const char* name;  // as openblas_get_corename() spells it
  Isa isa;
  bool fma4 = false;      // its kernels use AMD's FMA4
  bool amd3dnow = false;  // its kernels use AMD's 3DNow!
};

// Every x86-64 family OpenBLAS's DYNAMIC_ARCH builds know, with the ISA its kernels target.
constexpr Family kFamilies[] = {
    {"Katmai", Isa::kSse2},
    {"Coppermine", Isa::kSse2},
    {"Northwood", Isa::kSse2},
    {"Banias", Isa::kSse2},
    {"Athlon", Isa::kSse2, false, true},
    {"Opteron", Isa::kSse2, false, true},
    {"Prescott", Isa::kSse3},
    {"Opteron_SSE3", Isa::kSse3, false, true},
    {"Barcelona", Isa::kSse3},
    {"Nano", Isa::kSse3},
    {"Core2", Isa::kSsse3},
    {"Penryn", Isa::kSsse3},
    {"Dunnington", Isa::kSsse3},
    {"Atom", Isa::kSsse3},
    {"Bobcat", Isa::kSsse3},
    {"Nehalem", Isa::kSse42},
    {"Sandybridge", Isa::kAvx},
    {"Bulldozer", Isa::kAvx, true},
    {"Piledriver", Isa::kAvx, true},
    {"Steamroller", Isa::kAvx, true},
    {"Haswell", Isa::kAvx2},
    {"Zen", Isa::kAvx2},
    {"Excavator", Isa::kAvx2, true},
    {"SkylakeX", Isa::kAvx512},
    {"Cooperlake", Isa::kAvx512},
    {"SapphireRapids", Isa::kAvx512},
};

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The families mavg switches to at `level`, best first (an AMD CPU prefers OpenBLAS's Zen
// kernels at AVX2, as OpenBLAS itself does on the AMD CPUs it knows).
std::vector<std::string> Targets(Isa level, const CpuInfo& cpu) {
  const bool amd = cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine";
  switch (level) {
    case Isa::kAvx512:
      if (cpu.avx512_bf16) return {"Cooperlake", "SkylakeX"};
      return {"SkylakeX"};
    case Isa::kAvx2:
      if (amd) return {"Zen", "Haswell"};
      return {"Haswell", "Zen"};
    case Isa::kAvx:
      return {"Sandybridge"};
    case Isa::kSse42:
      return {"Nehalem"};
    case Isa::kSsse3:
      return {"Core2"};
    case Isa::kSse3:
      return {"Prescott"};
    default:
      return {};
  }
}

}  // namespace

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kSse2:
      return "SSE2";
    case Isa::kSse3:
      return "SSE3";
    case Isa::kSsse3:
      return "SSSE3";
    case Isa::kSse42:
      return "SSE4.2";
    case Isa::kAvx:
      return "AVX";
    case Isa::kAvx2:
      return "AVX2";
    case Isa::kAvx512:
      return "AVX-512";
    case Isa::kUnknown:
      break;
  }
  return "unknown ISA";
}

Isa FamilyIsa(std::string_view family) {
  for (const Family& f : kFamilies) {
    if (SameName(f.name, family)) return f.isa;
  }
  return Isa::kUnknown;
}

bool CpuRuns(const CpuInfo& cpu, std::string_view family) {
  for (const Family& f : kFamilies) {
    if (!SameName(f.name, family)) continue;
    return f.isa <= cpu.isa && (!f.fma4 || cpu.fma4) && (!f.amd3dnow || cpu.amd3dnow);
  }
  return true;
}

CpuInfo DetectCpu() {
  CpuInfo cpu;
#if defined(__x86_64__)
  cpu.x86_64 = true;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return cpu;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  cpu.vendor = vendor;
  __get_cpuid(1, &a, &b, &c, &d);
  const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  cpu.family =
      static_cast<int>(base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family);
  cpu.model = static_cast<int>(base_family == 0x6 || base_family == 0xf
                                   ? base_model + (((a >> 16) & 0xf) << 4)
                                   : base_model);
  const bool sse3 = c & (1u << 0), ssse3 = c & (1u << 9), fma = c & (1u << 12),
             sse42 = c & (1u << 20), osxsave = c & (1u << 27), avx = c & (1u << 28);
  // The OS saves the YMM (bits 1-2) and ZMM/opmask (bits 5-7) state: only then are the
  // instructions usable.
  uint64_t xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  const bool os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xe6) == 0xe6;
  bool avx2 = false, avx512 = false;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    avx2 = b & (1u << 5);
    // Skylake-X's set: F, DQ, CD, BW, VL (what OpenBLAS's AVX-512 kernels use).
    const unsigned need = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
    avx512 = (b & need) == need;
    const unsigned subleaves = a;
    if (subleaves >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      cpu.avx512_bf16 = avx512 && os_avx512 && (a & (1u << 5));
    }
  }
  if (avx512 && os_avx512 && avx2 && fma && os_avx) {
    cpu.isa = Isa::kAvx512;
  } else if (avx2 && fma && avx && os_avx) {
    cpu.isa = Isa::kAvx2;
  } else if (avx && os_avx) {
    cpu.isa = Isa::kAvx;
  } else if (sse42) {
    cpu.isa = Isa::kSse42;
  } else if (ssse3) {
    cpu.isa = Isa::kSsse3;
  } else if (sse3) {
    cpu.isa = Isa::kSse3;
  } else {
    cpu.isa = Isa::kSse2;
  }
  __get_cpuid(0x80000000, &a, &b, &c, &d);
  const unsigned max_extended = a;
  if (max_extended >= 0x80000001) {
    __get_cpuid(0x80000001, &a, &b, &c, &d);
    cpu.fma4 = (c & (1u << 16)) && os_avx;
    cpu.amd3dnow = d & (1u << 31);
  }
  if (max_extended >= 0x80000004) {
    unsigned brand[12];
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002 + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
                  &brand[4 * i + 3]);
    }
    char text[49] = {};
    std::memcpy(text, brand, 48);
    std::string name = text;
    const size_t first = name.find_first_not_of(' ');
    const size_t last = name.find_last_not_of(' ');
    cpu.model_name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
  }
#endif
  return cpu;
}

KernelDecision DecideKernels(const CpuInfo& cpu, std::string_view chosen,
                             const std::optional<std::string>& user_coretype,
                             const std::vector<std::string>& available) {
  KernelDecision d;
  d.family = std::string(chosen);
  const Isa have = FamilyIsa(chosen);
  const std::string cpu_text =
      fmt::format("this CPU{} supports {}",
                  cpu.model_name.empty() ? "" : " (" + cpu.model_name + ")", IsaName(cpu.isa));
  if (!cpu.x86_64) {
    d.note = "OpenBLAS's choice (not an x86-64 CPU)";
    return d;
  }
  if (have == Isa::kUnknown || cpu.isa == Isa::kUnknown) {
    d.note = fmt::format("OpenBLAS's choice, not a family mavg knows ({})", cpu_text);
    return d;
  }
  if (user_coretype) {
    if (!CpuRuns(cpu, chosen)) {
      d.action = KernelDecision::Action::kRefuse;
      d.note = fmt::format(
          "OPENBLAS_CORETYPE={} makes OpenBLAS run its {} kernels, which need {}{}, but {}{}: "
          "they would stop at the first GEMM with an illegal instruction (unset "
          "OPENBLAS_CORETYPE, or name a family this CPU runs, up to {})",
          *user_coretype, chosen, IsaName(have),
          FamilyIsa(chosen) <= cpu.isa ? " and an AMD extension (FMA4 or 3DNow!)" : "", cpu_text,
          FamilyIsa(chosen) <= cpu.isa ? " without it" : "", IsaName(cpu.isa));
      return d;
    }
    d.below_cpu = have < cpu.isa;
    d.note =
        fmt::format("as OPENBLAS_CORETYPE={} (set by the user) asks{}", *user_coretype,
                    d.below_cpu ? fmt::format(", slower than the CPU allows: {} kernels, but {}",
                                              IsaName(have), cpu_text)
                                : "");
    return d;
  }
  if (have >= cpu.isa) {
    d.note = fmt::format("OpenBLAS's choice, {} kernels ({})", IsaName(have), cpu_text);
    return d;
  }
  for (int level = static_cast<int>(cpu.isa); level > static_cast<int>(have); --level) {
    for (const std::string& target : Targets(static_cast<Isa>(level), cpu)) {
      const bool built = std::any_of(available.begin(), available.end(),
                                     [&](const std::string& a) { return SameName(a, target); });
      if (!built) continue;
      d.action = KernelDecision::Action::kSwitch;
      d.family = target;
      d.note = fmt::format(
          "switched by mavg: OpenBLAS chose its {} kernels ({} only), but {} (set "
          "OPENBLAS_CORETYPE to choose yourself)",
          chosen, IsaName(have), cpu_text);
      return d;
    }
  }
  d.below_cpu = true;
  d.note = fmt::format(
      "OpenBLAS's choice, {} only: {}, but this OpenBLAS build has no kernels for it (a newer "
      "OpenBLAS would be faster)",
      IsaName(have), cpu_text);
  return d;
}

namespace {

using VoidFn = void (*)();

// OpenBLAS's DYNAMIC_ARCH core selection, where the build has one.
struct DynamicArch {
  VoidFn init = nullptr;  // gotoblas_dynamic_init: choose from OPENBLAS_CORETYPE or cpuid
  VoidFn quit = nullptr;  // gotoblas_dynamic_quit: forget the choice
  bool Usable() const { return init != nullptr && quit != nullptr; }
};

DynamicArch FindDynamicArch() {
  DynamicArch d;
  d.init = reinterpret_cast<VoidFn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  d.quit = reinterpret_cast<VoidFn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  return d;
}

// The families whose kernel tables this build exports (gotoblas_<NAME>).
std::vector<std::string> AvailableFamilies() {
  std::vector<std::string> out;
  for (const Family& f : kFamilies) {
    std::string symbol = "gotoblas_";
    for (const char* p = f.name; *p != '\0'; ++p) {
      symbol += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
    }
    if (dlsym(RTLD_DEFAULT, symbol.c_str()) != nullptr) out.emplace_back(f.name);
  }
  return out;
}

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string CoreName() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "";
}

// Runs OpenBLAS's core selection again with OPENBLAS_CORETYPE = `family` (nullopt: unset, i.e.
// OpenBLAS's own choice), then puts the environment back as it was. Returns the family in use.
std::string Reselect(const DynamicArch& arch, const std::optional<std::string>& family) {
  const std::optional<std::string> saved = Env("OPENBLAS_CORETYPE");
  if (family) {
    setenv("OPENBLAS_CORETYPE", family->c_str(), 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
  arch.quit();
  arch.init();
  if (saved) {
    setenv("OPENBLAS_CORETYPE", saved->c_str(), 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
  return CoreName();
}

BlasKernels Select() {
  BlasKernels k;
  k.cpu = DetectCpu();
  const DynamicArch arch = FindDynamicArch();
  const std::vector<std::string> available =
      arch.Usable() ? AvailableFamilies() : std::vector<std::string>{};
  const std::optional<std::string> user = Env("OPENBLAS_CORETYPE");
  if (const auto start = Env("MAVG_TEST_OPENBLAS_START"); start && arch.Usable() && !user) {
    // Never a family the CPU cannot run: even its set-up code may use its instructions.
    if (FamilyIsa(*start) != Isa::kUnknown && CpuRuns(k.cpu, *start)) {
      Reselect(arch, *start);
    }
  }
  k.openblas_choice = CoreName();
  const KernelDecision d = DecideKernels(k.cpu, k.openblas_choice, user, available);
  k.family = k.openblas_choice;
  k.source = user ? "user" : "openblas";
  k.note = d.note;
  k.below_cpu = d.below_cpu;
  if (d.action == KernelDecision::Action::kRefuse) k.error = d.note;
  if (d.action == KernelDecision::Action::kSwitch) {
    const std::string now = Reselect(arch, d.family);
    if (SameName(now, d.family)) {
      k.family = now;
      k.source = "mavg";
    } else {  // the build did not take it: back to OpenBLAS's own choice
      k.family = Reselect(arch, std::nullopt);
      k.below_cpu = true;
      k.note = fmt::format(
          "OpenBLAS's choice, below this CPU's {}: it did not take {} ({} ran "
          "instead)",
          IsaName(k.cpu.isa), d.family, now);
    }
  }
  const char* config = openblas_get_config();
  k.library = config != nullptr ? config : "OpenBLAS";
  return k;
}

}  // namespace

const BlasKernels& SelectBlasKernels() {
  static const BlasKernels kernels = Select();
  return kernels;
}

}  // namespace mavg
