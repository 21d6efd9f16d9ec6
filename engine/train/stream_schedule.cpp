#include "engine/train/stream_schedule.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/core/error.h"

namespace mavg {

int64_t StreamFragment::Size() const {
  int64_t n = 0;
  for (const auto& r : ranges) n += r.second;
  return n;
}

std::vector<StreamFragment> FragmentsOfLayers(const std::vector<std::vector<int>>& layer_groups,
                                              const std::vector<int64_t>& tensor_sizes) {
  MAVG_CHECK(tensor_sizes.size() % 2 == 0, "{} tensors: not two per layer", tensor_sizes.size());
  const size_t layers = tensor_sizes.size() / 2;
  std::vector<int64_t> offset(layers + 1, 0);
  for (size_t l = 0; l < layers; ++l) {
    offset[l + 1] = offset[l] + tensor_sizes[2 * l] + tensor_sizes[2 * l + 1];
  }
  std::vector<StreamFragment> out;
  for (const std::vector<int>& group : layer_groups) {
    StreamFragment f;
    for (int l : group) {
      MAVG_CHECK(l >= 0 && static_cast<size_t>(l) < layers, "layer {} of a model with {} layers", l,
                 layers);
      const auto u = static_cast<size_t>(l);
      const int64_t begin = offset[u], length = offset[u + 1] - offset[u];
      if (!f.ranges.empty() && f.ranges.back().first + f.ranges.back().second == begin) {
        f.ranges.back().second += length;
      } else {
        f.ranges.emplace_back(begin, length);
      }
      f.tensor_sizes.push_back(tensor_sizes[2 * u]);
      f.tensor_sizes.push_back(tensor_sizes[2 * u + 1]);
    }
    out.push_back(std::move(f));
  }
  return out;
}

StreamSchedule::StreamSchedule(Backend& backend, WorkerGroup& group, StreamOptions options,
                               const FilterMaker& make_filter)
    : backend_(backend), group_(group), options_(std::move(options)) {
  const int fragments = static_cast<int>(options_.fragments.size());
  MAVG_CHECK(fragments >= 1, "streaming with no fragments");
  MAVG_CHECK(options_.mix >= 0.0f && options_.mix < 1.0f, "streaming mix {} outside [0, 1)",
             options_.mix);
  int64_t largest = 0, total = 0;
  for (int f = 0; f < fragments; ++f) {
    const StreamFragment& frag = options_.fragments[static_cast<size_t>(f)];
    sizes_.push_back(frag.Size());
    largest = std::max(largest, sizes_.back());
    total += sizes_.back();
    filters_.push_back(make_filter(sizes_.back()));
    filters_.back()->SetTag(fmt::format("-f{}", f));
  }
  const std::vector<Worker>& workers = group.Workers();
  MAVG_CHECK(workers.empty() || workers[0].params.Cols() == total,
             "fragments of {} parameters for a model of {}", total,
             workers.empty() ? 0 : workers[0].params.Cols());
  for (size_t i = 0; i < workers.size(); ++i) scratch_.emplace_back(backend, 1, largest);
  if (options_.compress != DeltaFormat::kFp32) {
    const int first = workers.empty() ? 0 : workers[0].rank;  // local ranks are consecutive
    for (int f = 0; f < fragments; ++f) {
      exchanges_.push_back(std::make_unique<DeltaExchange>(
          backend, group,
          DeltaCodec(options_.compress, options_.compress_block,
                     options_.fragments[static_cast<size_t>(f)].tensor_sizes),
          options_.error_feedback,
          [this, f, first](Worker& w) { return Scratch(static_cast<size_t>(w.rank - first), f); },
          fmt::format("-f{}", f)));
    }
  }
}

void StreamSchedule::PlanEpoch(CombinePlan& plan) {
  const int fragments = static_cast<int>(sizes_.size());
  const int64_t tau = options_.overlap_steps;
  std::map<int64_t, Point> at;
  int64_t a = 0;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const int64_t b = plan.points[i];
    MAVG_CHECK(b - a >= fragments,
               "a period of {} minibatches for {} fragments: each needs a step of its own", b - a,
               fragments);
    const bool last = i + 1 == plan.points.size();
    for (int p = 0; p < fragments; ++p) {
      const int64_t s = a + (p + 1) * (b - a) / fragments;
      if (last && p == fragments - 1) {
        at[s].all = true;
        break;
      }
      MAVG_CHECK(at[s].start < 0, "two fragments start at minibatch {}", s);
      at[s].start = p;
      if (tau > 0) at[s + tau].merge = true;
    }
    a = b;
  }
  plan.points.clear();
  points_.clear();
  for (const auto& [m, point] : at) {
    plan.points.push_back(m);
    points_.push_back(point);
  }
}

