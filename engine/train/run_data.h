#pragma once
// The data of a run: train/dev/test sets loaded, labels checked against the output layer,
// global CMVN estimated on train and applied to all sets (in memory, once).

#include <vector>

#include "engine/config/config.h"
#include "engine/data/dataset.h"
#include "engine/nn/model.h"

namespace mavg {

struct RunData {
  Dataset train, dev, test;    // test may be empty
  FeatureTransform transform;  // context + CMVN (what the model file records)
  int num_outputs = 0;
  std::vector<double> label_counts;  // [num_outputs] training frames per label
};

// Loads and normalises everything; adds the time spent to *io_s.
RunData LoadRunData(const RunConfig& config, double* io_s);

}  // namespace mavg
