#pragma once
// What the report tables share: summaries over replicates, numbers to 4 significant digits,
// axis values in plan order, and one renderer for Markdown, CSV, LaTeX and JSON.

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"
#include "engine/report/sweep_data.h"

namespace mavg::report {

// How a report prints: Markdown, CSV, LaTeX or JSON (the options --format).
enum class Format { kMd, kCsv, kLatex, kJson };
inline constexpr EnumText<Format> kFormatTexts[] = {
    {Format::kMd, "md"}, {Format::kCsv, "csv"}, {Format::kLatex, "latex"}, {Format::kJson, "json"}};
MAVG_ENUM_TEXTS(Format, kFormatTexts)

// What a table cell shows of a cell's replicates (--agg).
enum class Aggregate { kMean, kMin, kMax };
inline constexpr EnumText<Aggregate> kAggregateTexts[] = {
    {Aggregate::kMean, "mean"}, {Aggregate::kMin, "min"}, {Aggregate::kMax, "max"}};
MAVG_ENUM_TEXTS(Aggregate, kAggregateTexts)

struct Stat {
  int n = 0;
  double mean = 0, std = 0, min = 0, max = 0;
  std::set<std::string> bad;  // statuses of runs without a value (failed, diverged, ...)
};

Stat Summarize(const std::vector<double>& values);
// 4 significant digits.
std::string Num(double x);
// A count (frames, epochs, workers) or a mean of counts: a whole number without decimals ("117",
// not "117.0"), anything else as Num.
std::string Count(double x);
// Whether the report value `name` counts something: a result or an epoch field of whole numbers
// (epochs, frames, world_size, wer_sub, ...) or the per-run mean of one (frames_per_epoch).
bool IsCount(const std::string& name);
// Whether a metric is a measured time or throughput of the run (epoch_s, wall_s, compute_s,
// measured_frames_per_s, ...): its replicates are checked for contention and disagreement
// (timing_checks.h) wherever a table averages them.
bool IsMeasuredTiming(const std::string& name);
// A value of `name` as the reports print it: Count for a count, Num for anything else.
std::string NumOf(const std::string& name, double x);
// A fraction as a percentage: "21 %", "3.2 %", "3 %" (LaTeX: "21 \%").
std::string Percent(double fraction, bool latex = false);
// "mean ± std" with the std at the mean's decimals ("mean" alone for n = 1, "" for n = 0). A
// count's replicates that agree print as the whole number they agree on.
std::string MeanStd(const Stat& s, bool latex, bool count = false);
// A table cell: the aggregate with n, `–` when empty, or the statuses of the runs without one.
std::string Cell(const Stat& s, Aggregate agg, bool latex, bool count = false);
double Mean(const std::vector<double>& values);  // NaN when empty
// "a, b, c" (with `sep` between).
std::string Join(const std::vector<std::string>& v, const char* sep = ", ");

// The values `axis` takes in `runs`, in order of first appearance.
std::vector<std::string> Ordered(const std::vector<const ReportRun*>& runs,
                                 const std::string& axis);
// Throws listing the sweep's axes when `axis` is not one of them.
void CheckAxis(const std::vector<ReportRun>& runs, const std::string& axis);

// Markdown, CSV or LaTeX (JSON: RenderJson). The first `text_cols` cells of a row are text
// (escaped for LaTeX); the others are numbers we formatted.
std::string Render(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, Format format,
                   size_t text_cols = 1);
// The same table as one JSON object {"caption", "header", "rows", "text_cols"}, cells as the
// Markdown table shows them: what `--format json` prints and the HTML report lays out.
std::string RenderJson(const std::string& caption, const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, size_t text_cols);
// RenderJson's object, for a table that adds keys of its own before printing it.
nlohmann::json TableJson(const std::string& caption, const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows, size_t text_cols);

}  // namespace mavg::report

MAVG_ENUM_FORMATTER(mavg::report::Format);
MAVG_ENUM_FORMATTER(mavg::report::Aggregate);
