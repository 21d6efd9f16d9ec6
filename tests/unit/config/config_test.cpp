// Config loading, overrides, validation messages, canonical JSON and run ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::ErrorOf;

#define EXPECT_ERROR_HAS(stmt, ...)                                                   \
  do {                                                                                \
    const std::string msg_ = ErrorOf([&] { stmt; });                                  \
    ASSERT_FALSE(msg_.empty()) << "no error from " #stmt;                             \
    for (const char* needle : {__VA_ARGS__}) {                                        \
      EXPECT_NE(msg_.find(needle), std::string::npos) << msg_ << " lacks " << needle; \
    }                                                                                 \
    EXPECT_EQ(msg_.find('\n'), std::string::npos) << "not one line: " << msg_;        \
  } while (0)

constexpr char kGood[] = R"(
data: {train: d/train, dev: d/dev, context: 5}
model:
  hidden_layers: 3
  hidden_dim: 256
  activation: tanh
optimizer: {minibatch: 128, momentum: 0.5}
schedule:
  type: newbob
  lr: 0.1
  newbob: {halving_factor: 0.7}
seed: 12
)";

TEST(Config, ParsesNestedKeysOverDefaults) {
  RunConfig c = ParseConfigYaml(kGood, "good.yaml");
  EXPECT_EQ(c.data.train, "d/train");
  EXPECT_EQ(c.data.context, 5);
  EXPECT_EQ(c.model.hidden_layers, 3);
  EXPECT_EQ(ToString(c.model.activation), "tanh");
  EXPECT_EQ(c.optimizer.minibatch, 128);
  EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.5);
  EXPECT_EQ(ToString(c.schedule.type), "newbob");
  EXPECT_DOUBLE_EQ(c.schedule.newbob.halving_factor, 0.7);
  EXPECT_DOUBLE_EQ(c.schedule.newbob.start_halving_impr, 0.01);  // default kept
  EXPECT_EQ(c.data.randomizer_size, 32768);
  EXPECT_EQ(c.seed, 12);
  EXPECT_NO_THROW(Validate(c, "good.yaml"));
}

TEST(Config, EmptyFileIsAllDefaults) {
  RunConfig c = ParseConfigYaml("", "empty.yaml");
  EXPECT_EQ(c.optimizer.minibatch, RunConfig{}.optimizer.minibatch);
}

TEST(Config, GarbledYamlNamesFileAndLine) {
  EXPECT_ERROR_HAS(ParseConfigYaml("data:\n  train: [a, b\nseed: 1\n", "bad.yaml"),
                   "bad.yaml:", "invalid YAML");
}

TEST(Config, DuplicateKeysAreErrorsNamingBothLines) {
  EXPECT_ERROR_HAS(ParseConfigYaml("seed: 1\ndevice: cpu\nseed: 2\n", "dup.yaml"),
                   "dup.yaml:3:1: duplicate key 'seed' (first at line 1:1)");
  EXPECT_ERROR_HAS(ParseConfigYaml("schedule:\n  lr: 0.1\n  type: newbob\n  lr: 0.2\n", "dup.yaml"),
                   "dup.yaml:4:3: duplicate key 'schedule.lr' (first at line 2:3)");
  EXPECT_ERROR_HAS(ParseConfigYaml("optimizer: {ngsgd: {rank_in: 3, rank_in: 4}}\n", "d.yaml"),
                   "duplicate key 'optimizer.ngsgd.rank_in'");
  // The same key in different mappings is fine.
  ParseConfigYaml("optimizer: {minibatch: 64}\npretrain: {rbm: {minibatch: 32}}\n", "ok.yaml");
}

