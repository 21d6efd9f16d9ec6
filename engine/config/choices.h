#pragma once
// The config's choices as enums, each with its one text table (core/enum_text.h). The texts are
// what config files, `--set`, the canonical JSON behind run ids and the database hold: never
// change one. A choice is decided where the config is read (config/schema.cpp) and compared as
// an enum everywhere after.

#include "engine/core/enum_text.h"

namespace mavg {

// data.cmvn
enum class Cmvn { kGlobal, kSpeaker, kNone };
inline constexpr EnumText<Cmvn> kCmvnTexts[] = {
    {Cmvn::kGlobal, "global"}, {Cmvn::kSpeaker, "speaker"}, {Cmvn::kNone, "none"}};
MAVG_ENUM_TEXTS(Cmvn, kCmvnTexts)

// model.activation: the hidden non-linearity.
enum class Activation { kSigmoid, kTanh, kRelu };
inline constexpr EnumText<Activation> kActivationTexts[] = {
    {Activation::kSigmoid, "sigmoid"}, {Activation::kTanh, "tanh"}, {Activation::kRelu, "relu"}};
MAVG_ENUM_TEXTS(Activation, kActivationTexts)

// model.init
enum class ModelInit { kRandom, kRbm };
inline constexpr EnumText<ModelInit> kModelInitTexts[] = {{ModelInit::kRandom, "random"},
                                                          {ModelInit::kRbm, "rbm"}};
MAVG_ENUM_TEXTS(ModelInit, kModelInitTexts)

// model.init_scheme: the scale of random weights (nn/init.h); kAuto is resolved from the
// activation before a network is initialised (ResolvedInitScheme).
enum class InitScheme { kAuto, kNnet1, kHe, kGlorot };
inline constexpr EnumText<InitScheme> kInitSchemeTexts[] = {{InitScheme::kAuto, "auto"},
                                                            {InitScheme::kNnet1, "nnet1"},
                                                            {InitScheme::kHe, "he"},
                                                            {InitScheme::kGlorot, "glorot"}};
MAVG_ENUM_TEXTS(InitScheme, kInitSchemeTexts)

// optimizer.type
enum class OptimizerType { kSgd, kNgsgd, kAdam };
inline constexpr EnumText<OptimizerType> kOptimizerTypeTexts[] = {
    {OptimizerType::kSgd, "sgd"}, {OptimizerType::kNgsgd, "ngsgd"}, {OptimizerType::kAdam, "adam"}};
MAVG_ENUM_TEXTS(OptimizerType, kOptimizerTypeTexts)

// optimizer.ngsgd.max_change_mode: whether the max-change bound includes the learning rate
// (nnet2) or not (the authors' fork).
enum class MaxChangeMode { kNnet2, kFork };
inline constexpr EnumText<MaxChangeMode> kMaxChangeModeTexts[] = {{MaxChangeMode::kNnet2, "nnet2"},
                                                                  {MaxChangeMode::kFork, "fork"}};
MAVG_ENUM_TEXTS(MaxChangeMode, kMaxChangeModeTexts)

// optimizer.ngsgd.rank_cap: the largest rank for a dimension D, (D + 1) / 2 or D - 1.
enum class RankCap { kNnet3, kNnet2 };
inline constexpr EnumText<RankCap> kRankCapTexts[] = {{RankCap::kNnet3, "nnet3"},
                                                      {RankCap::kNnet2, "nnet2"}};
MAVG_ENUM_TEXTS(RankCap, kRankCapTexts)

// schedule.type
enum class ScheduleType { kExponential, kNewbob, kConstant };
inline constexpr EnumText<ScheduleType> kScheduleTypeTexts[] = {
    {ScheduleType::kExponential, "exponential"},
    {ScheduleType::kNewbob, "newbob"},
    {ScheduleType::kConstant, "constant"}};
MAVG_ENUM_TEXTS(ScheduleType, kScheduleTypeTexts)

// parallel.mode: N replicas in one process, or one MPI rank per worker.
enum class ParallelMode { kSimulated, kMpi };
inline constexpr EnumText<ParallelMode> kParallelModeTexts[] = {
    {ParallelMode::kSimulated, "simulated"}, {ParallelMode::kMpi, "mpi"}};
MAVG_ENUM_TEXTS(ParallelMode, kParallelModeTexts)

// parallel.lr_scaling
enum class LrScaling { kLinear, kNone };
inline constexpr EnumText<LrScaling> kLrScalingTexts[] = {{LrScaling::kLinear, "linear"},
                                                          {LrScaling::kNone, "none"}};
MAVG_ENUM_TEXTS(LrScaling, kLrScalingTexts)

// parallel.combine.policy: engine/config/combine_config.h, with its keys and checks.

// parallel.outer.type: engine/config/outer_config.h, with its keys and checks.

// parallel.optimizer_state: what a combine does with each worker's optimizer state.
enum class OptimizerStatePolicy { kKeep, kAverage, kReset };
inline constexpr EnumText<OptimizerStatePolicy> kOptimizerStatePolicyTexts[] = {
    {OptimizerStatePolicy::kKeep, "keep"},
    {OptimizerStatePolicy::kAverage, "average"},
    {OptimizerStatePolicy::kReset, "reset"}};
MAVG_ENUM_TEXTS(OptimizerStatePolicy, kOptimizerStatePolicyTexts)

// parallel.algorithm: engine/config/averaging_config.h, with BMUF's keys and checks.

// parallel.comm: how MPI ranks sum, host-staged (mpi) or device to device (nccl).
enum class CommChoice { kMpi, kNccl };
inline constexpr EnumText<CommChoice> kCommChoiceTexts[] = {{CommChoice::kMpi, "mpi"},
                                                            {CommChoice::kNccl, "nccl"}};
MAVG_ENUM_TEXTS(CommChoice, kCommChoiceTexts)

// device
enum class Device { kCpu, kCuda };
inline constexpr EnumText<Device> kDeviceTexts[] = {{Device::kCpu, "cpu"}, {Device::kCuda, "cuda"}};
MAVG_ENUM_TEXTS(Device, kDeviceTexts)

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::Cmvn);
MAVG_ENUM_FORMATTER(mavg::Activation);
MAVG_ENUM_FORMATTER(mavg::ModelInit);
MAVG_ENUM_FORMATTER(mavg::InitScheme);
MAVG_ENUM_FORMATTER(mavg::OptimizerType);
MAVG_ENUM_FORMATTER(mavg::MaxChangeMode);
MAVG_ENUM_FORMATTER(mavg::RankCap);
MAVG_ENUM_FORMATTER(mavg::ScheduleType);
MAVG_ENUM_FORMATTER(mavg::ParallelMode);
MAVG_ENUM_FORMATTER(mavg::LrScaling);
MAVG_ENUM_FORMATTER(mavg::OptimizerStatePolicy);
MAVG_ENUM_FORMATTER(mavg::CommChoice);
MAVG_ENUM_FORMATTER(mavg::Device);
