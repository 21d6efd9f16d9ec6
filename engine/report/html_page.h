#pragma once
// `mavg report html`: the sweep's page, index.html in a directory of its own. The data comes
// from HtmlReportData (html_report.h); analysis/report_html.py turns it into the page with
// Jinja2 and draws the figures with analysis/plot.py from the reports in that data. Python lays
// out, C++ computes: one place for every table's and figure's numbers (shared with `report
// table|speedup|runs|epochs`, which plot.py's command line draws from), and the page cannot
// disagree with either.
//
// The directory is made whole or not at all: everything is written into DIR.tmp-<pid> beside
// it and swapped in at the end, so a failed render leaves the previous page as it was. An
// existing DIR is replaced only when it is empty or a page mavg wrote (it holds .mavg-report).
// In it: index.html (no network needed to view it), assets/ (jQuery and DataTables, from
// Debian's libjs packages), figures/ (PNG + PDF), runs/<run-id>/ (each run's config and log),
// report.json (the data), runs.csv and runs.json (`report runs`).

#include <string>

#include "engine/report/html_report.h"
#include "engine/store/store.h"

namespace mavg {

struct HtmlPageOptions {
  HtmlReportOptions data;
  std::string out_dir;
  std::string python;        // the interpreter with Debian's jinja2 and matplotlib
  std::string analysis_dir;  // where report_html.py and plot.py are
  std::string reference;     // the paper's numbers for the speedup figure ("" or absent: none)
};

// Writes the page; returns the path of its index.html.
std::string WriteHtmlReport(Store& store, const std::string& sweep, const HtmlPageOptions& options);

}  // namespace mavg
