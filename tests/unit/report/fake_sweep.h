#pragma once
// A hand-made sweep for the report tests: run directories written here (state.json,
// result.json, metrics.jsonl), registered and ingested by the store, then read back by
// LoadSweepRuns, so the numbers go through the same path as a real sweep's.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/report/sweep_data.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"

namespace mavg::testing {

using nlohmann::json;

struct Epoch {
  double cv_loss;
  double train_s;      // wall_s - cv_s
  double projected_s;  // < 0: none (one worker, MPI)
  bool accepted = true;
  double compute_mean_s = -1.0;  // the mean worker's compute seconds (< 0: not recorded)
  double cpu_util = -1.0;        // CPU use (< 0: not recorded); below 0.75 contended
};

struct FakeRun {
  std::vector<std::pair<std::string, std::string>> axes;
  int replicate = 0;
  std::string status = "completed";
  int workers = 1;
  std::string mode = "single";
  json parallel = json::object();
  std::vector<Epoch> epochs;
  double comm_s = 0.0, averagings = 0.0, num_params = 1000;
  double minibatches = -1.0;                  // per worker per epoch (written when >= 0)
  int64_t frames = 1000, frames_dropped = 0;  // per epoch
  json config = json::object();               // merged into the run's config_json
  json results = json::object();              // merged into its result.json
};

using Axes = std::vector<std::pair<std::string, std::string>>;

// Several workers are simulated ones.
inline FakeRun Make(const Axes& axes, int replicate = 0, int workers = 1,
                    const std::string& status = "completed") {
  FakeRun f;
  f.axes = axes;
  f.replicate = replicate;
  f.workers = workers;
  f.status = status;
  f.mode = workers > 1 ? "simulated" : "single";
  return f;
}

class FakeSweep {
 public:
  explicit FakeSweep(const std::string& name) : name_(name), store_(dir_.File("mavg.db")) {
    store_.PutSweep({name, "name: " + name, "hash-" + name, "2024-01-01"}, false);
  }

  void Add(const FakeRun& f) {
    const std::string id = fmt::format("run{:04}", runs_.size());
    const std::string run_dir = dir_.File(id);
    std::filesystem::create_directories(run_dir);
    json config = {{"parallel", f.parallel}, {"seed", f.replicate}};
    config.merge_patch(f.config);
    config["parallel"]["workers"] = f.workers;
    RunRecord rec;
    rec.run_id = id;
    rec.config_json = config.dump();
    rec.run_dir = run_dir;
    json axes = json::array();
    for (const auto& [k, v] : f.axes) axes.push_back({k, v});
    SweepMember m;
    m.run_id = id;
    m.axes_json = axes.dump();
    m.replicate = f.replicate;
    m.position = static_cast<int>(runs_.size());
    store_.RegisterRuns(name_, {rec}, {m});
    Write(run_dir + "/state.json", json{{"status", f.status}, {"attempt", 1}}.dump());
    json result = {{"status", f.status},
                   {"run_id", id},
                   {"world_size", f.workers},
                   {"mode", f.mode},
                   {"num_params", f.num_params}};
    result.merge_patch(f.results);
    Write(run_dir + "/result.json", result.dump());
    std::string lines;
    int e = 1;
    for (const Epoch& x : f.epochs) {
      json row = {{"epoch", e++},
                  {"accepted", x.accepted},
                  {"cv_loss", x.cv_loss},
                  {"wall_s", x.train_s + 1.0},
                  {"cv_s", 1.0},
                  {"comm_s", f.comm_s},
                  {"compute_s", x.train_s},
                  {"io_s", 0.0},
                  {"averagings", f.averagings},
                  {"world_size", f.workers},
                  {"frames", f.frames},
                  {"frames_dropped", f.frames_dropped}};
      if (x.projected_s >= 0) row["projected_wall_s"] = x.projected_s;
      if (f.minibatches >= 0) row["minibatches"] = f.minibatches;
      if (x.cpu_util >= 0) {
        row["cpu_util"] = x.cpu_util;
        row["contended"] = x.cpu_util < 0.75;
      }
      if (x.compute_mean_s >= 0) {
        row["compute_s_mean"] = x.compute_mean_s;
        row["io_s_mean"] = 0.0;
      }
      lines += row.dump() + "\n";
    }
    Write(run_dir + "/metrics.jsonl", lines);
    store_.IngestRun(id, run_dir);
    runs_.push_back(id);
  }

  std::vector<ReportRun> Load() { return LoadSweepRuns(store_, name_); }
  Store& GetStore() { return store_; }
  const std::string& Name() const { return name_; }
  // The run directory of the i-th run added.
  std::string Dir(size_t i) const { return dir_.File(runs_.at(i)); }

 private:
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    ASSERT_TRUE(out.good()) << path;
  }

  TempDir dir_;
  std::string name_;
  Store store_;
  std::vector<std::string> runs_;
};

// CSV rows as maps from the header's names.
inline std::vector<std::map<std::string, std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  std::vector<std::map<std::string, std::string>> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> m;
    for (size_t j = 0; j < rows[0].size(); ++j)
      m[rows[0][j]] = j < rows[i].size() ? rows[i][j] : "";
    out.push_back(m);
  }
  return out;
}

// One worker: 10 s for 1000 frames; 8 workers: 1 s for the 690 of them they trained, 310
// dropped: simulated (1 s projected; each worker computed 1 s) or 8 MPI ranks (1 s measured).
inline void AddRunsThatDropFrames(FakeSweep& s, bool mpi = false) {
  FakeRun b = Make({{"parallel.workers", "1"}});
  b.epochs = {{1.0, 10.0, -1}};
  s.Add(b);
  FakeRun r = Make({{"parallel.workers", "8"}}, 0, 8);
  Epoch e{1.1, mpi ? 1.0 : 0.0, mpi ? -1.0 : 1.0};
  e.compute_mean_s = 1.0;
  r.epochs = {e};
  if (mpi) r.mode = "mpi";
  r.frames = 690;
  r.frames_dropped = 310;
  s.Add(r);
}

}  // namespace mavg::testing