// Configs end up in JSON run files, run ids and the database: bytes that are not UTF-8 are
// refused where they enter (a fuzzer found them crashing the JSON writer).
TEST(Config, InvalidUtf8IsRefusedWithItsPlace) {
  EXPECT_ERROR_HAS(ParseConfigYaml("seed: 1\ndata: {train: \"a\xFF\"}\n", "u.yaml"),
                   "u.yaml:2:17: not valid UTF-8 (byte 0xFF)");
  EXPECT_ERROR_HAS(ParseConfigYaml("\x80seed: 1\n", "u.yaml"), "u.yaml:1:1: not valid UTF-8");
  RunConfig c;
  EXPECT_ERROR_HAS(ApplyOverride(c, "data.train=dir\xC3"), "data.train",
                   "not valid UTF-8 (byte 0xC3 at offset 3)");
  ApplyOverride(c, "data.train=d\xC3\xA9j\xC3\xA0");  // "déjà": valid
  EXPECT_EQ(c.data.train, "d\xC3\xA9j\xC3\xA0");
}

TEST(Config, UnknownKeyNamesNearestValidKey) {
  EXPECT_ERROR_HAS(ParseConfigYaml("schedule:\n  lrr: 0.1\n", "c.yaml"), "c.yaml",
                   "unknown key 'schedule.lrr'", "did you mean 'schedule.lr'");
  EXPECT_ERROR_HAS(ParseConfigYaml("optimiser: {minibatch: 4}\n", "c.yaml"),
                   "did you mean 'optimizer'");
  EXPECT_ERROR_HAS(ParseConfigYaml("lr: 0.1\n", "c.yaml"), "did you mean 'schedule.lr'");
}

TEST(Config, WrongTypesAreReported) {
  EXPECT_ERROR_HAS(ParseConfigYaml("optimizer: {minibatch: many}\n", "c.yaml"),
                   "optimizer.minibatch", "integer", "many");
  EXPECT_ERROR_HAS(ParseConfigYaml("schedule: {lr: [1, 2]}\n", "c.yaml"), "schedule.lr", "list");
  EXPECT_ERROR_HAS(ParseConfigYaml("schedule: 3\n", "c.yaml"), "'schedule' is a section");
  EXPECT_ERROR_HAS(ParseConfigYaml("optimizer: {minibatch: 2.5}\n", "c.yaml"), "integer");
  EXPECT_ERROR_HAS(ParseConfigYaml("schedule: {lr: .nan}\n", "c.yaml"), "schedule.lr");
}

TEST(Config, EveryProblemIsReportedAtOnce) {
  const std::string msg =
      ErrorOf([] { ParseConfigYaml("seed: x\nfoo: 1\nmodel: {hidden_dim: y}\n", "c.yaml"); });
  EXPECT_NE(msg.find("3 problems"), std::string::npos) << msg;
}

TEST(Config, OutOfRangeValues) {
  RunConfig c = ParseConfigYaml(kGood, "c.yaml");
  c.optimizer.minibatch = 0;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "c.yaml", "optimizer.minibatch", "out of range");
  c = ParseConfigYaml(kGood, "c.yaml");
  c.schedule.lr = -0.1;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "schedule.lr", ">= 0");
  c = ParseConfigYaml(kGood, "c.yaml");
  c.data.context = -1;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "data.context");
  // A choice is an enum (config/choices.h): a text outside its table is refused where the
  // config is read, and a config can hold no other.
  c = ParseConfigYaml(kGood, "c.yaml");
  EXPECT_ERROR_HAS(SetKey(c, "model.activation", "swish"), "model.activation",
                   "'swish' is not one of", "sigmoid, tanh, relu");
  c = ParseConfigYaml(kGood, "c.yaml");
  c.data.train.clear();
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "data.train: required");
  c = ParseConfigYaml(kGood, "c.yaml");
  c.data.randomizer_size = 16;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "randomizer_size");
}

TEST(Config, OverridesUseTheSameKeys) {
  RunConfig c = ParseConfigYaml(kGood, "c.yaml");
  ApplyOverride(c, "schedule.lr=0.25");
  ApplyOverride(c, "model.activation=relu");
  ApplyOverride(c, "data.train='a b/train'");
  EXPECT_DOUBLE_EQ(c.schedule.lr, 0.25);
  EXPECT_EQ(ToString(c.model.activation), "relu");
  EXPECT_EQ(c.data.train, "a b/train");
  EXPECT_ERROR_HAS(ApplyOverride(c, "schedule.lrate=1"), "--set", "did you mean 'schedule.lr'");
  EXPECT_ERROR_HAS(ApplyOverride(c, "seed"), "key=value");
  EXPECT_ERROR_HAS(ApplyOverride(c, "seed=abc"), "seed", "integer");
}