void StreamSchedule::Reset() {
  in_flight_.reset();
  pending_fragment_ = -1;
  for (size_t f = 0; f < sizes_.size(); ++f) {
    Gather(static_cast<int>(f));
    filters_[f]->Reset(Scratch(0, static_cast<int>(f)));
    if (!exchanges_.empty()) {
      exchanges_[f]->SetAnchorFrom(Scratch(0, static_cast<int>(f)), /*clear_residuals=*/true);
    }
  }
}

void StreamSchedule::BeginEpoch() {
  for (size_t f = 0; f < sizes_.size(); ++f) {
    const int fi = static_cast<int>(f);
    if (const Matrix* start = filters_[f]->EpochStart()) {
      for (Worker& w : group_.Workers()) {
        int64_t pos = 0;
        for (const auto& [offset, length] : options_.fragments[f].ranges) {
          backend_.Copy(start->View().ColRange(pos, length),
                        w.params.View().ColRange(offset, length));
          pos += length;
        }
      }
    }
    if (!exchanges_.empty()) {
      Gather(fi);
      exchanges_[f]->SetAnchorFrom(Scratch(0, fi), /*clear_residuals=*/false);
    }
  }
}

void StreamSchedule::Gather(int f) {
  std::vector<Worker>& workers = group_.Workers();
  for (size_t i = 0; i < workers.size(); ++i) {
    MatrixView dst = Scratch(i, f);
    int64_t pos = 0;
    for (const auto& [offset, length] : options_.fragments[static_cast<size_t>(f)].ranges) {
      backend_.Copy(workers[i].params.View().ColRange(offset, length), dst.ColRange(pos, length));
      pos += length;
    }
  }
}

CommTime StreamSchedule::Exchange(int f, std::span<double> agree) {
  Gather(f);
  if (!exchanges_.empty()) return exchanges_[static_cast<size_t>(f)]->Mean(agree);
  return group_.Mean(Scope::kWorld, ScratchOf(f), agree);
}

TensorsOf StreamSchedule::ScratchOf(int f) {
  const int first = group_.Workers()[0].rank;  // local workers have consecutive ranks
  return [this, f, first](Worker& w) {
    return std::vector<MatrixView>{Scratch(static_cast<size_t>(w.rank - first), f)};
  };
}

void StreamSchedule::Merge(int f, bool epoch_end) {
  const auto fu = static_cast<size_t>(f);
  ConstMatrixView start = Scratch(0, f);
  if (const Matrix* filtered = filters_[fu]->Apply(start, epoch_end)) start = *filtered;
  const float alpha = epoch_end ? 0.0f : options_.mix;
  for (Worker& w : group_.Workers()) {
    int64_t pos = 0;
    for (const auto& [offset, length] : options_.fragments[fu].ranges) {
      MatrixView dst = w.params.View().ColRange(offset, length);
      if (alpha == 0.0f) {
        backend_.Copy(start.ColRange(pos, length), dst);
      } else {
        backend_.Axpby(1.0f - alpha, start.ColRange(pos, length), alpha, dst);
      }
      pos += length;
    }
  }
  if (!exchanges_.empty()) exchanges_[fu]->SetAnchorFrom(start, /*clear_residuals=*/false);
}

double StreamSchedule::FinishPending() {
  CommTime t{.wait_s = pending_wait_s_, .comm_s = pending_comm_s_};  // finished before
  if (in_flight_) {
    t.wait_s = in_flight_->Wait();
    t.comm_s = in_flight_->CommSeconds();
    in_flight_.reset();
  }
  AccountCombine(group_, t);
  const int f = pending_fragment_;
  pending_fragment_ = -1;
  Merge(f, false);
  return t.comm_s;
}

