// Reports over a hand-made sweep: run directories written here, ingested by the store, read
// back by LoadSweepRuns, so the numbers go through the same path as a real sweep's. Checks
// time to target (including never reached), rows per combination of the other axes, and the
// two-link model column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/report/paper.h"
#include "engine/report/perf_model.h"
#include "engine/report/tables.h"
#include "engine/report/time_to_target.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"
#include "tests/unit/report/fake_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddRunsThatDropFrames;
using testing::Epoch;
using testing::FakeRun;
using testing::FakeSweep;
using testing::Make;
using testing::ParseCsv;
using Axes = testing::Axes;

// Baseline: 2 replicates of one worker, final CV losses 1.0 and 1.2: the target is 1.1.
// 4 simulated workers: both reach it (epoch 2 at 3 + 3 s; epoch 3 at 3 x 4 s, because epoch 2,
// below the target, was rejected). 8 workers: one completed run that never gets there and
// one that diverged.
void AddTimeToTargetRuns(FakeSweep& s) {
  auto w = [](int n) {
    return std::vector<std::pair<std::string, std::string>>{
        {"parallel.workers", std::to_string(n)}};
  };
  FakeRun b0 = Make(w(1), 0);
  b0.epochs = {{2.0, 9, -1}, {1.5, 9, -1}, {1.0, 9, -1}};
  FakeRun b1 = Make(w(1), 1);
  b1.epochs = {{2.1, 9, -1}, {1.6, 9, -1}, {1.2, 9, -1}};
  FakeRun r0 = Make(w(4), 0, 4, "completed");
  r0.epochs = {{1.3, 19, 3}, {1.05, 19, 3}, {0.9, 19, 3}};
  FakeRun r1 = Make(w(4), 1, 4, "completed");
  r1.epochs = {{1.2, 19, 4}, {1.0, 19, 4, false}, {1.08, 19, 4}};
  FakeRun n0 = Make(w(8), 0, 8, "completed");
  n0.epochs = {{1.5, 10, 2}, {1.4, 10, 2}};
  FakeRun n1 = Make(w(8), 1, 8, "diverged");
  n1.epochs = {{1.6, 10, 2}};
  for (const FakeRun& f : {b0, b1, r0, r1, n0, n1}) s.Add(f);
}

TEST(TimeToTarget, ClosedForms) {
  FakeSweep s("ttt");
  AddTimeToTargetRuns(s);
  const std::vector<ReportRun> runs = s.Load();
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_DOUBLE_EQ(runs[0].values.at("final_cv_loss"), 1.0);
  // The last accepted epoch, not the last one.
  EXPECT_DOUBLE_EQ(runs[3].values.at("final_cv_loss"), 1.08);
  const Baselines b(runs, "parallel.workers", "1");
  ASSERT_TRUE(b.Target(runs[2]).has_value());
  EXPECT_NEAR(*b.Target(runs[2]), 1.1, 1e-12);
  EXPECT_NEAR(*TimeToTarget(runs[0], 1.1), 27.0, 1e-12);  // measured: wall_s - cv_s
  EXPECT_FALSE(TimeToTarget(runs[1], 1.1).has_value());
  EXPECT_NEAR(*TimeToTarget(runs[2], 1.1), 6.0, 1e-12);  // projected, not the 19 s measured
  EXPECT_NEAR(*TimeToTarget(runs[3], 1.1), 12.0, 1e-12);
  EXPECT_FALSE(TimeToTarget(runs[4], 1.1).has_value());
  // A run whose final loss is the target reaches it at that epoch despite rounding.
  EXPECT_NEAR(*TimeToTarget(runs[0], 1.0), 27.0, 1e-12);
}

