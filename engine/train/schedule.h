#pragma once
// Learning-rate schedules over epochs (docs/algorithms.md §4):
//   exponential  lr_k = lr0 * final_ratio^((k-1)/(E-1)), k = 1..E; every epoch accepted
//                (Su & Chen's fork, train_nnet_scheduler.sh --lr-schedule exp)
//   newbob       Kaldi nnet1 train_scheduler.sh: accept an epoch only if the CV cross-entropy
//                went down (or within keep_lr_epochs); once the relative improvement drops
//                below start_halving_impr, multiply lr by halving_factor after every epoch;
//                stop when halving and the improvement is below end_halving_impr (not before
//                min_epochs), or after `epochs` epochs
//   constant     lr0 for E epochs
// The schedule gives the *base* lr; parallel training scales it by the number of workers.

#include <memory>
#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace mavg {

struct EpochDecision {
  bool accept = true;  // keep the epoch's model (newbob may reject it)
  bool stop = false;   // no further epochs
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // Learning rate for the next epoch.
  virtual double LearningRate() const = 0;
  // Newbob needs the CV loss of the initial model before the first epoch.
  virtual bool NeedsInitialCvLoss() const { return false; }
  virtual void SetInitialCvLoss(double /*loss*/) {}
  // Called after every epoch with the candidate model's CV loss (average per frame).
  virtual EpochDecision EndEpoch(double cv_loss) = 0;
  // Epochs completed so far.
  int EpochsDone() const { return epochs_done_; }
  // State for checkpoints.
  virtual nlohmann::json SaveState() const;
  virtual void LoadState(const nlohmann::json& state);

 protected:
  int epochs_done_ = 0;
};

std::unique_ptr<Schedule> CreateSchedule(const ScheduleConfig& config);

}  // namespace mavg
