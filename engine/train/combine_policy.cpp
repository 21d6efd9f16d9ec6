#include "engine/train/combine_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/config/combine_list.h"
#include "engine/core/error.h"
#include "engine/train/averaging.h"

namespace mavg {

bool CombinePlan::CombineAfter(int64_t minibatch) const {
  return std::binary_search(points.begin(), points.end(), minibatch);
}

namespace {

int64_t FullMinibatches(const EpochCombineInput& in) { return in.min_shard_frames / in.minibatch; }

// The epoch's points from a rule asked after every minibatch m (1-based) that fits: `after(m,
// since)` with `since` the minibatches since the last combine (or the epoch's start). A period
// longer than the epoch (QSR's as the lr decays, a list's last) combines once, at the epoch's
// last full minibatch: every epoch ends on a combine.
template <class After>
CombinePlan PlanByRule(const EpochCombineInput& in, const std::string& what, After after) {
  CombinePlan plan;
  const int64_t full = FullMinibatches(in);
  int64_t since = 0;
  for (int64_t m = 1; m <= full; ++m) {
    ++since;
    if (after(m, since)) {
      plan.points.push_back(m);
      since = 0;
    }
  }
  MAVG_CHECK(full > 0,
             "epoch {}: the smallest shard has {} frames, not one full minibatch of {} ({}; use "
             "fewer workers or a smaller minibatch)",
             in.epoch, in.min_shard_frames, in.minibatch, what);
  if (plan.points.empty()) plan.points.push_back(full);
  return plan;
}

// Every K minibatches or every F frames: Su & Chen's crossing rule (averaging.h).
class ConstantPolicy final : public CombinePolicy {
 public:
  ConstantPolicy(int64_t frames_per_reduce, int64_t minibatch, bool in_frames)
      : frames_per_reduce_(frames_per_reduce), minibatch_(minibatch), in_frames_(in_frames) {}
  CombinePlan PlanEpoch(const EpochCombineInput& in) const override {
    const AveragingPlan a = PlanAveraging(in.min_shard_frames, in.minibatch, frames_per_reduce_);
    CombinePlan plan;
    for (int64_t m = 1; m <= a.minibatches; ++m) {
      if (a.AverageAfter(m)) plan.points.push_back(m);
    }
    return plan;
  }
  std::string Describe() const override {
    return in_frames_ ? fmt::format("every {} frames", frames_per_reduce_)
                      : fmt::format("every {} minibatches", frames_per_reduce_ / minibatch_);
  }

 private:
  int64_t frames_per_reduce_, minibatch_;
  bool in_frames_;
};

// Post-local SGD: every step during the warm-up, then every K (PyTorch's PeriodicModelAverager:
// after step s when s >= W and (s - W) % K == 0, s the 0-based step). A warm-up in epochs is
// whole epochs of every step; after it each epoch's K-th steps (every epoch starts right after
// a combine).
class PostLocalPolicy final : public CombinePolicy {
 public:
  PostLocalPolicy(int64_t k, int64_t warmup_steps, int64_t warmup_epochs)
      : k_(k), warmup_steps_(warmup_steps), warmup_epochs_(warmup_epochs) {}
  CombinePlan PlanEpoch(const EpochCombineInput& in) const override {
    return PlanByRule(in, Describe(), [&](int64_t m, int64_t /*since*/) {
      if (warmup_epochs_ > 0) return in.epoch <= warmup_epochs_ || m % k_ == 0;
      const int64_t s = in.steps_before + m - 1;
      return s < warmup_steps_ || (s - warmup_steps_) % k_ == 0;
    });
  }
  std::string Describe() const override {
    return warmup_epochs_ > 0
               ? fmt::format("post-local SGD: every step for {} epoch(s), then every {}",
                             warmup_epochs_, k_)
               : fmt::format("post-local SGD: every step for {} steps, then every {}",
                             warmup_steps_, k_);
  }

 private:
  int64_t k_, warmup_steps_, warmup_epochs_;
};

// QSR: the period grows as the lr decays, H = max(K, floor((gamma / lr)^2)).
class QsrPolicy final : public CombinePolicy {
 public:
  QsrPolicy(int64_t k, double gamma) : k_(k), gamma_(gamma) {}
  static int64_t Period(int64_t k, double gamma, double lr) {
    if (!(lr > 0)) return k;
    const double h = std::floor((gamma / lr) * (gamma / lr));
    return h > static_cast<double>(k) ? static_cast<int64_t>(std::min(h, 1e15)) : k;
  }
  CombinePlan PlanEpoch(const EpochCombineInput& in) const override {
    const int64_t h = Period(k_, gamma_, in.lr);
    return PlanByRule(in, fmt::format("QSR's period {} at lr {}", h, in.lr),
                      [&](int64_t, int64_t since) { return since >= h; });
  }
  std::string Describe() const override {
    return fmt::format("QSR: every max({}, floor(({} / lr)^2)) minibatches", k_, gamma_);
  }

 private:
  int64_t k_;
  double gamma_;
};

// A user's list of (from step, period).
class ListPolicy final : public CombinePolicy {
 public:
  explicit ListPolicy(std::vector<std::pair<int64_t, int64_t>> list) : list_(std::move(list)) {}
  CombinePlan PlanEpoch(const EpochCombineInput& in) const override {
    return PlanByRule(in, Describe(), [&](int64_t m, int64_t since) {
      const int64_t s = in.steps_before + m - 1;
      int64_t period = list_.front().second;
      for (const auto& [from, k] : list_) {
        if (from <= s) period = k;
      }
      return since >= period;
    });
  }
  std::string Describe() const override {
    std::string text;
    for (const auto& [from, k] : list_) {
      text += fmt::format("{}every {} from step {}", text.empty() ? "" : ", ", k, from);
    }
    return text;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> list_;
};

}  // namespace

std::unique_ptr<CombinePolicy> CreateCombinePolicy(const ParallelConfig& p, int64_t minibatch) {
  const int64_t k = p.average_every;
  switch (p.combine.policy) {
    case CombinePolicyType::kConstant:
      return std::make_unique<ConstantPolicy>(
          p.average_frames > 0 ? p.average_frames : k * minibatch, minibatch, p.average_frames > 0);
    case CombinePolicyType::kPostLocal:
      return std::make_unique<PostLocalPolicy>(k, p.combine.warmup_steps, p.combine.warmup_epochs);
    case CombinePolicyType::kQsr:
      return std::make_unique<QsrPolicy>(k, p.combine.qsr_gamma);
    case CombinePolicyType::kList:
      return std::make_unique<ListPolicy>(ParseCombineList(p.combine.list));
  }
  MAVG_CHECK(false, "unknown parallel.combine.policy");
  return nullptr;
}

}  // namespace mavg
