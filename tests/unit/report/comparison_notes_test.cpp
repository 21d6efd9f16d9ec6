// What a comparison says beside its numbers: a speedup within the noise of its baseline's
// replicates, the frames each cell trained when a table compares averaging intervals or worker
// counts, and counts printed as the whole numbers they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/report/tables.h"
#include "tests/unit/report/fake_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddRunsThatDropFrames;
using testing::FakeRun;
using testing::FakeSweep;
using testing::Make;
using testing::ParseCsv;

// Two one-worker baselines 10 s and 12 s per epoch for the same 1000 frames: 18 % apart. Four
// MPI ranks measured at 2.75 s: efficiency 11 / 2.75 / 4 = 1.00; at 2.5 s: 1.10, closer to 1
// than the baselines are to each other (and a speedup of 4.4, above the 4 workers). Eight at
// 2 s: efficiency 0.69, further from 1 than that.
void AddNoisyBaseline(FakeSweep& s) {
  for (int rep : {0, 1}) {
    FakeRun b = Make({{"parallel.workers", "1"}}, rep);
    b.epochs = {{1.0, rep == 0 ? 10.0 : 12.0, -1}};
    b.results = {{"blas_kernels", "OpenBLAS Haswell"}};
    s.Add(b);
  }
  for (int n : {4, 8}) {
    FakeRun r = Make({{"parallel.workers", std::to_string(n)}}, 0, n);
    r.mode = "mpi";
    testing::Epoch e{1.0, n == 4 ? 2.5 : 2.0, -1};
    e.compute_mean_s = 2.0;  // each rank's own compute (projected within the run: N x 2 / epoch)
    r.epochs = {e};
    r.results = {{"blas_kernels", "OpenBLAS Haswell"}};
    s.Add(r);
  }
}

TEST(Speedup, EfficiencyWithinTheBaselinesNoiseIsNoted) {
  FakeSweep s("noise");
  AddNoisyBaseline(s);
  SpeedupOptions o;
  o.format = report::Format::kJson;
  const json j = json::parse(SpeedupTable("noise", s.Load(), o));
  const std::vector<std::string> header = j["header"];
  ASSERT_EQ(header.back(), "notes");
  ASSERT_EQ(j["rows"].size(), 3u);
  const size_t efficiency =
      std::find(header.begin(), header.end(), "measured efficiency") - header.begin();
  EXPECT_EQ(j["rows"][1][efficiency], "1.10") << j.dump();
  const std::string note = j["rows"][1].back();
  EXPECT_EQ(note,
            "measured speedup 4.40 is above the 4 workers per baseline worker: faster than "
            "possible per training frame, so the baseline's or this row's times are not "
            "comparable; measured efficiency 1.10 is within the baseline's noise (its 2 runs' "
            "seconds per training frame differ by 18 %, more than this efficiency's 10 % from 1)");
  EXPECT_EQ(j["rows"][0].back(), "");  // the baseline itself
  EXPECT_EQ(j["rows"][2].back(), "");  // 0.69: further from 1 than the noise
  EXPECT_EQ(j["noise"], json::parse(R"([[], ["measured"], []])"));
  EXPECT_EQ(j["devices"], json::parse(R"(["CPU"])"));
  EXPECT_NE(j["caption"].get<std::string>().find("no evidence of a superlinear speedup"),
            std::string::npos);
  // md and csv carry the same note in their last column.
  o.format = report::Format::kMd;
  EXPECT_NE(SpeedupTable("noise", s.Load(), o).find("| " + note + " |"), std::string::npos);
  o.format = report::Format::kCsv;
  const std::string csv = SpeedupTable("noise", s.Load(), o);
  EXPECT_NE(csv.find(",\"" + note + "\"\n"), std::string::npos) << csv;
}

// Baselines that agree leave nothing to note at a speedup of the worker count; above it, and
// above an efficiency of 1 beyond the baseline's noise, the row says so.
TEST(Speedup, NoNoteWhenTheBaselinesAgree) {
  for (const double t : {2.5, 2.0}) {  // efficiency 1.00, then 1.25
    FakeSweep s("quiet");
    for (int rep : {0, 1}) {
      FakeRun b = Make({{"parallel.workers", "1"}}, rep);
      b.epochs = {{1.0, 10.0, -1}};
      s.Add(b);
    }
    FakeRun r = Make({{"parallel.workers", "4"}}, 0, 4);
    r.mode = "mpi";
    testing::Epoch e{1.0, t, -1};
    e.compute_mean_s = 2.0;
    r.epochs = {e};
    s.Add(r);
    SpeedupOptions o;
    o.format = report::Format::kJson;
    const json j = json::parse(SpeedupTable("quiet", s.Load(), o));
    ASSERT_EQ(j["rows"].size(), 2u) << j.dump();
    EXPECT_EQ(j["noise"], json::parse(R"([[], []])"));
    const std::string note = j["rows"][1].back();
    if (t == 2.5) {
      EXPECT_EQ(note, "");
      continue;
    }
    EXPECT_NE(note.find("measured speedup 5.00 is above the 4 workers"), std::string::npos) << note;
    EXPECT_NE(note.find("measured efficiency 1.25 is above 1 beyond the baseline's noise"),
              std::string::npos)
        << note;
  }
}

