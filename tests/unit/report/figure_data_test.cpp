// What the figures are drawn from (analysis/plot.py lays them out): `report epochs` (one row
// per epoch), the metric table's unrounded cells in its json, and the reports `report html`
// puts in its data for the page's figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/report/html_report.h"
#include "engine/report/runs_table.h"
#include "engine/report/tables.h"
#include "tests/unit/report/fake_sweep.h"
#include "tests/unit/report/grid_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddGrid;
using testing::FakeSweep;

TEST(EpochsTable, OneRowPerEpochOfEachRun) {
  FakeSweep s("e");
  testing::FakeRun a = testing::Make({{"parallel.workers", "1"}});
  a.epochs = {{2.5, 4, -1}, {2.0, 3, -1, false}};
  s.Add(a);
  testing::FakeRun b = testing::Make({{"parallel.workers", "2"}}, 0, 2);
  b.epochs = {{1.5, 6, 2.5}};
  s.Add(b);
  s.Add(testing::Make({{"parallel.workers", "4"}}, 0, 4, "failed"));  // no epochs: no row
  const EpochsTable t = MakeEpochsTable("e", s.Load());
  EXPECT_EQ(t.axes, std::vector<std::string>{"parallel.workers"});
  ASSERT_EQ(t.rows.size(), 3u);
  ASSERT_GE(t.columns.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(t.columns.begin(), t.columns.begin() + 6),
            (std::vector<std::string>{"sweep", "run_id", "replicate", "status", "parallel.workers",
                                      "epoch"}));
  EXPECT_EQ(t.columns.back(), "train_s");
  const json rows = json::parse(RowsJson(t.columns, t.rows));
  EXPECT_EQ(rows[0]["run_id"], "run0000");
  EXPECT_EQ(rows[0]["parallel.workers"], "1");  // as the plan writes it
  EXPECT_EQ(rows[1]["epoch"], 2);
  EXPECT_EQ(rows[1]["cv_loss"], 2.0);
  EXPECT_EQ(rows[1]["accepted"], false);
  EXPECT_EQ(rows[1]["train_s"], 3.0);
  EXPECT_EQ(rows[0]["projected_wall_s"], nullptr);  // one worker: none
  EXPECT_EQ(rows[2]["status"], "completed");
  EXPECT_EQ(rows[2]["projected_wall_s"], 2.5);
  EXPECT_EQ(rows[2]["world_size"], 2);
  // Every field any epoch has, in the record's order (records/epoch_row.h).
  const auto at = [&](const std::string& c) {
    return std::find(t.columns.begin(), t.columns.end(), c) - t.columns.begin();
  };
  EXPECT_LT(at("accepted"), at("cv_loss"));
  EXPECT_LT(at("cv_loss"), at("projected_wall_s"));
  EXPECT_EQ(RowsCsv(t.columns, t.rows).substr(0, 53),
            "sweep,run_id,replicate,status,parallel.workers,epoch,");
}

// The json of `report table` has the cells' numbers unrounded beside the cells as shown.
TEST(MetricTable, JsonHasTheCellsUnrounded) {
  FakeSweep s("g");
  AddGrid(s);
  TableOptions o;
  o.rows = "parallel.workers";
  o.cols = "parallel.average_every";
  o.value = "test_acc";
  o.format = report::Format::kJson;
  const json t = json::parse(MetricTable("g", s.Load(), o));
  ASSERT_EQ(t["cells"].size(), 4u);
  // Runs 0 and 1: test_acc 0.9 and 0.89.
  EXPECT_EQ(t["cells"][0]["row"], json::parse(R"(["1"])"));
  EXPECT_EQ(t["cells"][0]["col"], "1");
  EXPECT_EQ(t["cells"][0]["n"], 2);
  EXPECT_DOUBLE_EQ(t["cells"][0]["mean"].get<double>(), 0.895);
  EXPECT_NEAR(t["cells"][0]["std"].get<double>(), 0.01 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(t["cells"][0]["min"].get<double>(), 0.89);
  // 2 workers, averaging 5: one completed (0.84), one failed.
  EXPECT_EQ(t["cells"][3]["n"], 1);
  EXPECT_DOUBLE_EQ(t["cells"][3]["mean"].get<double>(), 0.84);
  EXPECT_DOUBLE_EQ(t["cells"][3]["std"].get<double>(), 0.0);
  EXPECT_EQ(t["rows"][1][2], "0.8400 (n=1)");
  // Without columns a cell has no "col"; an empty cell has its n only.
  o.cols = "";
  o.where = {{"parallel.average_every", "5"}};
  const json one = json::parse(MetricTable("g", s.Load(), o));
  ASSERT_EQ(one["cells"].size(), 2u);
  EXPECT_FALSE(one["cells"][0].contains("col"));
}

// The page's figures come from the reports plot.py's command line runs, computed with the
// page's data: the same json as `report table|speedup|epochs` print.
TEST(HtmlReport, FigureDataIsTheReportsJson) {
  FakeSweep s("g");
  AddGrid(s);
  const std::vector<ReportRun> runs = s.Load();
  const json d = HtmlReportData(s.GetStore(), "g", {});
  const json& data = d["figures"]["data"];
  TableOptions t;
  t.rows = "parallel.workers";
  t.cols = "parallel.average_every";
  t.value = "test_error";
  t.format = report::Format::kJson;
  EXPECT_EQ(data["metric"], json::parse(MetricTable("g", runs, t)));
  SpeedupOptions sp;
  sp.format = report::Format::kJson;
  EXPECT_EQ(data["speedup"], json::parse(SpeedupTable("g", runs, sp)));
  // The breakdown holds the series at one value (breakdown_where).
  t.cols = "";
  t.value = "comm_s";
  t.where = {{"parallel.average_every", "1"}};
  EXPECT_EQ(data["breakdown"]["comm_s"], json::parse(MetricTable("g", runs, t)));
  for (const char* part : {"compute_s", "io_s"}) {
    EXPECT_TRUE(data["breakdown"][part].contains("cells")) << part;
  }
  EXPECT_FALSE(data["breakdown"].contains("wait_s"));  // no epoch here recorded it
  const EpochsTable e = MakeEpochsTable("g", runs);
  EXPECT_EQ(data["epochs"]["columns"], json(e.columns));
  EXPECT_EQ(data["epochs"]["axes"], json(e.axes));
  EXPECT_EQ(data["epochs"]["rows"].size(), 8u);
}

// A figure that cannot be drawn says why, and the rest of the page is still made.
TEST(HtmlReport, FigureDataSaysWhyNot) {
  FakeSweep s("nobase");
  for (const char* w : {"2", "4"}) {
    testing::FakeRun f = testing::Make({{"parallel.workers", w}}, 0, std::stoi(w));
    f.results = {{"test_acc", 0.9}};
    f.epochs = {{1.0, 5, 2.0}};
    s.Add(f);
  }
  const json d = HtmlReportData(s.GetStore(), "nobase", {});
  ASSERT_TRUE(d["figures"]["data"]["speedup"].contains("error"));
  EXPECT_NE(d["figures"]["data"]["speedup"]["error"].get<std::string>().find(
                "no completed run with parallel.workers=1"),
            std::string::npos);
  EXPECT_TRUE(d["figures"]["data"]["metric"].contains("cells"));
}

}  // namespace
}  // namespace mavg