TEST(Config, YamlDumpRoundTrips) {
  RunConfig c = ParseConfigYaml(kGood, "c.yaml");
  c.schedule.lr = 0.1 + 1e-12;  // needs every digit
  const std::string yaml = ToYaml(c);
  RunConfig back = ParseConfigYaml(yaml, "dump.yaml");
  EXPECT_EQ(CanonicalJson(back), CanonicalJson(c));
  EXPECT_EQ(ToJson(back), ToJson(c));
}

TEST(Config, RunIdIgnoresExecutionKnobsOnly) {
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");
  RunConfig b = a;
  b.device_options.threads = 7;
  EXPECT_EQ(RunId(a), RunId(b));
  b.schedule.lr *= 2;
  EXPECT_NE(RunId(a), RunId(b));
  EXPECT_EQ(RunId(a).size(), 16u);
  EXPECT_EQ(CanonicalJson(a).find("threads"), std::string::npos);
}

TEST(Config, RunIdLeavesOutSettingsTheConfigDoesNotUse) {
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");
  a.optimizer.type = OptimizerType::kSgd;
  a.model.init = ModelInit::kRandom;
  RunConfig b = a;
  b.optimizer.ngsgd.rank_in = 3;
  b.optimizer.max_change_per_sample = 1.0;
  b.pretrain.rbm.lr = 0.1;
  EXPECT_EQ(RunId(a), RunId(b)) << "ngsgd and rbm settings of an sgd, random-init run";
  EXPECT_EQ(CanonicalJson(a).find("pretrain"), std::string::npos);
  EXPECT_EQ(CanonicalJson(a).find("rank_in"), std::string::npos);
  a.optimizer.type = b.optimizer.type = OptimizerType::kNgsgd;
  a.model.init = b.model.init = ModelInit::kRbm;
  EXPECT_NE(RunId(a), RunId(b));
  b = a;
  b.optimizer.ngsgd.rank_in = 3;
  EXPECT_NE(RunId(a), RunId(b));
  b = a;
  b.pretrain.rbm.seed = 1;
  EXPECT_NE(RunId(a), RunId(b));
}

// Keys added after runs existed leave those runs' ids alone at their defaults; auto and the
// init scheme it resolves to are one run.
TEST(Config, RunIdOfLaterKeysAtTheirDefaults) {
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");  // tanh
  a.optimizer.type = OptimizerType::kNgsgd;
  const std::string canonical = CanonicalJson(a);
  EXPECT_EQ(canonical.find("eta_max"), std::string::npos) << canonical;
  EXPECT_EQ(canonical.find("max_change_mode"), std::string::npos) << canonical;
  RunConfig b = a;
  b.optimizer.ngsgd.max_change_mode = MaxChangeMode::kFork;
  EXPECT_NE(RunId(a), RunId(b));
  b = a;
  b.optimizer.ngsgd.eta_max = 1.0;
  EXPECT_NE(RunId(a), RunId(b));
  // tanh: auto is glorot.
  b = a;
  b.model.init_scheme = InitScheme::kGlorot;
  EXPECT_EQ(RunId(a), RunId(b));
  b.model.init_scheme = InitScheme::kNnet1;
  EXPECT_NE(RunId(a), RunId(b));
  // sigmoid: auto is nnet1, which stays out of the id.
  a.model.activation = b.model.activation = Activation::kSigmoid;
  a.model.init_scheme = InitScheme::kAuto;
  EXPECT_EQ(RunId(a), RunId(b));
  EXPECT_EQ(CanonicalJson(a).find("init_scheme"), std::string::npos);
  EXPECT_EQ(ToString(ResolvedInitScheme(a.model)), "nnet1");
  a.model.activation = Activation::kRelu;
  EXPECT_EQ(ToString(ResolvedInitScheme(a.model)), "he");
  // The canonical JSON (what the store keeps, and retries read back) gives the same run: a
  // relu or tanh run with the nnet1 scheme stays nnet1, auto stays what it resolved to.
  for (const char* activation : {"relu", "tanh", "sigmoid"}) {
    for (const char* scheme : {"auto", "nnet1", "he", "glorot"}) {
      RunConfig c = ParseConfigYaml(kGood, "c.yaml");
      SetKey(c, "model.activation", activation);
      SetKey(c, "model.init_scheme", scheme);
      const RunConfig back = ConfigFromJson(nlohmann::json::parse(CanonicalJson(c)), "db");
      EXPECT_EQ(RunId(back), RunId(c)) << activation << " " << scheme;
      EXPECT_EQ(ResolvedInitScheme(back.model), ResolvedInitScheme(c.model))
          << activation << " " << scheme;
    }
  }
}

