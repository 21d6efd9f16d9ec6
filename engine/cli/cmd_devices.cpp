// mavg devices [--json FILE]: the CPU (its vector ISA and the OpenBLAS kernels mavg runs on it),
// the CUDA devices this build sees (none in a CPU-only build or without a driver) and the cuBLAS
// a CUDA backend would load, one line each, and optionally as JSON.
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/backend/cpu/blas_kernels.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/cli/commands.h"
#include "engine/core/build_info.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg::cli {

void AddDevicesCommand(CLI::App& app) {
  auto json_path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "devices", "The CPU's ISA and BLAS kernels, and the CUDA devices this build sees");
  cmd->add_option("--json", *json_path, "Also write them to this JSON file");
  cmd->callback([json_path] {
    const BlasKernels& k = SelectBlasKernels();
    std::cout << fmt::format("cpu     {}  {}  OpenBLAS {} kernels: {}{}\n",
                             k.cpu.model_name.empty() ? k.cpu.vendor : k.cpu.model_name,
                             IsaName(k.cpu.isa), k.family, k.note,
                             k.error.empty() ? "" : "  [refused: mavg will not train]");
    const nlohmann::json cpu = {{"model_name", k.cpu.model_name},
                                {"vendor", k.cpu.vendor},
                                {"family", k.cpu.family},
                                {"model", k.cpu.model},
                                {"isa", IsaName(k.cpu.isa)},
                                {"avx512_bf16", k.cpu.avx512_bf16},
                                {"blas_library", k.library},
                                {"blas_kernels", k.family},
                                {"blas_kernels_isa", IsaName(FamilyIsa(k.family))},
                                {"openblas_choice", k.openblas_choice},
                                {"chosen_by", k.source},
                                {"below_cpu", k.below_cpu},
                                {"note", k.note},
                                {"error", k.error}};
    const std::vector<CudaDeviceInfo> devices = CudaDevices();
    nlohmann::json list = nlohmann::json::array();
    for (const CudaDeviceInfo& d : devices) {
      list.push_back(
          {{"index", d.index},
           {"name", d.name},
           {"memory_bytes", d.memory_bytes},
           {"compute_capability", fmt::format("{}.{}", d.compute_major, d.compute_minor)},
           {"multiprocessors", d.multiprocessors},
           {"pci_bus_id", d.pci_bus_id}});
      std::cout << fmt::format("cuda:{}  {}  {:.1f} GiB  compute {}.{}  {} SMs  {}\n", d.index,
                               d.name, static_cast<double>(d.memory_bytes) / (1 << 30),
                               d.compute_major, d.compute_minor, d.multiprocessors, d.pci_bus_id);
    }
    if (devices.empty()) {
      std::cout << (build_info::kWithCuda ? "no CUDA device visible\n"
                                          : "no CUDA device: this mavg was built without CUDA\n");
    }
    nlohmann::json cublas = nullptr;
    if (build_info::kWithCuda) {  // loads it: the one command that pays for that up front
      const CublasLibraryInfo c = ProbeCublas();
      cublas = {{"soname", c.soname}, {"file", c.file}, {"version", c.version}, {"error", c.error}};
      std::cout << (c.error.empty()
                        ? fmt::format("cublas  {} {}  {}\n", c.soname, c.version, c.file)
                        : fmt::format("cublas  {}  not loadable: {}\n", c.soname, c.error));
    }
    const nlohmann::json out = {{"cpu", cpu},
                                {"built_with_cuda", build_info::kWithCuda},
                                {"cublas", cublas},
                                {"count", devices.size()},
                                {"devices", list}};
    if (!json_path->empty()) WriteFileAtomic(*json_path, DumpJson(out, 2) + "\n");
  });
}

}  // namespace mavg::cli
