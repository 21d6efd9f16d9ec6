#include "engine/train/averager.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/train/stream_schedule.h"

namespace mavg {

AveragerOptions AveragerOptionsFrom(const ParallelConfig& parallel, int world_size) {
  AveragerOptions o;
  o.bmuf = parallel.algorithm == AveragingAlgorithm::kBmuf;
  const double eta =
      parallel.bmuf.block_momentum < 0 ? 1.0 - 1.0 / world_size : parallel.bmuf.block_momentum;
  o.block_momentum = static_cast<float>(eta);
  o.block_lr = static_cast<float>(parallel.bmuf.block_lr);
  o.nesterov = parallel.bmuf.nesterov;
  o.overlap = parallel.overlap;
  if (parallel.average_every_global > 0) {
    o.global_every = parallel.average_every_global / parallel.average_every;
  }
  o.optimizer_state =
      parallel.average_momentum ? OptimizerStatePolicy::kAverage : parallel.optimizer_state;
  const OuterConfig& outer = parallel.outer;
  if (outer.type == OuterType::kNesterov || outer.type == OuterType::kMomentum) {
    o.bmuf = true;  // the same step (combine_filter.h), named as DiLoCo names it
    o.block_momentum = static_cast<float>(outer.momentum);
    o.block_lr = static_cast<float>(outer.lr);
    o.nesterov = outer.type == OuterType::kNesterov;
    o.model_is_start = true;
  } else if (outer.type == OuterType::kAdam) {
    o.outer_adam = true;
    o.outer_lr = outer.lr, o.outer_beta1 = outer.momentum;
    o.outer_beta2 = outer.beta2, o.outer_epsilon = outer.epsilon;
  }
  o.compress = parallel.compress.format;
  o.compress_block = parallel.compress.block;
  o.error_feedback = parallel.compress.error_feedback;
  return o;
}

namespace {

// The tensors a combine averages: the parameters, with optimizer_state average the optimizer
// state too.
TensorsOf CombinedTensors(bool average_state) {
  return [average_state](Worker& w) {
    std::vector<MatrixView> v = {w.params};
    if (average_state) {
      for (MatrixView s : w.optimizer->State()) v.push_back(s);
    }
    return v;
  };
}

}  // namespace

Averager::Averager(Backend& backend, WorkerGroup& group, const AveragerOptions& options,
                   int64_t num_params)
    : backend_(backend),
      group_(group),
      clear_state_(options.optimizer_state == OptimizerStatePolicy::kReset) {
  MAVG_CHECK(options.global_every >= 1, "global combines every {} combine points",
             options.global_every);
  // A world of one is never combined (Combine returns at once): stateless parts.
  const bool many = group.WorldSize() > 1;
  const FilterMaker make_filter = [&backend, &options, many](int64_t size) {
    std::unique_ptr<CombineFilter> filter;
    if (many && options.outer_adam) {
      filter = std::make_unique<AdamOuterFilter>(backend, options.outer_lr, options.outer_beta1,
                                                 options.outer_beta2, options.outer_epsilon, size);
    } else if (many && options.bmuf) {
      filter = std::make_unique<BmufFilter>(backend, options.block_momentum, options.block_lr,
                                            options.nesterov, size, options.model_is_start);
    } else {
      filter = std::make_unique<IdentityFilter>();
    }
    return filter;
  };
  if (many && !options.stream_layers.empty()) {
    MAVG_CHECK(!options.overlap && options.global_every == 1 &&
                   options.optimizer_state != OptimizerStatePolicy::kAverage,
               "streaming goes with a flat schedule of the parameters only");
    StreamOptions stream;
    std::vector<int64_t> sizes = options.tensor_sizes;
    stream.fragments = FragmentsOfLayers(options.stream_layers, sizes);
    stream.overlap_steps = options.stream_overlap_steps;
    stream.mix = options.stream_mix;
    stream.compress = options.compress;
    stream.compress_block = options.compress_block;
    stream.error_feedback = options.error_feedback;
    filter_ = std::make_unique<IdentityFilter>();  // each fragment has its own
    tensors_ = CombinedTensors(false);
    schedule_ = std::make_unique<StreamSchedule>(backend, group, std::move(stream), make_filter);
    return;
  }
  filter_ = make_filter(num_params);
  tensors_ = CombinedTensors(options.optimizer_state == OptimizerStatePolicy::kAverage);
  const TensorsOf& tensors = tensors_;
  if (many && options.compress != DeltaFormat::kFp32) {
    MAVG_CHECK(!options.overlap && options.global_every == 1 &&
                   options.optimizer_state != OptimizerStatePolicy::kAverage,
               "compressed deltas go with a synchronous flat schedule of the parameters only");
    std::vector<int64_t> sizes = options.tensor_sizes;
    if (sizes.empty()) sizes = {num_params};
    exchange_ = std::make_unique<DeltaExchange>(
        backend, group, DeltaCodec(options.compress, options.compress_block, std::move(sizes)),
        options.error_feedback);
  }
  if (many && options.overlap) {
    schedule_ = std::make_unique<OverlappedSchedule>(backend, group, *filter_, tensors, num_params);
  } else {
    schedule_ =
        std::make_unique<SynchronousSchedule>(backend, group, *filter_, tensors, exchange_.get());
  }
  if (many && options.global_every > 1) {
    schedule_ = std::make_unique<TwoLevelSchedule>(group, tensors, options.global_every,
                                                   std::move(schedule_));
  }
}

void Averager::Reset() {
  tally_.agree = true;
  schedule_->Reset();
  filter_->Reset(group_.Workers()[0].params);
  if (exchange_) exchange_->SetAnchor(true);
}

int64_t Averager::PayloadBytes() {
  if (group_.WorldSize() == 1) return 0;
  if (exchange_) return exchange_->PayloadBytes();
  int64_t floats = 0;
  for (MatrixView v : tensors_(group_.Workers()[0])) floats += v.Size();
  return floats * static_cast<int64_t>(sizeof(float));
}

MatrixView Averager::Model() {
  if (Matrix* model = filter_->Model()) return *model;
  return group_.Workers()[0].params;
}

void Averager::BeginEpoch() {
  tally_.projected_s = 0.0;
  if (const Matrix* start = filter_->EpochStart()) {
    for (Worker& w : group_.Workers()) backend_.Copy(*start, w.params);
  }
  schedule_->BeginEpoch();
  if (exchange_) exchange_->SetAnchor(false);
}

int64_t Averager::Exchanges(int64_t points) const {
  return group_.WorldSize() == 1 ? 0 : schedule_->Exchanges(points);
}

int64_t Averager::Bytes(int64_t points) {
  return group_.WorldSize() == 1 ? 0 : schedule_->Bytes(points, PayloadBytes());
}

int64_t Averager::BytesReceived(int64_t points) {
  if (group_.WorldSize() == 1) return 0;
  // A gather brings every other worker's payload; a mean, one of them.
  const int64_t others = exchange_ ? group_.WorldSize() - 1 : 1;
  return schedule_->BytesReceived(points, PayloadBytes() * others);
}

StopFlags Averager::Combine(int64_t index, int64_t total, std::span<double> stop_flags) {
  if (group_.WorldSize() == 1) return StopFlags::kAgreed;  // one worker: one process
  double slowest = 0.0;
  for (Worker& w : group_.Workers()) {
    slowest = std::max(slowest, w.stats.interval_s);
    w.stats.interval_s = 0.0;
  }
  tally_.stop_flags = stop_flags;
  tally_.stop_flags_agreed = false;
  tally_.stop_check = true;
  schedule_->Combine(index, total, slowest, tally_);
  tally_.stop_flags = {};
  if (clear_state_ && tally_.stop_check) {
    for (Worker& w : group_.Workers()) w.optimizer->ClearState();
  }
  if (!tally_.stop_check) return StopFlags::kNotChecked;
  return tally_.stop_flags_agreed ? StopFlags::kAgreed : StopFlags::kLocal;
}

nlohmann::json Averager::Save(const CheckpointDir& dir, int64_t generation, bool root) {
  nlohmann::json state = {{"agree", tally_.agree}, {"pending", schedule_->Pending()}};
  filter_->Save(dir, generation, root);
  schedule_->Save(dir, generation, root, state);
  if (exchange_) exchange_->Save(dir, generation, root);
  return state;
}

void Averager::Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) {
  tally_.agree = state.value("agree", true);
  filter_->Load(dir, generation);
  schedule_->Load(dir, generation, state);
  if (exchange_) exchange_->Load(dir, generation);
}

}  // namespace mavg