TEST(TimeToTarget, SpeedupColumns) {
  FakeSweep s("ttt");
  AddTimeToTargetRuns(s);
  const std::vector<ReportRun> runs = s.Load();
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(SpeedupTable("ttt", runs, o));
  ASSERT_EQ(rows.size(), 3u);
  const std::string t = "time to baseline CV loss s", sd = "time to baseline CV loss std";
  EXPECT_EQ(rows[0].at("parallel.workers"), "1");
  EXPECT_EQ(rows[0].at("target CV loss"), "1.100");
  EXPECT_DOUBLE_EQ(std::stod(rows[0].at(t)), 27.0);
  EXPECT_EQ(rows[0].at(sd), "");
  EXPECT_EQ(rows[0].at("reached target"), "1");
  EXPECT_EQ(rows[0].at("runs"), "2");
  EXPECT_DOUBLE_EQ(std::stod(rows[1].at(t)), 9.0);
  EXPECT_NEAR(std::stod(rows[1].at(sd)), std::sqrt(18.0), 1e-9);
  EXPECT_EQ(rows[1].at("reached target"), "2");
  // Never reached: blank, not 0; the diverged run counts as a run that did not reach it.
  EXPECT_EQ(rows[2].at(t), "");
  EXPECT_EQ(rows[2].at("reached target"), "0");
  EXPECT_EQ(rows[2].at("runs"), "2");
  // Projected within each run, which needs the workers' compute times: these runs recorded
  // none, so there is no projected speedup (never one against the baseline's time instead),
  // and the row says why.
  EXPECT_EQ(rows[1].at("projected speedup"), "–");
  EXPECT_NE(rows[1].at("notes").find("recorded no workers' compute times"), std::string::npos)
      << rows[1].at("notes");

  o.format = report::Format::kMd;
  const std::string md = SpeedupTable("ttt", runs, o);
  EXPECT_NE(md.find("| 27.00 | 1 of 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 9.000 ± 4.243 | 2 of 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("|  | 0 of 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("time to the baseline's CV loss"), std::string::npos) << md;
}

TEST(TimeToTarget, MetricTable) {
  FakeSweep s("ttt");
  AddTimeToTargetRuns(s);
  const std::vector<ReportRun> runs = s.Load();
  TableOptions o;
  o.rows = "parallel.workers";
  o.value = kTimeToTarget;
  const std::string md = MetricTable("ttt", runs, o);
  EXPECT_NE(md.find("| 27.00 (1 of 2 reached) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 9.000 ± 4.243 (2 of 2 reached) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| (0 of 2 reached) |"), std::string::npos) << md;
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(MetricTable("ttt", runs, o));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].at("time_to_target_mean"), "");
  EXPECT_EQ(rows[2].at("n"), "0");
  EXPECT_EQ(rows[2].at("runs"), "2");
  o.baseline = "2";
  EXPECT_THROW(MetricTable("ttt", runs, o), Error);
}

