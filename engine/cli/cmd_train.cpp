// mavg train CONFIG [--set key=value]... [--out DIR] [--cache-dir DIR] [--dump-config] [--force]
#include <fmt/core.h>

#include <iostream>

#include "engine/cli/commands.h"
#include "engine/config/data_paths.h"
#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/progress.h"
#include "engine/core/run_state.h"
#include "engine/train/trainer.h"

namespace mavg::cli {

void AddTrainCommand(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> sets;
    std::string out;
    bool dump = false;
    bool force = false;
    bool no_progress = false;
    std::string resume;
    int until_epoch = 0;
    std::string cache_dir = "results/cache";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("train", "Train one model from a run config (YAML)");
  cmd->add_option("config", args->config, "Run config (YAML; see the README's reference)");
  cmd->add_option("--resume", args->resume,
                  "Continue the run in this directory from its checkpoint (its config.yaml)");
  cmd->add_option("--set", args->sets, "Override a key: --set schedule.lr=0.1 (repeatable)");
  cmd->add_option("--out", args->out, "Run directory (default: results/runs/adhoc/<run-id>)");
  cmd->add_flag("--dump-config", args->dump, "Print the resolved config (YAML) and exit");
  cmd->add_flag("--force", args->force, "Overwrite a run directory that holds a completed run");
  cmd->add_flag("--no-progress", args->no_progress, "Never draw the progress line");
  cmd->add_option("--until-epoch", args->until_epoch,
                  "Pause after this epoch (checkpointed, status preempted) when epochs remain; "
                  "--resume continues it")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cache-dir", args->cache_dir,
                  "Pretrained stacks shared between runs (model.init rbm; '' for none)")
      ->capture_default_str();
  cmd->callback([args] {
    MAVG_CHECK(args->config.empty() != args->resume.empty(),
               "give either a CONFIG or --resume RUN_DIR (which holds its config.yaml)");
    const std::string config_path =
        args->resume.empty() ? args->config : args->resume + "/config.yaml";
    RunConfig config = LoadConfigFile(config_path);
    for (const std::string& s : args->sets) ApplyOverride(config, s);
    if (args->dump) {
      std::cout << ToYaml(config);
      return;
    }
    const ResolvedRun run = ResolveRun(std::move(config), config_path, args->sets);
    TrainOptions options;
    options.resume = !args->resume.empty();
    if (options.resume) {
      // Only execution knobs (not part of the run id, e.g. device_options.threads) may change.
      MAVG_CHECK(run.run_id == RunId(LoadConfigFile(config_path)),
                 "--set cannot change a run being resumed (it would be another run; only keys "
                 "outside the run id, such as device_options.threads, may change)");
    }
    options.run_dir = options.resume      ? args->resume
                      : args->out.empty() ? "results/runs/adhoc/" + run.run_id
                                          : args->out;
    // Data that cannot be read refuses the run before its directory is made; a directory that
    // exists already (a sweep's, a resumed run's) records the failure as its runs do.
    if (!PathExists(options.run_dir)) CheckDataPaths(run.config);
    options.force = args->force;
    options.cache_dir = args->cache_dir;
    options.until_epoch = args->until_epoch;
    options.progress = !args->no_progress && Progress::StderrIsTerminal();
    const TrainOutcome outcome = Train(run, options);
    const RunResult& result = outcome.result;
    const std::optional<RunState> state = result.status;
    if (state == RunState::kDiverged) ExitCode() = kExitDiverged;
    if (state == RunState::kCollapsed) ExitCode() = kExitCollapsed;
    if (state == RunState::kPreempted) ExitCode() = kExitPreempted;
    if (outcome.rank != 0) return;  // rank 0 reports for everyone
    std::string line =
        fmt::format("{}: {}", options.run_dir, state ? ToString(*state) : std::string_view("?"));
    // A decoded speech task: the WER first, then the frame accuracies the network was trained on.
    if (result.wer) line += fmt::format(", test WER {:.2f}%", *result.wer);
    const char* frame = result.wer ? "frame accuracy" : "accuracy";
    if (result.test_acc) line += fmt::format(", test {} {:.2f}%", frame, 100.0 * *result.test_acc);
    if (result.cv_acc) line += fmt::format(", CV {} {:.2f}%", frame, 100.0 * *result.cv_acc);
    line += fmt::format(", {} epochs in {:.1f}s", result.epochs.value_or(0),
                        result.wall_s.value_or(0.0));
    std::cout << line << std::endl;
  });
}

}  // namespace mavg::cli
