#pragma once
// Training health beyond "diverged": a run whose losses stayed finite can still have learned
// nothing, or have learned and then been thrown back. Such a run ends `collapsed`, not
// `completed` (docs/algorithms.md §4e gives the thresholds and why).
//
//   chance:    no epoch's CV loss came below the loss of a model that ignores its input
//              (the CV labels scored by the training label frequencies, add-one smoothed, or
//              ln(outputs) if that is lower), times schedule.collapse.chance_fraction (0.99:
//              within 1 % of it).
//   regressed: the final model's CV loss is at least schedule.collapse.growth times the first
//              epoch's, and at least half the input-free loss (so that overfitting an easy task,
//              0.01 -> 0.03 nats, is not called a collapse).
// A threshold of 0 turns its check off. Non-finite CV losses count as above every threshold.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace mavg {

// Cross-entropy (nats per frame) of `cv_labels` under the add-one smoothed frequencies of the
// training labels (`train_counts`: frames per label, one entry per output, as RunData keeps them),
// capped at ln(outputs): the best a model that ignores its input can do, as far as the training
// data tells it. CV labels must lie in [0, outputs); at least one output.
double InputFreeLoss(std::span<const double> train_counts, std::span<const int32_t> cv_labels);

struct CollapseVerdict {
  bool collapsed = false;
  std::string reason;  // one line, empty when healthy
  // The check, the values and thresholds it compared, and the reason: result.json's "collapse"
  // (a CollapseNote, records/run_result.h).
  nlohmann::json detail;
};

// `cv_losses`: every epoch's CV loss in order (rejected epochs included); `final_cv_loss`: the
// loss of the model the run ends with (newbob: the last accepted epoch's).
CollapseVerdict CheckCollapse(const std::vector<double>& cv_losses, double final_cv_loss,
                              double input_free_loss, const CollapseConfig& t);

}  // namespace mavg
