// mavg: data-parallel DNN training by periodic model averaging, and the sweeps around it.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "engine/backend/cpu/blas_kernels.h"
#include "engine/cli/commands.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/logging.h"
#include "engine/core/nearest.h"

namespace mavg::cli {
int& ExitCode() {
  static int code = 0;
  return code;
}
}  // namespace mavg::cli

namespace {

// std::cout's buffer: writes to file descriptor 1 with write(2) and keeps the first error's
// errno, so that a failed write is reported with its cause whenever it happened. Line-buffered
// on a terminal, else flushed when full (as stdio). Never destroyed: std::cout's final flush at
// exit (also after std::exit) still reaches it.
class StdoutBuffer final : public std::streambuf {
 public:
  StdoutBuffer() : line_buffered_(::isatty(STDOUT_FILENO) == 1) { setp(buf_, buf_ + sizeof buf_); }
  int Error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (Flush() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
      if (line_buffered_ && ch == '\n' && Flush() != 0) return traits_type::eof();
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize done = std::streambuf::xsputn(s, n);
    if (line_buffered_ && std::memchr(s, '\n', static_cast<size_t>(n)) != nullptr) Flush();
    return error_ != 0 ? 0 : done;
  }
  int sync() override { return Flush() == 0 ? 0 : -1; }

 private:
  int Flush() {
    const char* p = pbase();
    size_t left = static_cast<size_t>(pptr() - pbase());
    while (left > 0 && error_ == 0) {
      const ssize_t n = ::write(STDOUT_FILENO, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    setp(buf_, buf_ + sizeof buf_);  // written, or dropped after an error
    return error_ != 0 ? -1 : 0;
  }

  char buf_[1 << 16];
  bool line_buffered_;
  int error_ = 0;  // errno of the first failed write
};

// What a command printed must have reached standard output: a full disk, a closed or full
// stdout is an error, not a silent success. Returns the exit code (0: all written).
int CheckStandardOutput(StdoutBuffer& out) {
  std::cout.flush();
  if (out.Error() == 0) return 0;
  std::fprintf(stderr, "mavg: error: writing to standard output failed: %s\n",
               out.Error() == EBADF ? "standard output is closed" : std::strerror(out.Error()));
  return 1;
}

// After a parse error: the first word that should name a command and names none, as a message
// "unknown command 'mavg sweep rnu' (did you mean 'mavg sweep run'?)"; "" when the words name
// commands (the error is about something else). Words starting with '-' are options: the
// commands that group others take only flags.
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "mavg";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    const std::vector<CLI::App*> subs = current->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return "";  // a command of its own: the rest are its arguments
    CLI::App* next = nullptr;
    for (CLI::App* sub : subs) {
      if (sub->check_name(word)) next = sub;
    }
    if (next == nullptr) {
      std::vector<std::string> names;
      for (const CLI::App* sub : subs) names.push_back(sub->get_name());
      return fmt::format("unknown command '{} {}' (did you mean '{} {}'? see {} --help)", path,
                         word, path, mavg::Nearest(word, names), path);
    }
    current = next;
    path += " " + word;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // OpenBLAS's kernels are settled while this process has one thread and before any BLAS call
  // (engine/backend/cpu/blas_kernels.h); a CPU backend logs the choice when it is created.
  mavg::SelectBlasKernels();
  StdoutBuffer& stdout_buffer = *new StdoutBuffer;  // immortal (see StdoutBuffer)
  std::cout.rdbuf(&stdout_buffer);
  CLI::App app{"mavg: data-parallel DNN training by periodic model averaging (Su & Chen 2015)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More logging (debug level, error locations)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
  app.parse_complete_callback([&] { mavg::InitLogging(quiet ? -1 : verbose); });
  // What a run records as its build: a long experiment checks it before each part.
  namespace bi = mavg::build_info;
  app.set_version_flag(
      "--version",
      fmt::format("mavg {}\ncode_version {}\npretrain_code_version {}\nbuild {} ({}{})",
                  bi::kGitCommit, bi::kCodeVersion, bi::kPretrainCodeVersion, bi::kBuildType,
                  bi::kCompiler, bi::kWithCuda ? ", with CUDA" : ""),
      "The build: its commit, the code version its runs record, compiler");
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
  mavg::cli::AddRunCommand(app);
  mavg::cli::AddForwardCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = UnknownCommand(app, argc, argv);
    if (!unknown.empty()) {
      std::fprintf(stderr, "mavg: error: %s\n", unknown.c_str());
    } else {
      std::fprintf(stderr, "mavg: error: %s (see --help)\n", e.what());
    }
    return 2;
  } catch (const mavg::Error& e) {
    if (verbose > 0 && !e.Location().empty()) {
      std::fprintf(stderr, "mavg: error: %s [%s]\n", e.what(), e.Location().c_str());
    } else {
      std::fprintf(stderr, "mavg: error: %s\n", e.what());
    }
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mavg: error: %s\n", mavg::ErrorText(e.what()).c_str());
    return 1;
  }
  const int output = CheckStandardOutput(stdout_buffer);
  return output != 0 ? output : mavg::cli::ExitCode();
}
