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
  EXPECT_NE(d["speedup"]["caption"].get<std::string>().find("projected: within each run"),
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

// Figures never pool runs of different settings: an axis zipped with the series moves with it
// (table 6's optimizer and lr), and any other varying axis is held at its smallest value.
TEST(HtmlReport, FiguresHoldEveryOtherAxis) {
  FakeSweep s("z");
  int i = 0;
  for (const char* w : {"1", "4"}) {
    for (const auto& [opt, lr] : {std::pair{"sgd", "0.008"}, std::pair{"ngsgd", "0.32"}}) {
      for (const char* mb : {"256", "1024"}) {
        testing::FakeRun f = testing::Make({{"parallel.workers", w},
                                            {"optimizer.type", opt},
                                            {"schedule.lr", lr},
                                            {"optimizer.minibatch", mb}},
                                           0, std::stoi(w));
        f.results = {{"test_acc", 0.9 - 0.01 * i++}};
        f.epochs = {{1.0, 5, std::string(w) == "4" ? 2.0 : -1}};
        s.Add(f);
      }
    }
  }
  const json d = HtmlReportData(s.GetStore(), "z", {});
  EXPECT_EQ(d["figures"]["x"], "parallel.workers");
  // One line per minibatch (the tables' column axis); optimizer and lr, zipped, are held at a
  // pair that exists (NG-SGD with its 0.32), not each at its own smallest value.
  EXPECT_EQ(d["figures"]["series"], "optimizer.minibatch");
  EXPECT_EQ(d["figures"]["where"],
            json::parse(R"({"optimizer.type": "ngsgd", "schedule.lr": "0.32"})"));
  EXPECT_EQ(d["figures"]["breakdown_where"]["optimizer.minibatch"], "256");
  EXPECT_EQ(d["figures"]["baseline"], "1");
}

}  // namespace
}  // namespace mavg