// 1 worker vs 4 workers x each algorithm (the baseline is only run with `average`), and an
// optimizer axis on which the baselines vary: each optimizer gets its own baseline.
TEST(Speedup, RowsPerCombinationOfOtherAxes) {
  FakeSweep s("algos");
  auto axes = [](int n, const std::string& alg, const std::string& opt) {
    return std::vector<std::pair<std::string, std::string>>{{"parallel.workers", std::to_string(n)},
                                                            {"parallel.algorithm", alg},
                                                            {"optimizer.type", opt}};
  };
  // The 4-worker runs are MPI ranks: measured times, compared per frame with the baseline's.
  for (const std::string opt : {"sgd", "ngsgd"}) {
    const double base = opt == "sgd" ? 8.0 : 16.0;
    FakeRun b = Make(axes(1, "average", opt));
    b.epochs = {{1.0, base, -1}};
    s.Add(b);
    for (const std::string alg : {"average", "bmuf"}) {
      FakeRun r = Make(axes(4, alg, opt), 0, 4, "completed");
      r.mode = "mpi";
      Epoch e{alg == "bmuf" ? 0.9 : 1.1, alg == "bmuf" ? 2.0 : 4.0, -1};
      e.compute_mean_s = 1.5;
      r.epochs = {e};
      s.Add(r);
    }
  }
  const std::vector<ReportRun> runs = s.Load();
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(SpeedupTable("algos", runs, o));
  ASSERT_EQ(rows.size(), 6u);
  // Columns for the other axes, rows in plan order of their combinations.
  EXPECT_EQ(rows[0].at("parallel.algorithm"), "average");
  EXPECT_EQ(rows[0].at("optimizer.type"), "sgd");
  EXPECT_EQ(rows[0].at("parallel.workers"), "1");
  EXPECT_EQ(rows[1].at("parallel.workers"), "4");
  EXPECT_EQ(rows[2].at("parallel.algorithm"), "bmuf");
  EXPECT_EQ(rows[2].at("parallel.workers"), "4");
  EXPECT_EQ(rows[1].at("measured speedup"), "2.00");  // 8 / 4
  EXPECT_EQ(rows[2].at("measured speedup"), "4.00");  // 8 / 2: bmuf against average's 1 worker
  EXPECT_EQ(rows[2].at("measured efficiency"), "1.00");
  EXPECT_EQ(rows[2].at("notes"), "");
  EXPECT_EQ(rows[3].at("optimizer.type"), "ngsgd");
  EXPECT_EQ(rows[4].at("measured speedup"), "4.00");  // 16 / 4
  EXPECT_EQ(rows[5].at("measured speedup"), "8.00");  // 16 / 2: twice the 4 workers, flagged
  EXPECT_NE(rows[5].at("notes").find("measured speedup 8.00 is above the 4 workers"),
            std::string::npos)
      << rows[5].at("notes");
  // Time to target per row: average at 4 workers (1.1) never reaches 1.0; bmuf (0.9) does.
  EXPECT_EQ(rows[1].at("time to baseline CV loss s"), "");
  EXPECT_DOUBLE_EQ(std::stod(rows[2].at("time to baseline CV loss s")), 2.0);
  // --where still narrows the table; the baseline is found outside it.
  o.where = {{"parallel.algorithm", "bmuf"}};
  const auto bmuf = ParseCsv(SpeedupTable("algos", runs, o));
  ASSERT_EQ(bmuf.size(), 2u);
  EXPECT_EQ(bmuf[0].at("measured speedup"), "4.00");
  EXPECT_EQ(bmuf[0].count("parallel.algorithm"), 0u);  // it no longer varies
}

// Speedup compares equal work: 8 workers that train 690 of 1000 frames in 1 s are not 10x
// faster than one worker's 10 s for all 1000, but 6.9x; the frames not trained stay visible
// (the runs: testing::AddRunsThatDropFrames).

TEST(Speedup, ComparesTimePerTrainingFrame) {
  FakeSweep s("frames");
  AddRunsThatDropFrames(s, /*mpi=*/true);
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(SpeedupTable("frames", s.Load(), o));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("frames/epoch"), "690");  // a count prints as a whole number
  EXPECT_EQ(rows[1].at("frames dropped/epoch"), "310");
  EXPECT_EQ(rows[0].at("frames dropped/epoch"), "0");
  EXPECT_EQ(rows[1].at("measured epoch s"), "1.000");
  EXPECT_EQ(rows[1].at("measured speedup"), fmt::format("{:.2f}", 10.0 / 1000 / (1.0 / 690)));
  EXPECT_EQ(rows[1].at("measured efficiency"), fmt::format("{:.2f}", 6.9 / 8));
  // Within the run: 8 workers x 1 s of compute each over its 1 s epoch.
  EXPECT_EQ(rows[1].at("projected speedup"), "8.00");
}

// One definition per kind: simulated workers have no measured speedup, and their projected
// one comes from within each run, never from the baseline's time (the same runs gave 5.95x
// against the baseline and 1.68x within the run in `report paper` and `report speedup`).
TEST(Speedup, SimulatedWorkersAreProjectedWithinTheRunOnly) {
  FakeSweep s("sim");
  AddRunsThatDropFrames(s);
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  const auto rows = ParseCsv(SpeedupTable("sim", s.Load(), o));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("measured epoch s"), "simulated");
  EXPECT_EQ(rows[1].at("measured speedup"), "–");
  EXPECT_EQ(rows[1].at("projected speedup"), "8.00");  // 8 x 1 s / 1 s, not 10 / 1 x 690/1000
}

