#pragma once
// `mavg` subcommands: each file adds one subcommand to the CLI11 app. A subcommand's callback
// runs the work and may throw mavg::Error; main() prints it as one line and exits non-zero.

#include <CLI/CLI.hpp>

namespace mavg::cli {

// Exit code a subcommand wants main() to return (0 unless set).
int& ExitCode();

void AddTrainCommand(CLI::App& app);
void AddDataCommand(CLI::App& app);
void AddExportCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddConfigCommand(CLI::App& app);
void AddModelCommand(CLI::App& app);
void AddSweepCommand(CLI::App& app);
void AddReportCommand(CLI::App& app);
void AddDecodeCommand(CLI::App& app);
void AddDevicesCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddForwardCommand(CLI::App& app);

}  // namespace mavg::cli