void StreamSchedule::Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) {
  MAVG_CHECK(index >= 1 && index <= static_cast<int64_t>(points_.size()) &&
                 total == static_cast<int64_t>(points_.size()),
             "combine point {} of {}, but the epoch was planned with {}", index, total,
             points_.size());
  const Point& point = points_[static_cast<size_t>(index - 1)];
  double block = slowest;
  if (pending_fragment_ >= 0 && (point.merge || point.all)) {
    block = std::max(slowest, FinishPending());
  }
  tally.projected_s += block;
  tally.stop_check = point.all || point.start >= 0;
  tally.agree = false;
  if (point.all) {  // the epoch's end: every fragment, in order, at once
    for (size_t f = 0; f < sizes_.size(); ++f) {
      const CommTime t =
          Exchange(static_cast<int>(f), f == 0 ? tally.stop_flags : std::span<double>());
      if (f == 0) tally.stop_flags_agreed = t.agreed;
      AccountCombine(group_, t);
      tally.projected_s += t.comm_s;
      Merge(static_cast<int>(f), true);
    }
    tally.agree = true;
    return;
  }
  if (point.start < 0) return;  // a merge only
  const int f = point.start;
  MAVG_CHECK(pending_fragment_ < 0, "fragment {} starts at point {} while fragment {} is in flight",
             f, index, pending_fragment_);
  if (options_.overlap_steps == 0) {
    const CommTime t = Exchange(f, tally.stop_flags);
    tally.stop_flags_agreed = t.agreed;
    AccountCombine(group_, t);
    tally.projected_s += t.comm_s;
    Merge(f, false);
    return;
  }
  pending_fragment_ = f;
  if (!exchanges_.empty()) {  // gathered now; only its merge waits for the tau steps
    const CommTime t = Exchange(f, tally.stop_flags);
    tally.stop_flags_agreed = t.agreed;
    pending_comm_s_ = t.comm_s, pending_wait_s_ = t.wait_s;  // accounted at the merge
    return;
  }
  Gather(f);
  pending_comm_s_ = pending_wait_s_ = 0.0;
  in_flight_ = group_.StartMean(ScratchOf(f));
  tally.stop_flags_agreed = false;
}

int64_t StreamSchedule::PayloadOf(int f) const {
  if (!exchanges_.empty()) return exchanges_[static_cast<size_t>(f)]->PayloadBytes();
  return sizes_[static_cast<size_t>(f)] * static_cast<int64_t>(sizeof(float));
}

int64_t StreamSchedule::Exchanges(int64_t points) const {
  return SumOverExchanges(points, &StreamSchedule::One);
}

int64_t StreamSchedule::ReceivedOf(int f) const {
  if (exchanges_.empty()) return PayloadOf(f);  // the mean
  return PayloadOf(f) * (group_.WorldSize() - 1);
}

int64_t StreamSchedule::SumOverExchanges(int64_t points,
                                         int64_t (StreamSchedule::*of)(int) const) const {
  int64_t bytes = 0;
  for (int64_t i = 0; i < points && i < static_cast<int64_t>(points_.size()); ++i) {
    const Point& p = points_[static_cast<size_t>(i)];
    if (p.all) {
      for (size_t f = 0; f < sizes_.size(); ++f) bytes += (this->*of)(static_cast<int>(f));
    } else if (p.start >= 0) {
      bytes += (this->*of)(p.start);
    }
  }
  return bytes;
}

int64_t StreamSchedule::Bytes(int64_t points, int64_t) const {
  return SumOverExchanges(points, &StreamSchedule::PayloadOf);
}

int64_t StreamSchedule::BytesReceived(int64_t points, int64_t) const {
  return SumOverExchanges(points, &StreamSchedule::ReceivedOf);
}

void StreamSchedule::Save(const CheckpointDir& dir, int64_t generation, bool root,
                          nlohmann::json& state) {
  for (const auto& filter : filters_) filter->Save(dir, generation, root);
  for (const auto& exchange : exchanges_) exchange->Save(dir, generation, root);
  state["stream_fragment"] = pending_fragment_;
  if (pending_fragment_ < 0) return;
  if (in_flight_) {  // finish the mean now; it is merged at its point as usual
    pending_wait_s_ = in_flight_->Wait();
    pending_comm_s_ = in_flight_->CommSeconds();
    in_flight_.reset();
  }
  if (root) dir.WriteTensors(backend_, generation, "stream-mean", {Scratch(0, pending_fragment_)});
  state["stream_comm_s"] = pending_comm_s_;
  state["stream_wait_s"] = pending_wait_s_;
}

void StreamSchedule::Load(const CheckpointDir& dir, int64_t generation,
                          const nlohmann::json& state) {
  for (const auto& filter : filters_) filter->Load(dir, generation);
  for (const auto& exchange : exchanges_) exchange->Load(dir, generation);
  in_flight_.reset();
  pending_fragment_ = state.value("stream_fragment", -1);
  MAVG_CHECK(pending_fragment_ < static_cast<int>(sizes_.size()),
             "{}: the checkpoint has fragment {} in flight, but the model has {} fragments",
             dir.Path(), pending_fragment_, sizes_.size());
  if (pending_fragment_ < 0) return;
  for (size_t i = 0; i < scratch_.size(); ++i) {
    dir.ReadTensors(backend_, generation, "stream-mean", {Scratch(i, pending_fragment_)});
  }
  pending_comm_s_ = state.value("stream_comm_s", 0.0);
  pending_wait_s_ = state.value("stream_wait_s", 0.0);
}

}  // namespace mavg
