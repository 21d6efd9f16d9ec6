#include "engine/report/render.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <variant>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"

namespace mavg::report {

Stat Summarize(const std::vector<double>& v) {
  Stat s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  for (double x : v) s.mean += x / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
  }
  return s;
}

std::string Num(double x) {
  if (x == 0 || !std::isfinite(x)) return fmt::format("{}", x);
  const int digits = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(x)))), 0, 6);
  return fmt::format("{:.{}f}", x, digits);
}

std::string Count(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15) {
    return fmt::format("{:.0f}", x);
  }
  return Num(x);
}

namespace {

// Whether a record's field holds whole numbers.
template <class R>
bool WholeField(const records::Field<R>* f) {
  return f != nullptr && (std::holds_alternative<int64_t R::*>(f->member) ||
                          std::holds_alternative<std::optional<int64_t> R::*>(f->member));
}

}  // namespace

bool IsCount(const std::string& name) {
  if (WholeField(records::FindField(kRunResultFields, name))) return true;
  for (const records::Field<EpochRow>& f : kEpochFields) {
    if (f.report_mean == name) return WholeField(&f);
  }
  return false;
}

bool IsMeasuredTiming(const std::string& name) {
  if (name == kEpochSecondsMean) return true;
  if (const auto* f = records::FindField(kRunResultFields, name)) {
    return f->timing == records::Timing::kMeasured;
  }
  for (const records::Field<EpochRow>& f : kEpochFields) {
    if (f.report_mean == name) return f.timing == records::Timing::kMeasured;
  }
  return false;
}

std::string NumOf(const std::string& name, double x) { return IsCount(name) ? Count(x) : Num(x); }

std::string Percent(double fraction, bool latex) {
  const double p = 100.0 * fraction;
  std::string text = fmt::format("{:.{}f}", p, std::fabs(p) >= 10 ? 0 : 1);
  if (text.ends_with(".0")) text.resize(text.size() - 2);  // "3 %", not "3.0 %"
  return text + (latex ? " \\%" : " %");
}

std::string MeanStd(const Stat& s, bool latex, bool count) {
  if (s.n == 0) return "";
  // A count's mean is a count only where the replicates agree.
  const std::string mean = count && s.min == s.max ? Count(s.mean) : Num(s.mean);
  if (s.n == 1) return mean;
  // Standard deviation with the mean's decimals.
  const size_t dot = mean.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mean.size() - dot - 1);
  return fmt::format("{} {} {:.{}f}", mean, latex ? "$\\pm$" : "±", s.std, decimals);
}

std::string Cell(const Stat& s, Aggregate agg, bool latex, bool count) {
  if (s.n == 0) {
    if (s.bad.empty()) return latex ? "--" : "–";
    std::string b;
    for (const auto& x : s.bad) b += (b.empty() ? "" : "/") + x;
    return b;
  }
  const auto num = [count](double x) { return count ? Count(x) : Num(x); };
  if (agg == Aggregate::kMin) return fmt::format("{} (n={})", num(s.min), s.n);
  if (agg == Aggregate::kMax) return fmt::format("{} (n={})", num(s.max), s.n);
  return fmt::format("{} (n={})", MeanStd(s, latex, count), s.n);
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
}

std::vector<std::string> Ordered(const std::vector<const ReportRun*>& runs,
                                 const std::string& axis) {
  std::vector<std::string> out;
  for (const ReportRun* r : runs) {
    const std::string* v = r->Axis(axis);
    if (v && std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  return out;
}

void CheckAxis(const std::vector<ReportRun>& runs, const std::string& axis) {
  if (runs.empty() || runs[0].Axis(axis) != nullptr) return;
  std::string axes;
  for (const auto& [k, v] : runs[0].axes) axes += (axes.empty() ? "" : ", ") + k;
  MAVG_FAIL("'{}' is not an axis of this sweep (axes: {})", axis, axes);
}

std::string Render(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, Format format,
                   size_t text_cols) {
  MAVG_CHECK(format != Format::kJson, "Render: JSON tables are RenderJson's");
  std::string out;
  if (format == Format::kCsv) {
    auto csv = [](const std::string& s) {
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    };
    for (size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + csv(header[i]);
    out += "\n";
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv(r[i]);
      out += "\n";
    }
  } else if (format == Format::kLatex) {
    const size_t text = std::min(std::max<size_t>(text_cols, 1), header.size());
    out += "\\begin{tabular}{" + std::string(text, 'l') + std::string(header.size() - text, 'r') +
           "}\n\\hline\n";
    auto esc = [](std::string s) {
      std::string o;
      for (char c : s)
        o += (c == '_' || c == '%' || c == '&') ? std::string("\\") + c : std::string(1, c);
      return o;
    };
    for (size_t i = 0; i < header.size(); ++i) out += (i ? " & " : "") + esc(header[i]);
    out += " \\\\\n\\hline\n";
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) {
        out += (i ? " & " : "") + (i < text ? esc(r[i]) : r[i]);
      }
      out += " \\\\\n";
    }
    out += "\\hline\n\\end{tabular}\n";
  } else {
    for (const auto& h : header) out += "| " + h + " ";
    out += "|\n";
    for (size_t i = 0; i < header.size(); ++i)
      out += i < std::max<size_t>(text_cols, 1) ? "|---" : "|---:";
    out += "|\n";
    for (const auto& r : rows) {
      for (const auto& c : r) out += "| " + c + " ";
      out += "|\n";
    }
  }
  return out;
}

nlohmann::json TableJson(const std::string& caption, const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows, size_t text_cols) {
  return {{"caption", caption}, {"header", header}, {"rows", rows}, {"text_cols", text_cols}};
}

std::string RenderJson(const std::string& caption, const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, size_t text_cols) {
  return DumpJson(TableJson(caption, header, rows, text_cols), 1) + "\n";
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace mavg::report
