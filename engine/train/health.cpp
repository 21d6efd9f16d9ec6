#include "engine/train/health.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "engine/records/run_result.h"

namespace mavg {

double InputFreeLoss(std::span<const double> train_counts, std::span<const int32_t> cv_labels) {
  const auto outputs = static_cast<int64_t>(train_counts.size());
  MAVG_CHECK(outputs >= 1, "input-free loss: {} outputs", outputs);
  const double uniform = std::log(static_cast<double>(outputs));
  if (cv_labels.empty()) return uniform;
  double total = static_cast<double>(outputs);  // add-one smoothing
  for (double n : train_counts) total += n;
  double loss = 0.0;
  for (int32_t y : cv_labels) {
    MAVG_CHECK(y >= 0 && y < outputs, "input-free loss: CV label {} outside [0, {})", y, outputs);
    loss -= std::log((train_counts[static_cast<size_t>(y)] + 1.0) / total);
  }
  return std::min(uniform, loss / static_cast<double>(cv_labels.size()));
}

namespace {
double OrInf(double x) { return std::isfinite(x) ? x : std::numeric_limits<double>::infinity(); }
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
      CollapseNote note;
      note.check = "chance", note.reason = v.reason;
      note.best_cv_loss = best, note.input_free_loss = input_free_loss;
      note.chance_fraction = t.chance_fraction;
      v.detail = ToJson(note);
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
      CollapseNote note;
      note.check = "regressed", note.reason = v.reason;
      note.final_cv_loss = final_loss, note.first_cv_loss = first;
      note.input_free_loss = input_free_loss, note.growth = t.growth;
      v.detail = ToJson(note);
    }
  }
  return v;
}

}  // namespace mavg
