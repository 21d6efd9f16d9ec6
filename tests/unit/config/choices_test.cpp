// The config's choices are enums (config/choices.h): the schema offers exactly each enum's texts,
// a text outside them is refused where the config is read (file and line, --set, the store's
// JSON), and the texts are what the canonical JSON, YAML and run ids hold.
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine/config/schema.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

std::string ChoiceErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigChoices, EveryChoiceKeyOffersItsEnumsTexts) {
  const std::map<std::string, std::string> expected = {
      {"data.cmvn", EnumNames<Cmvn>()},
      {"model.activation", EnumNames<Activation>()},
      {"model.init", EnumNames<ModelInit>()},
      {"model.init_scheme", EnumNames<InitScheme>()},
      {"optimizer.type", EnumNames<OptimizerType>()},
      {"optimizer.ngsgd.max_change_mode", EnumNames<MaxChangeMode>()},
      {"optimizer.ngsgd.rank_cap", EnumNames<RankCap>()},
      {"schedule.type", EnumNames<ScheduleType>()},
      {"parallel.mode", EnumNames<ParallelMode>()},
      {"parallel.lr_scaling", EnumNames<LrScaling>()},
      {"parallel.algorithm", EnumNames<AveragingAlgorithm>()},
      {"parallel.outer.type", EnumNames<OuterType>()},
      {"parallel.optimizer_state", EnumNames<OptimizerStatePolicy>()},
      {"parallel.combine.policy", EnumNames<CombinePolicyType>()},
      {"parallel.compress.format", EnumNames<DeltaFormat>()},
      {"parallel.stream.pattern", EnumNames<FragmentPattern>()},
      {"parallel.comm", EnumNames<CommChoice>()},
      {"device", EnumNames<Device>()},
  };
  int choices = 0;
  for (const KeySpec& k : ConfigKeys()) {
    if (k.choices.empty()) continue;
    ++choices;
    ASSERT_TRUE(expected.count(k.path)) << k.path << " is a choice without an enum here";
    EXPECT_EQ(fmt::format("{}", fmt::join(k.choices, ", ")), expected.at(k.path)) << k.path;
  }
  EXPECT_EQ(choices, static_cast<int>(expected.size()));
}

TEST(ConfigChoices, ATextOutsideTheTableIsRefusedWhereItIsRead) {
  EXPECT_EQ(ChoiceErrorOf([] { ParseConfigYaml("model:\n  activation: swish\n", "c.yaml"); }),
            "c.yaml: line 2: model.activation: 'swish' is not one of: sigmoid, tanh, relu");
  EXPECT_EQ(ChoiceErrorOf([] { ParseConfigYaml("parallel: {mode: }\n", "c.yaml"); }),
            "c.yaml: line 1: key 'parallel.mode' has no value");
  RunConfig c;
  EXPECT_EQ(ChoiceErrorOf([&] { ApplyOverride(c, "parallel.mode=MPI"); }),
            "--set parallel.mode=MPI: parallel.mode: 'MPI' is not one of: simulated, mpi");
  EXPECT_EQ(ChoiceErrorOf([] {
              ConfigFromJson({{"device", {{"x", 1}}}}, "db run 7");
            }).rfind("db run 7: device: ", 0),
            0u);
  EXPECT_EQ(c.parallel.mode, ParallelMode::kSimulated) << "a refused text changes nothing";
}

TEST(ConfigChoices, TextsAreWhatFilesAndIdsHold) {
  RunConfig c;
  c.data.train = "t", c.data.dev = "d";
  c.optimizer.type = OptimizerType::kNgsgd;
  c.optimizer.momentum = 0.0;
  c.optimizer.ngsgd.max_change_mode = MaxChangeMode::kFork;
  c.optimizer.ngsgd.rank_cap = RankCap::kNnet2;
  c.schedule.type = ScheduleType::kNewbob;
  c.parallel.algorithm = AveragingAlgorithm::kBmuf;
  c.parallel.lr_scaling = LrScaling::kNone;
  c.data.cmvn = Cmvn::kNone;
  c.model.activation = Activation::kTanh;
  const nlohmann::json canonical = nlohmann::json::parse(CanonicalJson(c));
  EXPECT_EQ(canonical["optimizer"]["type"], "ngsgd");
  EXPECT_EQ(canonical["optimizer"]["ngsgd"]["max_change_mode"], "fork");
  EXPECT_EQ(canonical["optimizer"]["ngsgd"]["rank_cap"], "nnet2");
  EXPECT_EQ(canonical["schedule"]["type"], "newbob");
  EXPECT_EQ(canonical["parallel"]["algorithm"], "bmuf");
  EXPECT_EQ(canonical["model"]["init_scheme"], "glorot") << "auto resolved for tanh";
  const RunConfig back = ParseConfigYaml(ToYaml(c), "dump.yaml");
  EXPECT_EQ(RunId(back), RunId(c));
  EXPECT_NE(ToYaml(c).find("lr_scaling: none"), std::string::npos);
  const ResolvedRun run = ResolveRun(c, "c.yaml");
  EXPECT_EQ(run.run_id, RunId(c)) << "resolved once, the same identity";
}

}  // namespace
}  // namespace mavg