// The issue's case: a 1-worker run reused from a sweep that ran beside other work (9,143 frames
// per second) beside two new ones (~106,000): the baseline's replicates disagree beyond their
// noise, and every table that averages their times says so, naming the run. A run whose epochs
// recorded contention is left out of the measured time where others are not.
TEST(Speedup, BaselineReplicatesThatDisagreeOrWereContendedAreFlagged) {
  for (const bool recorded : {false, true}) {
    FakeSweep s("reused");
    for (int rep : {0, 1, 2}) {
      FakeRun b = Make({{"parallel.workers", "1"}}, rep);
      testing::Epoch e{1.0, rep == 2 ? 10000.0 / 9143 : 10000.0 / 106000, -1};
      if (recorded) e.cpu_util = rep == 2 ? 0.3 : 0.98;
      b.epochs = {e};
      b.frames = 10000;
      b.results = {{"build", {{"cpu", "Xeon"}}}};
      s.Add(b);
    }
    FakeRun r = Make({{"parallel.workers", "2"}}, 0, 2);
    r.mode = "mpi";
    testing::Epoch e{1.0, 10000.0 / 200000, -1};
    e.compute_mean_s = 0.045;
    r.epochs = {e};
    r.frames = 10000;
    s.Add(r);
    const std::vector<ReportRun> runs = s.Load();
    SpeedupOptions o;
    o.format = report::Format::kJson;
    const json j = json::parse(SpeedupTable("reused", runs, o));
    const std::string note = j["rows"][1].back();
    TableOptions t;
    t.rows = "parallel.workers";
    t.value = "epoch_s";
    const std::string table = MetricTable("reused", runs, t);
    if (!recorded) {
      // Kept in the mean (nothing says why it was slow), but never silently.
      EXPECT_NE(note.find("the baseline's replicates differ in speed beyond their noise: 9143 "
                          "frames/s (run0002)"),
                std::string::npos)
          << note;
      EXPECT_NE(table.find("Warning: parallel.workers=1's replicates differ in speed beyond "
                           "their noise: 9143 frames/s (run0002)"),
                std::string::npos)
          << table;
    } else {
      EXPECT_NE(note.find("1 of the baseline's 3 runs had contended epochs (other work shared "
                          "its cores) and are left out of its time: run0002"),
                std::string::npos)
          << note;
      EXPECT_EQ(note.find("differ in speed"), std::string::npos) << note;
      // 106,000 frames/s against the row's 200,000 on 2 ranks: 1.89.
      const std::vector<std::string> header = j["header"];
      const size_t speedup =
          std::find(header.begin(), header.end(), "measured speedup") - header.begin();
      EXPECT_EQ(j["rows"][1][speedup], "1.89");
      EXPECT_NE(table.find("left out of its time: run0002"), std::string::npos) << table;
    }
  }
}

// Frames per epoch are counts: "310", not "310.0" (md and json; csv as it always printed them).
TEST(Speedup, FramesPrintAsWholeNumbers) {
  FakeSweep s("frames");
  AddRunsThatDropFrames(s);
  SpeedupOptions o;
  const std::string md = SpeedupTable("frames", s.Load(), o);
  EXPECT_NE(md.find("| 8 | 690 | 310 | simulated |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 1000 | 0 | 10.00 |"), std::string::npos) << md;
}

// Workers x averaging interval where averaging every 20 drops 14 % of the frames: each cell
// shows its frames per epoch, and a warning under the table names the cells that trained fewer.
void AddDroppingGrid(FakeSweep& s) {
  for (const char* w : {"1", "2"}) {
    for (const char* k : {"5", "20"}) {
      for (int rep : {0, 1}) {
        FakeRun f =
            Make({{"parallel.workers", w}, {"parallel.average_every", k}}, rep, std::stoi(w));
        f.results = {{"test_acc", 0.9}, {"epochs", 2}};
        f.epochs = {{1.0, 5, std::string(w) == "2" ? 3.0 : -1}};
        f.frames = std::string(w) == "2" && std::string(k) == "20" ? 860 : 1000;
        if (std::string(w) == "2" && std::string(k) == "5") f.frames = 990;  // within 3 %
        s.Add(f);
      }
    }
  }
}

