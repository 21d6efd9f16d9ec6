#include "engine/core/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>

namespace mavg {
namespace {

std::string Pattern(int rank, int world_size) {
  if (world_size > 1) return fmt::format("%Y-%m-%d %H:%M:%S.%e %^%l%$ r{} %v", rank);
  return "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v";
}

int g_rank = 0;
int g_world_size = 1;
int g_verbosity = 0;

}  // namespace

void SetLogRank(int rank, int world_size) { InitLogging(g_verbosity, rank, world_size); }

void InitLogging(int verbosity, int rank, int world_size) {
  g_verbosity = verbosity;
  g_rank = rank;
  g_world_size = world_size;
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("mavg", console);
  logger->set_pattern(Pattern(rank, world_size));
  spdlog::level::level_enum level = verbosity > 0   ? spdlog::level::debug
                                    : verbosity < 0 ? spdlog::level::warn
                                    : rank == 0     ? spdlog::level::info
                                                    : spdlog::level::warn;
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void AddLogFile(const std::string& path) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
  sink->set_pattern(Pattern(g_rank, g_world_size));
  spdlog::default_logger()->sinks().push_back(sink);
}

void RemoveLogFiles() {
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(sinks.begin() + (sinks.empty() ? 0 : 1), sinks.end());
}

void LogErrorToFiles(const std::string& message) {
  auto& sinks = spdlog::default_logger()->sinks();
  if (sinks.size() <= 1) return;
  spdlog::logger files("mavg-files", sinks.begin() + 1, sinks.end());
  files.error(message);
  files.flush();
}

}  // namespace mavg
