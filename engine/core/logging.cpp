#include "engine/core/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <memory>
#include <mutex>

#include "engine/core/files.h"

namespace mavg {
namespace {

std::string Pattern(int rank, int world_size) {
  if (world_size > 1) return fmt::format("%Y-%m-%d %H:%M:%S.%e %^%l%$ r{} %v", rank);
  return "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v";
}

// Appends to a descriptor opened without following links (files.h OpenNoFollow): spdlog's own
// file sink opens its path with fopen, which would write through a planted link.
class NoFollowFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit NoFollowFileSink(const std::string& path) : fd_(OpenNoFollow(path)) {}
  ~NoFollowFileSink() override { ::close(fd_); }
  NoFollowFileSink(const NoFollowFileSink&) = delete;
  NoFollowFileSink& operator=(const NoFollowFileSink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    const char* p = buf.data();
    size_t left = buf.size();
    while (left > 0) {  // a log line that cannot be written is dropped, never an error
      const ssize_t n = ::write(fd_, p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int fd_;  // owned
};

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
  auto sink = std::make_shared<NoFollowFileSink>(path);
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
