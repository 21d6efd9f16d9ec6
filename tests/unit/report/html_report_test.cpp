// The data of `mavg report html` (html_report.h) over a hand-made grid sweep: status, the metric
// and speedup tables through the reports' own code, the figures' choices.
#include "engine/report/html_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "tests/unit/report/fake_sweep.h"
#include "tests/unit/report/grid_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddGrid;
using testing::FakeSweep;

TEST(HtmlReport, TablesFiguresAndStatus) {
  FakeSweep s("g");
  AddGrid(s);
  const json d = HtmlReportData(s.GetStore(), "g", {});
  EXPECT_EQ(d["sweep"], "g");
  EXPECT_EQ(d["status"]["total"], 8);
  // Every run's code version is unknown here: its completed runs count as done.
  EXPECT_EQ(d["status"]["counts"], json::parse(R"([["done", 7], ["failed", 1]])"));
  ASSERT_EQ(d["status"]["problems"].size(), 1u);
  EXPECT_EQ(d["status"]["problems"][0]["axes"], "parallel.workers=2 parallel.average_every=5");
  // Metric tables laid out workers x averaging, through MetricTable's json: 2 rows.
  ASSERT_GE(d["tables"].size(), 2u);
  EXPECT_EQ(d["tables"][0]["metric"], "test_error");
  EXPECT_EQ(d["tables"][0]["header"],
            json::parse(R"(["parallel.workers \\ parallel.average_every", "1", "5"])"));
  EXPECT_EQ(d["tables"][0]["rows"].size(), 2u);
  // 2 workers, averaging 5: one replicate completed, the other failed.
  EXPECT_NE(d["tables"][0]["rows"][1][2].get<std::string>().find("(n=1)"), std::string::npos);
  // Speedup: one row per averaging interval and worker count, labelled columns.
  ASSERT_TRUE(d["speedup"].contains("rows")) << d["speedup"].dump();
  EXPECT_EQ(d["speedup"]["rows"].size(), 4u);
  EXPECT_NE(d["speedup"]["caption"].get<std::string>().find("projected: simulated workers"),
            std::string::npos);
  EXPECT_EQ(d["figures"]["x"], "parallel.workers");
  EXPECT_EQ(d["figures"]["series"], "parallel.average_every");
  EXPECT_EQ(d["figures"]["breakdown_where"], json::parse(R"({"parallel.average_every": "1"})"));
  EXPECT_EQ(d["runs"]["rows"].size(), 8u);
  // A metric asked for by name that no run has is an error, not an empty table.
  HtmlReportOptions o;
  o.metrics = {"wer"};
  EXPECT_THROW(HtmlReportData(s.GetStore(), "g", o), Error);
}

}  // namespace
}  // namespace mavg
