#pragma once
// A small grid sweep for the report tests: workers {1, 2} x averaging {1, 5}, two replicates.

#include <string>

#include "tests/unit/report/fake_sweep.h"

namespace mavg::testing {

// Workers {1, 2} x averaging {1, 5}, two replicates (their seeds differ), test accuracies
// 0.9 - 0.01 x index; the 2-worker runs are NG-SGD (a key only they have); the last run failed.
inline void AddGrid(FakeSweep& s) {
  int i = 0;
  for (const char* w : {"1", "2"}) {
    for (const char* k : {"1", "5"}) {
      for (int rep = 0; rep < 2; ++rep, ++i) {
        FakeRun f = Make({{"parallel.workers", w}, {"parallel.average_every", k}}, rep,
                         std::stoi(w), i == 7 ? "failed" : "completed");
        f.config = {{"seed", 777 + rep},
                    {"parallel", {{"average_every", std::stoi(k)}}},
                    {"schedule", {{"lr", 0.004}}}};
        if (std::string(w) == "2") f.config["optimizer"] = {{"ngsgd", {{"rank_in", 20}}}};
        if (i != 7) f.results = {{"test_acc", 0.9 - 0.01 * i}, {"wall_s", 10.0 + i}};
        f.epochs = {{2.0 - 0.1 * i, 5, std::string(w) == "2" ? 3.0 : -1}};
        s.Add(f);
      }
    }
  }
}

}  // namespace mavg::testing
