#include "engine/train/schedule.h"

#include <cmath>

#include "engine/core/error.h"

namespace mavg {

nlohmann::json Schedule::SaveState() const { return {{"epochs_done", epochs_done_}}; }
void Schedule::LoadState(const nlohmann::json& state) {
  epochs_done_ = state.at("epochs_done").get<int>();
}

namespace {

class ExponentialSchedule final : public Schedule {
 public:
  ExponentialSchedule(double lr, double final_ratio, int epochs)
      : lr_(lr), final_ratio_(final_ratio), epochs_(epochs) {}
  double LearningRate() const override {
    if (epochs_ <= 1) return lr_;
    const int k = std::min(epochs_done_, epochs_ - 1);  // 0-based epoch about to run
    return lr_ * std::pow(final_ratio_, static_cast<double>(k) / (epochs_ - 1));
  }
  EpochDecision EndEpoch(double /*cv_loss*/) override {
    ++epochs_done_;
    return {true, epochs_done_ >= epochs_};
  }

 private:
  double lr_, final_ratio_;
  int epochs_;
};

class ConstantSchedule final : public Schedule {
 public:
  ConstantSchedule(double lr, int epochs) : lr_(lr), epochs_(epochs) {}
  double LearningRate() const override { return lr_; }
  EpochDecision EndEpoch(double /*cv_loss*/) override {
    ++epochs_done_;
    return {true, epochs_done_ >= epochs_};
  }

 private:
  double lr_;
  int epochs_;
};

class NewbobSchedule final : public Schedule {
 public:
  NewbobSchedule(double lr, int max_epochs, const NewbobConfig& c)
      : lr_(lr), max_epochs_(max_epochs), c_(c) {}
  double LearningRate() const override { return lr_; }
  bool NeedsInitialCvLoss() const override { return true; }
  void SetInitialCvLoss(double loss) override { loss_ = loss; }

  EpochDecision EndEpoch(double cv_loss) override {
    MAVG_CHECK(!std::isnan(loss_), "newbob: the initial CV loss was not set");
    const int it = ++epochs_done_;
    EpochDecision d;
    const double loss_prev = loss_;
    d.accept = cv_loss < loss_ || it <= c_.keep_lr_epochs;
    if (d.accept) loss_ = cv_loss;
    d.stop = it >= max_epochs_;
    if (it <= c_.keep_lr_epochs) return d;  // no halving yet
    const double rel_impr = (loss_prev - loss_) / loss_prev;
    if (halving_ && rel_impr < c_.end_halving_impr) {
      // Kaldi: below min_iters it "continues": no stop and no halving this epoch.
      if (c_.min_epochs > it) return d;
      d.stop = true;
      return d;
    }
    if (rel_impr < c_.start_halving_impr) halving_ = true;
    if (halving_) lr_ *= c_.halving_factor;
    return d;
  }

  nlohmann::json SaveState() const override {
    nlohmann::json s = Schedule::SaveState();
    s["lr"] = lr_;
    s["loss"] = loss_;
    s["halving"] = halving_;
    return s;
  }
  void LoadState(const nlohmann::json& s) override {
    Schedule::LoadState(s);
    lr_ = s.at("lr").get<double>();
    loss_ = s.at("loss").get<double>();
    halving_ = s.at("halving").get<bool>();
  }

 private:
  double lr_;
  int max_epochs_;
  NewbobConfig c_;
  double loss_ = std::nan("");  // CV loss of the best accepted model
  bool halving_ = false;
};

}  // namespace

std::unique_ptr<Schedule> CreateSchedule(const ScheduleConfig& config) {
  const int epochs = static_cast<int>(config.epochs);
  switch (config.type) {
    case ScheduleType::kExponential:
      return std::make_unique<ExponentialSchedule>(config.lr, config.final_ratio, epochs);
    case ScheduleType::kNewbob:
      return std::make_unique<NewbobSchedule>(config.lr, epochs, config.newbob);
    case ScheduleType::kConstant:
      return std::make_unique<ConstantSchedule>(config.lr, epochs);
  }
  MAVG_FAIL("schedule.type: unknown schedule {}", static_cast<int>(config.type));
}

}  // namespace mavg