TEST(MetricTable, FramesPerEpochBesideTheMetricAndAWarning) {
  FakeSweep s("drop");
  AddDroppingGrid(s);
  TableOptions o;
  o.rows = "parallel.workers";
  o.cols = "parallel.average_every";
  o.value = "test_acc";
  const std::string md = MetricTable("drop", s.Load(), o);
  EXPECT_NE(md.find("| 1 | 0.9000 ± 0.0000 (n=2) [1000 frames/epoch] | 0.9000 ± 0.0000 (n=2) "
                    "[1000 frames/epoch] |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | 0.9000 ± 0.0000 (n=2) [990 frames/epoch] | 0.9000 ± 0.0000 (n=2) "
                    "[860 frames/epoch] |"),
            std::string::npos)
      << md;
  const std::string warning =
      "Warning: frames trained per epoch differ by more than 3 % between cells: "
      "parallel.workers=2 parallel.average_every=20 trained 860 (14 % fewer), against 1000 in "
      "parallel.workers=1 parallel.average_every=5.";
  EXPECT_NE(md.find("\n\n" + warning), std::string::npos) << md;
  EXPECT_EQ(md.find("average_every=5 trained 990"), std::string::npos) << md;  // within 3 %
  // csv: a column; json: each cell's number, the notes under the table.
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(MetricTable("drop", s.Load(), o));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3].at("frames_per_epoch"), "860");
  EXPECT_EQ(rows[2].at("frames_per_epoch"), "990");
  o.format = report::Format::kJson;
  const json j = json::parse(MetricTable("drop", s.Load(), o));
  EXPECT_EQ(j["cells"][3]["frames_per_epoch"], 860.0);
  ASSERT_EQ(j["notes"].size(), 2u);
  EXPECT_EQ(j["notes"][1].get<std::string>().substr(0, warning.size()), warning);
  EXPECT_EQ(j["rows"][1][2], "0.9000 ± 0.0000 (n=2) [860 frames/epoch]");
  // How the cells' runs ran, for the figures: one worker, or simulated workers.
  EXPECT_EQ(j["cells"][0]["modes"], json::parse(R"(["single"])"));
  EXPECT_EQ(j["cells"][3]["modes"], json::parse(R"(["simulated"])"));
}

// Cells that trained the same frames say so once; an axis that does not change the frames
// trained shows none.
TEST(MetricTable, EqualFramesNotedOnce) {
  FakeSweep s("same");
  for (const char* w : {"1", "2"}) {
    for (const char* opt : {"sgd", "ngsgd"}) {
      FakeRun f = Make({{"parallel.workers", w}, {"optimizer.type", opt}}, 0, std::stoi(w));
      f.results = {{"test_acc", 0.9}};
      f.epochs = {{1.0, 5, std::string(w) == "2" ? 3.0 : -1}};
      s.Add(f);
    }
  }
  TableOptions o;
  o.rows = "parallel.workers";
  o.cols = "optimizer.type";
  o.value = "test_acc";
  const std::string md = MetricTable("same", s.Load(), o);
  EXPECT_NE(md.find("| 1 | 0.9000 (n=1) | 0.9000 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("\n\nFrames trained per epoch (all workers): 1000 in every cell.\n"),
            std::string::npos)
      << md;
  o.format = report::Format::kCsv;
  EXPECT_EQ(MetricTable("same", s.Load(), o).find("frames"), std::string::npos);
  o.rows = "optimizer.type";
  o.cols = "";
  o.where = {{"parallel.workers", "1"}};
  o.format = report::Format::kMd;
  EXPECT_EQ(MetricTable("same", s.Load(), o).find("frames"), std::string::npos);
}

// A count's cell prints the whole number its replicates agree on.
TEST(MetricTable, CountsPrintAsWholeNumbers) {
  FakeSweep s("drop");
  AddDroppingGrid(s);
  TableOptions o;
  o.rows = "parallel.workers";
  o.cols = "parallel.average_every";
  o.value = "epochs";
  const std::string md = MetricTable("drop", s.Load(), o);
  EXPECT_NE(md.find("| 1 | 2 ± 0 (n=2) [1000 frames/epoch] |"), std::string::npos) << md;
  o.value = "frames_per_epoch";
  o.agg = report::Aggregate::kMax;
  EXPECT_NE(MetricTable("drop", s.Load(), o).find("| 860 (n=2) [860 frames/epoch] |"),
            std::string::npos);
}

}  // namespace
}  // namespace mavg