// Adam's and the outer optimizer's keys: out of every id until used (the ids of runs made before
// them stay), in it when used; what does not fit is refused naming the key.
TEST(Config, AdamAndOuterOptimizerKeys) {
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");
  a.optimizer.type = OptimizerType::kSgd;
  a.optimizer.momentum = 0.0;
  a.parallel.workers = 4;
  const std::string canonical = CanonicalJson(a);
  EXPECT_EQ(canonical.find("adam"), std::string::npos) << canonical;
  EXPECT_EQ(canonical.find("outer"), std::string::npos) << canonical;
  RunConfig b = a;
  b.optimizer.adam.beta2 = 0.5;
  b.parallel.outer.lr = 0.1;
  EXPECT_EQ(RunId(a), RunId(b)) << "unused adam and outer settings";
  b.optimizer.type = OptimizerType::kAdam;
  RunConfig c = b;
  c.optimizer.adam.beta2 = 0.95;
  EXPECT_NE(RunId(b), RunId(c));
  b.parallel.outer.type = OuterType::kNesterov;
  c = b;
  c.parallel.outer.lr = 0.7;
  EXPECT_NE(RunId(b), RunId(c));
  EXPECT_NO_THROW(Validate(c, "c.yaml"));
  c.optimizer.momentum = 0.9;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "c.yaml", "optimizer.momentum: 0.9",
                   "optimizer.type adam has its own");
  c.optimizer.momentum = 0.0;
  c.optimizer.adam.weight_decay = 200;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "optimizer.adam.weight_decay: 200", "at least 1");
  // (the lr the workers step with: x N under the linear scaling)
  c.optimizer.adam.weight_decay = 0.9 / c.schedule.lr;
  c.parallel.lr_scaling = LrScaling::kNone;
  EXPECT_NO_THROW(Validate(c, "c.yaml"));
  c.parallel.lr_scaling = LrScaling::kLinear;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "optimizer.adam.weight_decay", "workers' lr");
  c.optimizer.adam.weight_decay = 0.1;
  c.parallel.algorithm = AveragingAlgorithm::kBmuf;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"),
                   "parallel.outer.type: nesterov with parallel.algorithm bmuf");
  c.parallel.algorithm = AveragingAlgorithm::kAverage;
  c.parallel.outer.lr = 0.0;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "parallel.outer.lr");
  c.parallel.outer.lr = 0.7;
  c.optimizer.type = OptimizerType::kNgsgd;
  c.parallel.average_momentum = true;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"),
                   "parallel.average_momentum: true is only for optimizer.type sgd or adam");
}

