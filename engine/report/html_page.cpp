#include "engine/report/html_page.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/subprocess.h"
#include "engine/report/runs_table.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarker = ".mavg-report";

// The last non-empty line of a program's error output, for a one-line error.
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  const size_t start = text.find_last_of('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace

std::string WriteHtmlReport(Store& store, const std::string& sweep, const HtmlPageOptions& o) {
  std::string dir = o.out_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const fs::path out(dir);
  MAVG_CHECK(!dir.empty() && out.filename() != "." && out.filename() != "..",
             "--out '{}': name the report's own directory (e.g. results/report/{})", o.out_dir,
             sweep);
  if (fs::exists(out)) {
    MAVG_CHECK(fs::is_directory(out), "{}: exists and is not a directory", dir);
    MAVG_CHECK(fs::is_empty(out) || fs::exists(out / kMarker),
               "{}: exists and is not a report mavg wrote (no {} in it): choose another --out", dir,
               kMarker);
  }
  const std::string script = o.analysis_dir + "/report_html.py";
  MAVG_CHECK(PathExists(script),
             "{}: the page renderer is missing (set MAVG_ANALYSIS_DIR to the analysis/ folder of "
             "mavg's source tree)",
             script);
  // Everything that can fail before anything is written: the data first.
  const nlohmann::json data = HtmlReportData(store, sweep, o.data);
  const RunsTable runs = LoadRunsTable(store, sweep);

  if (!out.parent_path().empty()) MakeDirs(out.parent_path().string());
  const std::string tmp = fmt::format("{}.tmp-{}", dir, getpid());
  fs::remove_all(tmp);
  MakeDirs(tmp);
  try {
    WriteFileAtomic(tmp + "/report.json", DumpJson(data, 1) + "\n");
    WriteFileAtomic(tmp + "/runs.csv", RunsCsv(runs));
    WriteFileAtomic(tmp + "/runs.json", RunsJson(runs));
    WriteFileAtomic(tmp + "/" + kMarker, "written by mavg report html\n");
    std::vector<std::string> argv = {o.python, script, "--data", tmp + "/report.json",
                                     "--out",  tmp};
    if (!o.reference.empty()) argv.insert(argv.end(), {"--reference", o.reference});
    const CommandResult r = RunCommand(argv);
    for (const std::string& line : {r.out, r.err}) {
      if (!line.empty()) spdlog::debug("[report] renderer: {}", line);
    }
    MAVG_CHECK(r.exit_code == 0, "report html: {} failed (exit {}): {}", script, r.exit_code,
               LastLine(r.err).empty() ? std::string("no message") : LastLine(r.err));
    // Warnings of the renderer (a figure it could not draw, ...) are shown, not swallowed.
    if (!r.out.empty()) std::fputs(r.out.c_str(), stderr);
    MAVG_CHECK(PathExists(tmp + "/index.html"), "report html: {} wrote no index.html", script);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    throw;
  }
  // Swap the new page in: the old one is moved aside first, so a crash in between leaves one
  // of the two whole (and DIR.old-<pid> to delete).
  if (fs::exists(out)) {
    const std::string old = fmt::format("{}.old-{}", dir, getpid());
    fs::remove_all(old);
    fs::rename(out, old);
    fs::rename(tmp, out);
    fs::remove_all(old);
  } else {
    fs::rename(tmp, out);
  }
  return dir + "/index.html";
}

}  // namespace mavg
