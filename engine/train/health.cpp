#include "engine/train/health.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/error.h"

namespace mavg {

double InputFreeLoss(std::span<const int32_t> train_labels, std::span<const int32_t> cv_labels,
                     int64_t num_outputs) {
  MAVG_CHECK(num_outputs >= 1, "input-free loss: {} outputs", num_outputs);
  const double uniform = std::log(static_cast<double>(num_outputs));
  if (cv_labels.empty()) return uniform;
  std::vector<double> counts(static_cast<size_t>(num_outputs), 1.0);  // add-one smoothing
  for (int32_t y : train_labels) {
    MAVG_CHECK(y >= 0 && y < num_outputs, "input-free loss: training label {} outside [0, {})", y,
               num_outputs);
    counts[static_cast<size_t>(y)] += 1.0;
  }
  const double total = static_cast<double>(train_labels.size()) + static_cast<double>(num_outputs);
  double loss = 0.0;
  for (int32_t y : cv_labels) {
    MAVG_CHECK(y >= 0 && y < num_outputs, "input-free loss: CV label {} outside [0, {})", y,
               num_outputs);
    loss -= std::log(counts[static_cast<size_t>(y)] / total);
  }
  return std::min(uniform, loss / static_cast<double>(cv_labels.size()));
}

namespace {
double OrInf(double x) { return std::isfinite(x) ? x : std::numeric_limits<double>::infinity(); }
nlohmann::json JsonNum(double x) { return std::isfinite(x) ? nlohmann::json(x) : nullptr; }
}  // namespace

CollapseVerdict CheckCollapse(const std::vector<double>& cv_losses, double final_cv_loss,
                              double input_free_loss, const CollapseConfig& t) {
  CollapseVerdict v;
  if (cv_losses.empty()) return v;
  double best = std::numeric_limits<double>::infinity();
  for (double x : cv_losses) best = std::min(best, OrInf(x));
  const double final_loss = OrInf(final_cv_loss);
  if (t.chance_fraction > 0) {
    const double bound = t.chance_fraction * input_free_loss;
    if (best >= bound) {
      v.collapsed = true;
      v.reason = fmt::format(
          "no better than chance: the best CV loss in {} epochs, {:.4f}, is not below {:.4f} "
          "(the input-free loss {:.4f} x schedule.collapse.chance_fraction {})",
          cv_losses.size(), best, bound, input_free_loss, t.chance_fraction);
      v.detail = {{"check", "chance"},
                  {"best_cv_loss", JsonNum(best)},
                  {"input_free_loss", input_free_loss},
                  {"chance_fraction", t.chance_fraction}};
      return v;
    }
  }
  if (t.growth > 0 && cv_losses.size() >= 2) {
    const double first = OrInf(cv_losses.front());
    const double bound = std::max(t.growth * first, 0.5 * input_free_loss);
    if (final_loss >= bound) {
      v.collapsed = true;
      v.reason = fmt::format(
          "regressed: the final CV loss {:.4f} is at least {} x the first epoch's {:.4f} and at "
          "least half the input-free loss {:.4f}",
          final_loss, t.growth, first, input_free_loss);
      v.detail = {{"check", "regressed"},
                  {"final_cv_loss", JsonNum(final_loss)},
                  {"first_cv_loss", JsonNum(first)},
                  {"input_free_loss", input_free_loss},
                  {"growth", t.growth}};
    }
  }
  return v;
}

}  // namespace mavg
