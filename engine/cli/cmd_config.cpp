// mavg config reference | mavg config check CONFIG
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
  });
}

}  // namespace mavg::cli
