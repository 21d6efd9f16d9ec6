// mavg: data-parallel DNN training by periodic model averaging, and the sweeps around it.
#include <cstdio>

#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/core/logging.h"

namespace mavg::cli {
int& ExitCode() {
  static int code = 0;
  return code;
}
}  // namespace mavg::cli

int main(int argc, char** argv) {
  CLI::App app{"mavg: data-parallel DNN training by periodic model averaging (Su & Chen 2015)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More logging (debug level, error locations)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
  app.parse_complete_callback([&] { mavg::InitLogging(quiet ? -1 : verbose); });
  mavg::cli::AddTrainCommand(app);
  mavg::cli::AddDataCommand(app);
  mavg::cli::AddExportCommand(app);
  mavg::cli::AddBenchCommand(app);
  mavg::cli::AddConfigCommand(app);
  mavg::cli::AddModelCommand(app);
  mavg::cli::AddSweepCommand(app);
  mavg::cli::AddReportCommand(app);
  mavg::cli::AddDecodeCommand(app);
  mavg::cli::AddDevicesCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mavg: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const mavg::Error& e) {
    if (verbose > 0 && !e.Location().empty()) {
      std::fprintf(stderr, "mavg: error: %s [%s]\n", e.what(), e.Location().c_str());
    } else {
      std::fprintf(stderr, "mavg: error: %s\n", e.what());
    }
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mavg: error: %s\n", e.what());
    return 1;
  }
  return mavg::cli::ExitCode();
}
