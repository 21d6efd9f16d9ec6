// mavg config reference | mavg config check CONFIG
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "engine/cli/commands.h"
#include "engine/config/schema.h"

namespace mavg::cli {

void AddConfigCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("config", "Config keys: reference table and checking");
  cmd->require_subcommand(1);
  CLI::App* ref = cmd->add_subcommand("reference", "Print every key with its default (Markdown)");
  ref->callback([] { std::cout << ConfigReferenceMarkdown(); });

  auto path = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  CLI::App* check = cmd->add_subcommand("check", "Load and validate a run config");
  check->add_option("config", *path, "Run config (YAML)")->required();
  check->add_option("--set", *sets, "Override a key (repeatable)");
  check->callback([path, sets] {
    RunConfig config = LoadConfigFile(*path);
    for (const std::string& s : *sets) ApplyOverride(config, s);
    const ResolvedRun run = ResolveRun(std::move(config), *path, *sets);
    std::cout << *path << ": ok, run id " << run.run_id << "\n";
    // What the id is made of, and what the model does not depend on.
    const IdentitySummary id = SummarizeIdentity(run.config);
    std::vector<std::string> never, unused;
    for (const auto& [key, rule] : id.left_out) (rule == "never" ? never : unused).push_back(key);
    std::cout << fmt::format(
        "run id: SHA-256 of the {} keys this config uses ({} others left out: unused here, or at "
        "the value runs had before the key existed); never in it, and never changing the "
        "model's bits: {}. The same model at any thread count (1 or more, in turn or at once), "
        "as MPI ranks or simulated workers; the bits do depend on the CPU kernel family "
        "(recorded as blas_kernels), the device and the build (docs/algorithms.md §1h).\n",
        id.in.size(), unused.size(), fmt::join(never, ", "));
  });
}

}  // namespace mavg::cli
