// The choice of OpenBLAS kernel family: a table of CPUs, OpenBLAS choices and user overrides
// against the action mavg takes; and the process's own choice, checked against cpuid.
#include <gtest/gtest.h>

#include <cblas.h>

#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/blas_kernels.h"

namespace mavg {
namespace {

using Action = KernelDecision::Action;

CpuInfo Cpu(Isa isa, const char* vendor = "GenuineIntel", bool bf16 = false) {
  CpuInfo c;
  c.x86_64 = true;
  c.vendor = vendor;
  c.model_name = "test CPU";
  c.isa = isa;
  c.avx512_bf16 = bf16;
  return c;
}

CpuInfo WithFma4(CpuInfo c) {
  c.fma4 = true;
  return c;
}

// Debian 12's OpenBLAS 0.3.21 (DYNAMIC_ARCH): every family but SapphireRapids.
const std::vector<std::string> kDebian = {
    "Prescott", "Core2",     "Penryn",     "Dunnington", "Nehalem",    "Atom",
    "Opteron",  "Barcelona", "Nano",       "Sandybridge", "Bulldozer", "Piledriver",
    "Haswell",  "Steamroller", "Excavator", "Zen",       "SkylakeX",   "Cooperlake"};

struct Case {
  const char* what;
  CpuInfo cpu;
  const char* chosen;
  std::optional<std::string> user;
  std::vector<std::string> available;
  Action action;
  const char* family;  // the family run (kSwitch: switched to; else kept)
  bool below_cpu;
};

TEST(BlasKernels, DecisionTable) {
  const std::vector<Case> cases = {
      {"Xeon 6/207 (AVX-512 + BF16) on Prescott: the issue's case", Cpu(Isa::kAvx512, "GenuineIntel", true),
       "Prescott", std::nullopt, kDebian, Action::kSwitch, "Cooperlake", false},
      {"AVX-512 without BF16: SkylakeX", Cpu(Isa::kAvx512), "Prescott", std::nullopt, kDebian,
       Action::kSwitch, "SkylakeX", false},
      {"AVX-512 CPU, OpenBLAS chose Haswell (too old to know it)", Cpu(Isa::kAvx512), "Haswell",
       std::nullopt, kDebian, Action::kSwitch, "SkylakeX", false},
      {"a build without Cooperlake takes SkylakeX", Cpu(Isa::kAvx512, "GenuineIntel", true),
       "Prescott", std::nullopt, {"Prescott", "Haswell", "SkylakeX"}, Action::kSwitch, "SkylakeX",
       false},
      {"a build without AVX-512 kernels takes the best below", Cpu(Isa::kAvx512), "Prescott",
       std::nullopt, {"Prescott", "Sandybridge", "Haswell"}, Action::kSwitch, "Haswell", false},
      {"AMD AVX2 CPU unknown to OpenBLAS: Zen", Cpu(Isa::kAvx2, "AuthenticAMD"), "Prescott",
       std::nullopt, kDebian, Action::kSwitch, "Zen", false},
      {"Intel AVX2 CPU unknown to OpenBLAS: Haswell", Cpu(Isa::kAvx2), "Nehalem", std::nullopt,
       kDebian, Action::kSwitch, "Haswell", false},
      {"AMD Zen 4 (AVX-512 + BF16) on OpenBLAS's Zen: Cooperlake",
       Cpu(Isa::kAvx512, "AuthenticAMD", true), "Zen", std::nullopt, kDebian, Action::kSwitch,
       "Cooperlake", false},
      {"AVX-only CPU on Prescott: Sandybridge", Cpu(Isa::kAvx), "Prescott", std::nullopt,
       kDebian, Action::kSwitch, "Sandybridge", false},
      {"OpenBLAS right: Zen on AMD AVX2", Cpu(Isa::kAvx2, "AuthenticAMD"), "Zen", std::nullopt,
       kDebian, Action::kKeep, "Zen", false},
      {"OpenBLAS right: Haswell on an AMD AVX2 CPU is as good", Cpu(Isa::kAvx2, "AuthenticAMD"),
       "Haswell", std::nullopt, kDebian, Action::kKeep, "Haswell", false},
      {"OpenBLAS right: Cooperlake", Cpu(Isa::kAvx512, "GenuineIntel", true), "Cooperlake",
       std::nullopt, kDebian, Action::kKeep, "Cooperlake", false},
      {"OpenBLAS's SapphireRapids on a newer build is kept", Cpu(Isa::kAvx512, "GenuineIntel", true),
       "SapphireRapids", std::nullopt, kDebian, Action::kKeep, "SapphireRapids", false},
      {"Excavator's own kernels are at the CPU's level", Cpu(Isa::kAvx2, "AuthenticAMD"),
       "Excavator", std::nullopt, kDebian, Action::kKeep, "Excavator", false},
      {"a build with nothing better (not DYNAMIC_ARCH): kept, told", Cpu(Isa::kAvx512), "Haswell",
       std::nullopt, {}, Action::kKeep, "Haswell", true},
      {"a build whose best is the choice: kept, told", Cpu(Isa::kAvx512), "Haswell", std::nullopt,
       {"Prescott", "Haswell"}, Action::kKeep, "Haswell", true},
      {"the user's Prescott wins, told it is slower", Cpu(Isa::kAvx512, "GenuineIntel", true),
       "Prescott", std::string("prescott"), kDebian, Action::kKeep, "Prescott", true},
      {"the user's Haswell on an AVX2 CPU", Cpu(Isa::kAvx2), "Haswell", std::string("Haswell"),
       kDebian, Action::kKeep, "Haswell", false},
      {"the user's SkylakeX on an AVX2 CPU would die of SIGILL: refused", Cpu(Isa::kAvx2, "AuthenticAMD"),
       "SkylakeX", std::string("SkylakeX"), kDebian, Action::kRefuse, "SkylakeX", false},
      {"the user's Excavator on an Intel AVX2 CPU (no FMA4): refused", Cpu(Isa::kAvx2),
       "Excavator", std::string("excavator"), kDebian, Action::kRefuse, "Excavator", false},
      {"the user's Excavator on a Zen (AVX2, no FMA4): refused", Cpu(Isa::kAvx2, "AuthenticAMD"),
       "Excavator", std::string("Excavator"), kDebian, Action::kRefuse, "Excavator", false},
      {"the user's Excavator on an Excavator (FMA4): kept", WithFma4(Cpu(Isa::kAvx2, "AuthenticAMD")),
       "Excavator", std::string("Excavator"), kDebian, Action::kKeep, "Excavator", false},
      {"the user's Opteron on an Intel CPU (no 3DNow!): refused", Cpu(Isa::kAvx2), "Opteron",
       std::string("Opteron"), kDebian, Action::kRefuse, "Opteron", false},
      {"the user's Prescott on any x86-64 AVX2 CPU: kept, slower", Cpu(Isa::kAvx2), "Prescott",
       std::string("Prescott"), kDebian, Action::kKeep, "Prescott", true},
      {"a family mavg does not know: kept", Cpu(Isa::kAvx512), "Zen7", std::nullopt, kDebian,
       Action::kKeep, "Zen7", false},
      {"an SSE2-only CPU on Prescott?? (OpenBLAS knows better): kept", Cpu(Isa::kSse2),
       "Prescott", std::nullopt, kDebian, Action::kKeep, "Prescott", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const KernelDecision d = DecideKernels(c.cpu, c.chosen, c.user, c.available);
    EXPECT_EQ(d.action, c.action);
    EXPECT_EQ(d.family, c.family);
    EXPECT_EQ(d.below_cpu, c.below_cpu);
    EXPECT_FALSE(d.note.empty());
    EXPECT_EQ(d.note.find('\n'), std::string::npos);  // one line
  }
}

TEST(BlasKernels, NotX86KeepsOpenBlasChoice) {
  CpuInfo arm;
  arm.x86_64 = false;
  const KernelDecision d = DecideKernels(arm, "NeoverseN1", std::nullopt, {});
  EXPECT_EQ(d.action, Action::kKeep);
  EXPECT_EQ(d.family, "NeoverseN1");
}

TEST(BlasKernels, RefusalNamesTheVariableAndTheIsa) {
  const KernelDecision d = DecideKernels(Cpu(Isa::kAvx2), "SkylakeX", std::string("skylakex"),
                                         kDebian);
  ASSERT_EQ(d.action, Action::kRefuse);
  EXPECT_NE(d.note.find("OPENBLAS_CORETYPE=skylakex"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("AVX-512"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("AVX2"), std::string::npos) << d.note;
}

TEST(BlasKernels, RefusalForAnAmdExtensionSaysSo) {
  const KernelDecision d = DecideKernels(Cpu(Isa::kAvx512), "Piledriver",
                                         std::string("PILEDRIVER"), kDebian);
  ASSERT_EQ(d.action, Action::kRefuse);
  EXPECT_NE(d.note.find("FMA4"), std::string::npos) << d.note;
}

TEST(BlasKernels, CpuRunsNeedsTheAmdExtensions) {
  CpuInfo intel = Cpu(Isa::kAvx512);
  EXPECT_TRUE(CpuRuns(intel, "Haswell"));
  EXPECT_TRUE(CpuRuns(intel, "zen"));
  EXPECT_FALSE(CpuRuns(intel, "Bulldozer"));
  EXPECT_FALSE(CpuRuns(intel, "Athlon"));
  EXPECT_FALSE(CpuRuns(Cpu(Isa::kAvx2), "SkylakeX"));
  CpuInfo old_amd = Cpu(Isa::kSse3, "AuthenticAMD");
  old_amd.amd3dnow = true;
  EXPECT_TRUE(CpuRuns(old_amd, "Opteron_SSE3"));
  EXPECT_TRUE(CpuRuns(old_amd, "Barcelona"));
  EXPECT_TRUE(CpuRuns(intel, "Zen7"));  // unknown: not mavg's to refuse
}

TEST(BlasKernels, FamilyIsaIgnoresCase) {
  EXPECT_EQ(FamilyIsa("COOPERLAKE"), Isa::kAvx512);
  EXPECT_EQ(FamilyIsa("zen"), Isa::kAvx2);
  EXPECT_EQ(FamilyIsa("Prescott"), Isa::kSse3);
  EXPECT_EQ(FamilyIsa("Cortex-A57"), Isa::kUnknown);
}

// This process: the family in use is what OpenBLAS reports, and unless the user chose, it is
// at the CPU's best level wherever the build has kernels for that level.
TEST(BlasKernels, ProcessChoiceMatchesCpu) {
  const BlasKernels& k = SelectBlasKernels();
  EXPECT_EQ(k.family, std::string(openblas_get_corename()));
  EXPECT_EQ(&k, &SelectBlasKernels());  // settled once
  if (!k.cpu.x86_64) GTEST_SKIP() << "not x86-64";
  ASSERT_NE(k.cpu.isa, Isa::kUnknown);
  if (k.source == "user") GTEST_SKIP() << "OPENBLAS_CORETYPE is set: " << k.note;
  if (k.below_cpu) GTEST_SKIP() << "this OpenBLAS has nothing better: " << k.note;
  EXPECT_EQ(FamilyIsa(k.family), k.cpu.isa) << k.note;
  // The backend says which kernels it runs.
  const std::unique_ptr<Backend> cpu = CreateBackend(BackendOptions{});
  EXPECT_EQ(cpu->Kernels(), "OpenBLAS " + k.family);
}

}  // namespace
}  // namespace mavg