// The kernels a run's timings came from: result.json's blas_kernels, or for older runs the
// family named in the build's device string.
TEST(Kernels, FromTheDeviceString) {
  EXPECT_EQ(KernelsFromDevice("cpu (OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY "
                              "USE_OPENMP Prescott MAX_THREADS=64; 2 threads)"),
            "OpenBLAS Prescott");
  EXPECT_EQ(KernelsFromDevice("cpu (OpenBLAS 0.3.26 DYNAMIC_ARCH Cooperlake MAX_THREADS=128; 1 "
                              "threads)"),
            "OpenBLAS Cooperlake");
  EXPECT_EQ(KernelsFromDevice("cuda:0 (NVIDIA H200, 139.8 GiB, compute 9.0; cuBLAS 130000; "
                              "tf32 off)"),
            "cuBLAS FP32");
  EXPECT_EQ(KernelsFromDevice("cuda:1 (X; cuBLAS 1; tf32 on)"), "cuBLAS TF32");
  EXPECT_EQ(KernelsFromDevice("cpu (reference BLAS)"), "");
  EXPECT_EQ(KernelsFromDevice(""), "");
}

// Timings from runs on different kernels are not compared unknowingly: report speedup and
// report paper say so, naming each family with its runs; one family (or an unknown one) says
// nothing. Older runs are read off their device string.
TEST(Kernels, MixedKernelsAreNamedInTimingTables) {
  FakeSweep s("mixed");
  FakeRun b = Make({{"parallel.workers", "1"}});
  b.epochs = {{1.0, 10.0, -1}};
  b.results = {{"blas_kernels", "OpenBLAS Prescott"}};
  s.Add(b);
  FakeRun r = Make({{"parallel.workers", "8"}}, 0, 8);
  r.epochs = {{1.1, 0, 1.0}};
  r.results = {{"build",
                {{"device",
                  "cpu (OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP Cooperlake "
                  "MAX_THREADS=64; 1 threads)"}}}};
  s.Add(r);
  const std::vector<ReportRun> runs = s.Load();
  EXPECT_EQ(runs[1].texts.at("blas_kernels"), "OpenBLAS Cooperlake");
  SpeedupOptions o;
  const std::string md = SpeedupTable("mixed", runs, o);
  EXPECT_NE(md.find("more than one kernel family (OpenBLAS Cooperlake: 1 run; OpenBLAS "
                    "Prescott: 1 run)"),
            std::string::npos)
      << md;
  testing::TempDir dir;
  WriteFileAtomic(dir.File("ref.yaml"), "timing: {gpus: [1, 8], speedup: [1.0, 4.99]}\n");
  PaperOptions p;
  p.reference = dir.File("ref.yaml");
  p.metric = "final_cv_loss";
  EXPECT_NE(PaperComparison("mixed", runs, p).find("more than one kernel family"),
            std::string::npos);

  FakeSweep same("same");
  b.results = {{"blas_kernels", "OpenBLAS Zen"}};
  r.results = {{"blas_kernels", "OpenBLAS Zen"}};
  same.Add(b);
  same.Add(r);
  EXPECT_EQ(SpeedupTable("same", same.Load(), o).find("kernel family"), std::string::npos);
}

// report paper shows the same per-frame speedups as report speedup (it showed 10 s / 1 s =
// 10.00 for 8 workers that trained 690 of the 1000 frames): measured across real processes,
// projected within each run; simulated workers have no measured one.
TEST(PaperComparison, SpeedupPerTrainingFrame) {
  FakeSweep s("paperframes");
  AddRunsThatDropFrames(s, /*mpi=*/true);
  testing::TempDir dir;
  WriteFileAtomic(dir.File("ref.yaml"),
                  "table1_wer_vs_gpus: {gpus: [1, 8], h500_swb: [14.7, 15.1]}\n"
                  "timing: {gpus: [1, 8], speedup: [1.0, 4.99]}\n");
  PaperOptions o;
  o.reference = dir.File("ref.yaml");
  o.metric = "final_cv_loss";
  const std::string md = PaperComparison("paperframes", s.Load(), o);
  EXPECT_NE(md.find("| 8 | 1.10 | 6.90 | 8.00 | 15.1 | 4.99 |"), std::string::npos) << md;
  EXPECT_NE(md.find("per training frame"), std::string::npos) << md;
  FakeSweep sim("papersim");
  AddRunsThatDropFrames(sim);
  const std::string simulated = PaperComparison("papersim", sim.Load(), o);
  EXPECT_NE(simulated.find("| 8 | 1.10 | simulated | 8.00 | 15.1 | 4.99 |"), std::string::npos)
      << simulated;
}