// parallel.optimizer_state: keep (left out of the run id, so runs made before the key keep
// theirs), average (average_momentum's newer spelling; not NG-SGD's statistics, not
// overlapped), reset (any optimizer).
TEST(Config, OptimizerStatePolicyKey) {
  RunConfig c = ParseConfigYaml(kGood, "c.yaml");
  c.parallel.workers = 4;
  const std::string id = RunId(c);
  ApplyOverride(c, "parallel.optimizer_state=keep");
  EXPECT_EQ(RunId(c), id);
  EXPECT_ERROR_HAS(ApplyOverride(c, "parallel.optimizer_state=mean"), "parallel.optimizer_state",
                   "keep", "average", "reset");
  ApplyOverride(c, "parallel.optimizer_state=reset");
  EXPECT_NE(RunId(c), id);
  c.optimizer.momentum = 0.5;  // (the file's; SGD without momentum keeps no state, below)
  Validate(c, "c.yaml");
  c.optimizer.type = OptimizerType::kNgsgd;
  c.optimizer.momentum = 0.0;
  Validate(c, "c.yaml");  // clearing NG-SGD's statistics is allowed
  c.parallel.optimizer_state = OptimizerStatePolicy::kAverage;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"),
                   "parallel.optimizer_state: average is only for optimizer.type sgd or adam");
  c.optimizer.type = OptimizerType::kSgd;
  c.optimizer.momentum = 0.5;
  Validate(c, "c.yaml");
  c.parallel.overlap = true;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "parallel.overlap", "optimizer_state average");
  c.parallel.overlap = false;
  c.parallel.average_momentum = true;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "parallel.average_momentum: true is the older spelling",
                   "set one of them");
  c.parallel.optimizer_state = OptimizerStatePolicy::kKeep;
  Validate(c, "c.yaml");
  // A policy for state the optimizer does not have: SGD without momentum keeps none.
  c.parallel.average_momentum = false;
  c.optimizer.momentum = 0.0;
  for (const char* policy : {"average", "reset"}) {
    ApplyOverride(c, std::string("parallel.optimizer_state=") + policy);
    const std::string expected = std::string("parallel.optimizer_state: ") + policy +
                                 ": optimizer.type sgd with optimizer.momentum 0 keeps no state";
    EXPECT_ERROR_HAS(Validate(c, "c.yaml"), expected.c_str());
  }
}

TEST(Config, GpuKeysAreCheckedAgainstTheDeviceAndMode) {
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");
  RunConfig b = a;
  b.parallel.comm = CommChoice::kNccl;
  EXPECT_ERROR_HAS(Validate(b, "c.yaml"), "c.yaml", "parallel.comm", "device: cuda",
                   "parallel.mode: mpi");
  b.device = Device::kCuda;
  b.parallel.mode = ParallelMode::kMpi;
  Validate(b, "c.yaml");
  b.parallel.deterministic = true;
  EXPECT_ERROR_HAS(Validate(b, "c.yaml"), "parallel.deterministic", "parallel.comm: mpi");
  RunConfig t = a;
  t.device_options.tf32 = true;
  EXPECT_ERROR_HAS(Validate(t, "c.yaml"), "device_options.tf32", "device: cuda");
  // TF32 changes the numbers: part of the run id when on, left out at its default.
  RunConfig c = a, d = a;
  c.device = d.device = Device::kCuda;
  d.device_options.tf32 = true;
  EXPECT_NE(RunId(c), RunId(d));
  EXPECT_EQ(CanonicalJson(c).find("tf32"), std::string::npos);
  RunConfig e = c;
  e.parallel.comm = CommChoice::kNccl;
  EXPECT_EQ(RunId(c), RunId(e));
}

TEST(Config, LayerSizesAreCheckedWithoutOverflow) {
  RunConfig c = ParseConfigYaml(kGood, "c.yaml");
  c.model.hidden_dim = 2147483647;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "c.yaml", "model.hidden_dim: 2147483647",
                   "at most 2^31 - 1");
  c.model.hidden_dim = 40000;  // 1.6e9 elements: fine
  Validate(c, "c.yaml");
  c.model.num_outputs = 60000;
  EXPECT_ERROR_HAS(Validate(c, "c.yaml"), "model.num_outputs 60000", "output layer");
}

TEST(Config, ReferenceListsEveryKeyWithDefault) {
  const std::string ref = ConfigReferenceMarkdown();
  for (const KeySpec& k : ConfigKeys()) {
    EXPECT_NE(ref.find("`" + k.path + "`"), std::string::npos) << k.path;
    EXPECT_FALSE(k.doc.empty()) << k.path;
  }
  EXPECT_NE(ref.find("| `optimizer.minibatch` | integer, >= 1, <= 1048576 | `256` |"),
            std::string::npos);
}