// report table with several row axes; an axis zipped with a row axis (lr_scaling follows the
// algorithm) may vary across the table, but never inside a cell.
TEST(MetricTable, SeveralRowAxesAndCellsThatNeverMix) {
  FakeSweep s("rows");
  auto axes = [](int n, const std::string& alg) {
    return Axes{{"parallel.workers", std::to_string(n)},
                {"parallel.algorithm", alg},
                {"parallel.lr_scaling", alg == "bmuf" ? "none" : "linear"}};
  };
  FakeRun b = Make(axes(1, "average"));
  b.epochs = {{1.0, 8, -1}};
  s.Add(b);
  for (const std::string alg : {"average", "bmuf"}) {
    for (int rep : {0, 1}) {
      FakeRun r = Make(axes(4, alg), rep, 4);
      r.epochs = {{alg == "bmuf" ? 0.9 + 0.1 * rep : 1.1, 0, 2.0}};
      s.Add(r);
    }
  }
  const std::vector<ReportRun> runs = s.Load();
  TableOptions o;
  o.rows = "parallel.workers, parallel.algorithm";
  o.value = "final_cv_loss";
  const std::string md = MetricTable("rows", runs, o);
  EXPECT_NE(md.find("| parallel.workers | parallel.algorithm | final_cv_loss |\n|---|---|---:|"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1 | average | 1.000 (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4 | bmuf | 0.9500 ± 0.0707 (n=2) |"), std::string::npos) << md;
  o.format = report::Format::kCsv;
  EXPECT_EQ(MetricTable("rows", runs, o).substr(0, 75),
            "parallel.workers,parallel.algorithm,final_cv_loss_mean,final_cv_loss_std,n\n");
  o.rows = "parallel.workers";
  try {
    MetricTable("rows", runs, o);
    FAIL() << "mixed cell accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("axis parallel.algorithm varies (average, bmuf) within "
                                         "the cell parallel.workers=4"),
              std::string::npos)
        << e.what();
  }
}

// The model column with --intra/--inter: a two-level run's group combines on the intra link,
// its global ones and a flat run's combines on the inter link; --interconnect alone is one
// link for all.
TEST(Speedup, TwoLinkModelColumn) {
  FakeSweep s("links");
  auto axes = [](int n, int g) {
    return std::vector<std::pair<std::string, std::string>>{
        {"parallel.workers", std::to_string(n)}, {"parallel.group_size", std::to_string(g)}};
  };
  FakeRun b = Make(axes(1, 0));
  b.epochs = {{1.0, 40, -1}};
  b.num_params = 25e6;
  s.Add(b);
  for (int g : {0, 2}) {
    FakeRun r = Make(axes(4, g), 0, 4, "completed");
    r.parallel = {{"group_size", g}, {"average_every", 2}, {"average_every_global", 8}};
    r.epochs = {{1.0, 0, 10.5}};  // projection: 10 s compute + 0.5 s measured averaging
    r.comm_s = 0.5;
    r.averagings = 10;
    r.num_params = 25e6;  // 100 MB
    s.Add(r);
  }
  const std::vector<ReportRun> runs = s.Load();
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  o.intra = "nvlink4";
  o.inter = "ib-hdr";
  const auto rows = ParseCsv(SpeedupTable("links", runs, o));
  ASSERT_EQ(rows.size(), 3u);
  const std::string col = "model epoch s (nvlink4 / ib-hdr)";
  auto ring = [](double n, const Interconnect& l) {
    return 2 * (n - 1) * l.latency + 2 * (n - 1) / n * 1e8 / l.bandwidth;
  };
  const Interconnect& nv = FindInterconnect("nvlink4");
  const Interconnect& ib = FindInterconnect("ib-hdr");
  const double flat = 10.0 + 10 * ring(4, ib);
  const double two = 10.0 + 7 * ring(2, nv) + 3 * ring(4, ib);
  EXPECT_EQ(rows[0].at(col), "40.00");
  EXPECT_NEAR(std::stod(rows[1].at(col)), flat, 1e-3 * flat);
  EXPECT_NEAR(std::stod(rows[2].at(col)), two, 1e-3 * two);
  // --interconnect alone: today's behaviour, every combine on that link.
  SpeedupOptions one;
  one.format = report::Format::kCsv;
  one.interconnect = "ib-hdr";
  const auto single = ParseCsv(SpeedupTable("links", runs, one));
  const double two_on_ib = 10.0 + 7 * ring(2, ib) + 3 * ring(4, ib);
  EXPECT_NEAR(std::stod(single[1].at("model epoch s (ib-hdr)")), flat, 1e-3 * flat);
  EXPECT_NEAR(std::stod(single[2].at("model epoch s (ib-hdr)")), two_on_ib, 1e-3 * two_on_ib);
  // Conflicting or incomplete link options are refused.
  SpeedupOptions bad = one;
  bad.intra = "nvlink4";
  EXPECT_THROW(SpeedupTable("links", runs, bad), Error);
  SpeedupOptions half;
  half.intra = "nvlink4";
  EXPECT_THROW(SpeedupTable("links", runs, half), Error);
}

// The model prices what a run recorded it sent (comm_bytes over its combines), and a run with
// compressed deltas as an all-gather of those bytes: (N-1) a + (N-1) S_c / B per combine.
TEST(Speedup, ModelPricesTheRecordedBytesAndCompressedGathers) {
  FakeSweep s("bytes");
  for (const char* format : {"fp32", "int4"}) {
    FakeRun b = Make({{"parallel.workers", "1"}, {"parallel.compress.format", format}});
    b.epochs = {{1.0, 40, -1}};
    s.Add(b);
    FakeRun r = Make({{"parallel.workers", "4"}, {"parallel.compress.format", format}}, 0, 4);
    r.parallel = {{"average_every", 2}, {"compress", {{"format", format}}}};
    r.epochs = {{1.0, 0, 10.5}};
    r.comm_s = 0.5;
    r.averagings = 10;
    r.num_params = 25e6;  // 100 MB of parameters
    // int4: 12.5 MB a combine recorded; fp32: 2 x the parameters (optimizer state averaged)
    const double per_combine = std::string(format) == "int4" ? 12.5e6 : 2e8;
    r.results = {{"comm_bytes", 10 * per_combine}, {"epochs", 1}};
    s.Add(r);
  }
  const std::vector<ReportRun> runs = s.Load();
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  o.interconnect = "eth-1g";
  auto rows = ParseCsv(SpeedupTable("bytes", runs, o));
  ASSERT_EQ(rows.size(), 4u);
  const Interconnect& link = FindInterconnect("eth-1g");
  const double reduce = 10.0 + 10 * (6 * link.latency + 1.5 * 2e8 / link.bandwidth);
  const double gather = 10.0 + 10 * (3 * link.latency + 3 * 12.5e6 / link.bandwidth);
  const std::string col = "model epoch s (eth-1g)";
  int checked = 0;
  for (const auto& row : rows) {
    if (row.at("parallel.workers") != "4") continue;
    ++checked;
    const double want = row.at("parallel.compress.format") == "int4" ? gather : reduce;
    EXPECT_NEAR(std::stod(row.at(col)), want, 1e-3 * want) << row.at("parallel.compress.format");
  }
  EXPECT_EQ(checked, 2);
}

// A streamed run (parallel.stream) is priced with each exchange hidden behind its tau steps:
// (R - F) max(0, T - tau compute / steps) + F T, from the steps per epoch the run recorded.
TEST(Speedup, ModelHidesAStreamedExchangeBehindItsOverlapSteps) {
  FakeSweep s("stream");
  FakeRun b = Make({{"parallel.workers", "1"}});
  b.epochs = {{1.0, 40, -1}};
  s.Add(b);
  FakeRun r = Make({{"parallel.workers", "4"}}, 0, 4);
  r.parallel = {{"average_every", 20}, {"stream", {{"fragments", 2}, {"overlap_steps", 5}}}};
  // The projection hides part of the exchanges: the model's compute is the slowest worker's.
  r.epochs = {{1.0, 10.0, 10.3}};
  r.averagings = 10;
  r.minibatches = 100;
  r.num_params = 25e6;  // 100 MB an exchange (recorded below)
  r.results = {{"comm_bytes", 10 * 1e8}, {"epochs", 1}};
  s.Add(r);
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  o.interconnect = "eth-1g";
  const std::vector<ReportRun> runs = s.Load();
  auto rows = ParseCsv(SpeedupTable("stream", runs, o));
  const Interconnect& link = FindInterconnect("eth-1g");
  const double t = 6 * link.latency + 1.5 * 1e8 / link.bandwidth;
  ASSERT_GT(t, 0.5);  // partly hidden behind 5 of 100 steps of 10 s
  const double want = 10.0 + 8 * (t - 0.5) + 2 * t;
  int checked = 0;
  for (const auto& row : rows) {
    if (row.at("parallel.workers") != "4") continue;
    ++checked;
    EXPECT_NEAR(std::stod(row.at("model epoch s (eth-1g)")), want, 1e-3 * want);
  }
  EXPECT_EQ(checked, 1);
}

// Two 1-worker runs of the same work that took 2.8 s and 5.1 s (a noisy baseline) would make a
// 4-worker projection of 0.7 s superlinear against their mean (3.95 / 0.7 = 5.6); projected
// within the run (4 workers x 0.6 s of compute each over its own 0.7 s), it is 3.43, and the
// modelled epoch too is divided into the run's own serial time.
TEST(SpeedupTable, ProjectsFromEachRunsOwnComputeTime) {
  FakeSweep s("own");
  for (int rep = 0; rep < 2; ++rep) {
    FakeRun one = Make({{"parallel.workers", "1"}}, rep);
    one.epochs = {{1.0, rep == 0 ? 2.8 : 5.1, -1}};
    s.Add(one);
  }
  FakeRun four = Make({{"parallel.workers", "4"}}, 0, 4);
  Epoch e{1.0, 3.0, 0.7};
  e.compute_mean_s = 0.6;
  four.epochs = {e, e};
  four.frames = 1000;
  s.Add(four);
  // A run without the workers' compute times: no projected speedup (said in its notes).
  FakeRun old = Make({{"parallel.workers", "2"}}, 0, 2);
  old.epochs = {{1.0, 3.0, 1.975}};
  s.Add(old);
  const std::vector<ReportRun> runs = s.Load();
  SpeedupOptions o;
  o.format = report::Format::kCsv;
  o.interconnect = "ib-fdr";
  auto rows = ParseCsv(SpeedupTable("own", runs, o));
  ASSERT_EQ(rows.size(), 3u);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::stoi(a.at("parallel.workers")) < std::stoi(b.at("parallel.workers"));
  });
  EXPECT_EQ(rows[0].at("projected speedup"), "1.00");
  EXPECT_EQ(rows[1].at("parallel.workers"), "2");
  EXPECT_EQ(rows[1].at("projected speedup"), "–");  // not 3.95 / 1.975 against the baseline
  EXPECT_NE(rows[1].at("notes").find("recorded no workers' compute times"), std::string::npos);
  EXPECT_EQ(rows[2].at("projected speedup"), fmt::format("{:.2f}", 4 * 0.6 / 0.7));
  EXPECT_EQ(rows[2].at("projected efficiency"), fmt::format("{:.2f}", 0.6 / 0.7));
  const double model = std::stod(rows[2].at("model epoch s (ib-fdr)"));
  EXPECT_EQ(rows[2].at("model speedup"), fmt::format("{:.2f}", 4 * 0.6 / model));
  // Not superlinear, so no note of the baseline's noise for the projection.
  EXPECT_EQ(rows[2].at("notes").find("projected"), std::string::npos) << rows[2].at("notes");
  o.format = report::Format::kMd;
  EXPECT_NE(SpeedupTable("own", runs, o).find("projected: within each run"), std::string::npos);
}

}  // namespace
}  // namespace mavg