TEST(Config, MissingOrDirectoryConfigFile) {
  testing::TempDir tmp;
  EXPECT_ERROR_HAS(LoadConfigFile(tmp.File("none.yaml")), "none.yaml", "not found");
  EXPECT_ERROR_HAS(LoadConfigFile(tmp.Path()), "is a directory");
}

}  // namespace
}  // namespace mavg

namespace mavg {
namespace {

// Validation decides, not the run: every numeric key has a documented range (both ends), so a
// value a run cannot use is refused naming its key before anything starts. The issue's example:
// an NG-SGD epsilon of 1e308 made the eigendecomposition fail deep in a run.
TEST(ConfigRanges, EveryNumericKeyHasBothEnds) {
  for (const KeySpec& k : ConfigKeys()) {
    if (k.type != ValueType::kInt && k.type != ValueType::kFloat) continue;
    EXPECT_TRUE(k.has_min && k.has_max) << k.path << " has no complete range";
    if (k.has_min && k.has_max) {
      EXPECT_LE(k.min, k.max) << k.path;
    }
  }
  const std::string reference = ConfigReferenceMarkdown();
  EXPECT_NE(reference.find("| `optimizer.ngsgd.epsilon` | number, > 0, <= 1 |"), std::string::npos);
}

TEST(ConfigRanges, OutOfRangeValuesNameTheirKey) {
  for (const char* set :
       {"optimizer.ngsgd.epsilon=1e308", "optimizer.ngsgd.delta=5", "model.hidden_dim=100000000",
        "schedule.lr=1e30", "pretrain.rbm.seed=1e19"}) {
    RunConfig c;
    c.data.train = "x";
    c.data.dev = "y";
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    try {
      ApplyOverride(c, set);
      Validate(c, "test");
      ADD_FAILURE() << set << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace mavg

namespace mavg {
namespace {

// How each key enters the run id is declared with the key, and said where users read it: the
// reference's "run id" column and `config check`'s summary; one worker's runs that differ only
// in averaging settings share a TrainingKey (the same model) but not a run id.
TEST(Config, IdentityRulesAreDeclaredWithTheKeys) {
  std::map<std::string, std::string> rule;
  for (const KeySpec& k : ConfigKeys()) rule[k.path] = k.identity_rule;
  EXPECT_EQ(rule.at("schedule.lr"), "always");
  EXPECT_EQ(rule.at("device_options.threads"), "never");
  EXPECT_EQ(rule.at("pretrain.rbm.lr"), "when model.init is rbm");
  EXPECT_EQ(rule.at("decode.allow_partial"), "unless true");
  EXPECT_EQ(rule.at("optimizer.ngsgd.eta_max"), "when optimizer.type is ngsgd, unless 0.9");
  EXPECT_NE(ConfigReferenceMarkdown().find("| `decode.allow_partial` | boolean | `true` | unless "
                                           "true |"),
            std::string::npos);
  RunConfig a = ParseConfigYaml(kGood, "c.yaml");
  RunConfig b = a;
  b.decode.allow_partial = false;  // the rule before it was the default: another run
  EXPECT_NE(RunId(a), RunId(b));
  const IdentitySummary s = SummarizeIdentity(a);
  EXPECT_EQ(s.in.size() + s.left_out.size(), ConfigKeys().size());
  EXPECT_NE(std::find(s.left_out.begin(), s.left_out.end(),
                      std::pair<std::string, std::string>{"device_options.threads", "never"}),
            s.left_out.end());
  EXPECT_NE(std::find(s.in.begin(), s.in.end(), "schedule.lr"), s.in.end());
  // One worker: averaging settings change nothing it trains.
  a.parallel.workers = b.parallel.workers = 1;
  b = a;
  b.parallel.average_every = 50;
  EXPECT_NE(RunId(a), RunId(b));
  EXPECT_EQ(TrainingKey(a), TrainingKey(b));
  a.parallel.workers = b.parallel.workers = 2;
  EXPECT_NE(TrainingKey(a), TrainingKey(b));
}

}  // namespace
}  // namespace mavg
