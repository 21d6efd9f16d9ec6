// DBN pretraining end to end on a small in-memory data set, the stack file, and the cache of
// stacks shared between runs (key, hit, one pretraining under concurrency).
#include "engine/pretrain/dbn.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "engine/config/schema.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/data/data_identity.h"
#include "engine/data/minibatch.h"
#include "engine/pretrain/stack_cache.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

Dataset SmallData() {
  Dataset d;
  d.source = "memory";
  d.dim = 3;
  Rng rng(5);
  for (int u = 0; u < 20; ++u) {
    std::vector<float> f(static_cast<size_t>(50 * 3));
    for (size_t k = 0; k < f.size(); ++k) {
      f[k] = static_cast<float>(rng.Gaussian() + ((k / 3) % 10 < 5 ? 1.0 : -1.0));
    }
    d.Append("utt" + std::to_string(u), f.data(), 50, nullptr);
  }
  return d;
}

DbnOptions SmallOptions() {
  DbnOptions o;
  o.context = 1;
  o.randomizer_size = 256;
  o.rbm.minibatch = 20;
  o.rbm.momentum_step_period = 200;  // the schedule moves within the 1000 frames of an epoch
  o.rbm.momentum_steps = 4;
  return o;
}

TEST(Dbn, PretrainsEveryLayerAndReportsEachEpoch) {
  auto backend = testing::MakeBackend("cpu");
  const Dataset data = SmallData();
  std::vector<nlohmann::json> records;
  const Dbn dbn = PretrainDbn(*backend, data, {8, 6}, SmallOptions(),
                              [&](const nlohmann::json& r) { records.push_back(r); });
  ASSERT_EQ(dbn.layers.size(), 2u);
  EXPECT_EQ(dbn.layers[0].visible, 9);
  EXPECT_EQ(dbn.layers[0].hidden, 8);
  EXPECT_EQ(dbn.layers[1].visible, 8);
  EXPECT_EQ(dbn.layers[1].weights.size(), 48u);
  ASSERT_EQ(records.size(), 3u);  // Gaussian layer: 2 epochs; Bernoulli: 1
  EXPECT_EQ(records[0]["units"], "gaussian-bernoulli");
  EXPECT_EQ(records[1]["epoch"], 2);
  EXPECT_EQ(records[2]["units"], "bernoulli-bernoulli");
  for (const auto& r : records) {
    EXPECT_EQ(r["frames"], 1000);
    EXPECT_GT(r["recon_mse"].get<double>(), 0.0);
  }
  // The momentum schedule: 0.5 + 4 steps of 0.1 over 1000 frames, lr x (1 - momentum).
  EXPECT_NEAR(records[1]["scheduled_momentum"].get<double>(), 0.9, 1e-9);
  EXPECT_NEAR(records[1]["lr"].get<double>(), 0.01 * 0.1, 1e-9);
  EXPECT_EQ(records[0]["momentum"], 0.9);  // Kaldi's with_bug default

  // Deterministic for a seed; another seed gives another stack.
  const Dbn again = PretrainDbn(*backend, data, {8, 6}, SmallOptions(), nullptr);
  EXPECT_EQ(again.layers[1].weights, dbn.layers[1].weights);
  DbnOptions other = SmallOptions();
  other.rbm.seed = 1;
  EXPECT_NE(PretrainDbn(*backend, data, {8, 6}, other, nullptr).layers[0].weights,
            dbn.layers[0].weights);
}

TEST(Dbn, MomentumScheduleAsKaldi) {
  // 40 steps of 200 frames: the epochs end inside the ramp. The last minibatch of layer 1's
  // first epoch starts after 980 frames (step 4), of its second after 1980 (step 9).
  auto backend = testing::MakeBackend("cpu");
  DbnOptions o = SmallOptions();
  o.rbm.momentum_steps = 40;
  o.rbm.momentum_bug = false;
  std::vector<nlohmann::json> r;
  PretrainDbn(*backend, SmallData(), {4, 3}, o, [&](const nlohmann::json& x) { r.push_back(x); });
  ASSERT_EQ(r.size(), 3u);
  EXPECT_NEAR(r[0]["scheduled_momentum"].get<double>(), 0.54, 1e-12);
  EXPECT_NEAR(r[0]["momentum"].get<double>(), 0.54, 1e-12);  // without Kaldi's bug
  EXPECT_FLOAT_EQ(r[0]["lr"].get<double>(), 0.01 * 0.46);    // a float on the device
  EXPECT_NEAR(r[1]["scheduled_momentum"].get<double>(), 0.59, 1e-12);
  EXPECT_NEAR(r[2]["scheduled_momentum"].get<double>(), 0.54, 1e-12);  // per layer
  EXPECT_FLOAT_EQ(r[2]["lr"].get<double>(), 0.4 * 0.46);
}

TEST(Dbn, MomentumRampScaledToTheCorpus) {
  RbmConfig o;  // Kaldi's: 40 steps of 500,000 frames
  EXPECT_EQ(MomentumStepPeriod(o, 363000), 500000) << "the rule off: the period as given";
  // Kaldi's ramp spans 20 M of the 108 M frames of an epoch of its 300 h recipe; the same
  // fraction of 108 M frames gives Kaldi's period back.
  o.momentum_ramp_fraction = 20.0 / 108.0;
  EXPECT_EQ(MomentumStepPeriod(o, 108000000), 500000);
  // A corpus of 363,000 frames: 20/108 x 363,000 / 40 = 1680.6 frames a step.
  const int64_t frames = 363000;
  const int64_t period = MomentumStepPeriod(o, frames);
  EXPECT_EQ(period, 1681);
  // The momentum reaches momentum_max once the fraction of the frames has passed (to within
  // the rounding of the period), not before.
  const int64_t ramp = o.momentum_steps * period;
  EXPECT_NEAR(static_cast<double>(ramp), o.momentum_ramp_fraction * frames, o.momentum_steps);
  EXPECT_LT(ScheduledMomentum(o, (ramp - 1) / period), o.momentum_max - 1e-3);
  EXPECT_DOUBLE_EQ(ScheduledMomentum(o, ramp / period), o.momentum_max);
  EXPECT_DOUBLE_EQ(ScheduledMomentum(o, (frames - 1) / period), o.momentum_max);
  o.momentum_ramp_fraction = 1e-9;
  EXPECT_EQ(MomentumStepPeriod(o, frames), 1) << "at least a frame a step";

  // In pretraining: 1000 frames an epoch, 4 steps over twice that (period 500). The last
  // minibatch of the Gaussian layer's first epoch starts after 980 frames (step 1), of its second
  // after 1980 (step 3); the Bernoulli layer's single epoch ends at step 1.
  auto backend = testing::MakeBackend("cpu");
  DbnOptions d = SmallOptions();
  d.rbm.momentum_bug = false;
  d.rbm.momentum_step_period = 1;  // overridden by the rule
  d.rbm.momentum_ramp_fraction = 2.0;
  std::vector<nlohmann::json> r;
  PretrainDbn(*backend, SmallData(), {4, 3}, d, [&](const nlohmann::json& x) { r.push_back(x); });
  ASSERT_EQ(r.size(), 3u);
  EXPECT_NEAR(r[0]["scheduled_momentum"].get<double>(), 0.6, 1e-12);
  EXPECT_NEAR(r[1]["scheduled_momentum"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(r[2]["scheduled_momentum"].get<double>(), 0.6, 1e-12);
  // Half an epoch: momentum_max well before the end of each layer's first epoch.
  d.rbm.momentum_ramp_fraction = 0.5;
  r.clear();
  PretrainDbn(*backend, SmallData(), {4, 3}, d, [&](const nlohmann::json& x) { r.push_back(x); });
  ASSERT_EQ(r.size(), 3u);
  for (const auto& x : r) EXPECT_NEAR(x["scheduled_momentum"].get<double>(), 0.9, 1e-12);
}

TEST(Dbn, DeadUnitFraction) {
  // 20 utterances of 50 frames, 3 features (about +-1 plus unit noise), no context. Five hidden
  // units: 0 has no weights (constant 0.5), 1 only a bias (constant sigmoid(3)), 3 a weight too
  // small to move it (std about 0.25 x 1e-4 x 1.4); 2 and 4 follow a feature (std about 0.2):
  // 3 of 5 are dead.
  auto backend = testing::MakeBackend("cpu");
  const Dataset data = SmallData();
  Rbm top(*backend, 3, 5, RbmUnits::kGaussian);
  const std::vector<float> w = {
      0, 0,     0,  // unit 0
      0, 0,     0,  // unit 1
      1, 0,     0,  // unit 2
      0, 1e-4f, 0,  // unit 3
      0, 0,     2,  // unit 4
  };
  const std::vector<float> c = {0, 3, 0, 0, -1};
  backend->CopyFromHost(w.data(), top.Weights());
  backend->CopyFromHost(c.data(), top.HiddenBias());
  EXPECT_DOUBLE_EQ(DeadUnitFraction(*backend, data, AllUtterances(data), 0, {}, top), 0.6);
  // Under a layer: the first layer passes the features on as probabilities sigmoid(x), whose
  // spread (about 0.2) the second layer's unit 0 follows (weight 8, bias -4: alive); its unit 1
  // has no weights (dead).
  Rbm below(*backend, 3, 3, RbmUnits::kGaussian);
  const std::vector<float> eye = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  backend->CopyFromHost(eye.data(), below.Weights());
  Rbm second(*backend, 3, 2, RbmUnits::kBernoulli);
  const std::vector<float> w2 = {8, 0, 0, 0, 0, 0}, c2 = {-4, 0};
  backend->CopyFromHost(w2.data(), second.Weights());
  backend->CopyFromHost(c2.data(), second.HiddenBias());
  std::vector<Rbm> stack;
  stack.push_back(std::move(below));
  EXPECT_DOUBLE_EQ(DeadUnitFraction(*backend, data, AllUtterances(data), 0, stack, second), 0.5);
  // Recorded by pretraining for every layer and epoch.
  std::vector<nlohmann::json> r;
  PretrainDbn(*backend, data, {4, 3}, SmallOptions(),
              [&](const nlohmann::json& x) { r.push_back(x); });
  for (const auto& x : r) {
    ASSERT_TRUE(x.contains("dead_fraction")) << x;
    EXPECT_GE(x["dead_fraction"].get<double>(), 0.0);
    EXPECT_LE(x["dead_fraction"].get<double>(), 1.0);
  }
}

TEST(Dbn, FileRoundTripAndCorruption) {
  testing::TempDir tmp;
  Dbn dbn;
  dbn.layers.push_back({2, 3, {1, 2, 3, 4, 5, 6}, {7, 8, 9}});
  dbn.layers.push_back({3, 1, {1, 1, 1}, {0.5}});
  SaveDbn(tmp.File("s.bin"), dbn);
  const Dbn back = LoadDbn(tmp.File("s.bin"));
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(back.layers[0].weights, dbn.layers[0].weights);
  EXPECT_EQ(back.layers[1].hidden_bias, dbn.layers[1].hidden_bias);
  std::string bytes = ReadFile(tmp.File("s.bin"));
  bytes[bytes.size() - 8] ^= 1;  // a parameter byte
  WriteFileAtomic(tmp.File("bad.bin"), bytes);
  try {
    LoadDbn(tmp.File("bad.bin"));
    FAIL() << "a corrupt stack was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  WriteFileAtomic(tmp.File("model.bin"), "MAVGNNET....");
  EXPECT_THROW(LoadDbn(tmp.File("model.bin")), Error);
}

RunConfig ConfigWithData(const std::string& train) {
  RunConfig c;
  c.data.train = train;
  c.model.init = ModelInit::kRbm;
  return c;
}

TEST(StackCache, KeyDependsOnWhatDeterminesTheStackOnly) {
  testing::TempDir tmp;
  const std::string a = tmp.File("a"), b = tmp.File("b");
  MakeDirs(a);
  WriteFileAtomic(a + "/feats.ark", "some features");
  std::filesystem::copy(a, b);
  const RunConfig base = ConfigWithData(a);
  const std::string key = RbmStackKey(base).key;
  EXPECT_EQ(key.size(), 16u);
  // The pretraining code is part of the key (tests/e2e/build_info.sh: what changes it).
  EXPECT_EQ(RbmStackKey(base).inputs.at("code"), build_info::kPretrainCodeVersion);
  RunConfig c = base;
  c.parallel.workers = 16;
  c.optimizer.type = OptimizerType::kNgsgd;
  c.schedule.lr = 0.1;
  c.seed = 5;
  EXPECT_EQ(RbmStackKey(c).key, key) << "workers, optimizer, schedule, run seed: same stack";
  c.data.train = b;
  EXPECT_EQ(RbmStackKey(c).key, key) << "a copy of the data elsewhere: same stack";
  c = base;
  c.pretrain.rbm.lr = 0.2;
  EXPECT_NE(RbmStackKey(c).key, key);
  c = base;
  c.pretrain.rbm.seed = 1;
  EXPECT_NE(RbmStackKey(c).key, key);
  // A setting added later keys the stack only when set (stacks made before keep their keys).
  EXPECT_FALSE(RbmStackKey(base).inputs.at("rbm").at("rbm").contains("momentum_ramp_fraction"));
  c = base;
  c.pretrain.rbm.momentum_ramp_fraction = 0.185;
  EXPECT_NE(RbmStackKey(c).key, key);
  c = base;
  c.model.hidden_dim = 100;
  EXPECT_NE(RbmStackKey(c).key, key);
  c = base;
  c.data.context = 2;
  EXPECT_NE(RbmStackKey(c).key, key);
  WriteFileAtomic(b + "/feats.ark", "other features");
  c.data.train = b;
  c.data.context = base.data.context;
  EXPECT_NE(RbmStackKey(c).key, key) << "different features";
  c.data.train = tmp.File("missing");
  EXPECT_THROW(RbmStackKey(c), Error);
}

TEST(StackCache, DataFingerprintFollowsFeatsScp) {
  testing::TempDir tmp;
  MakeDirs(tmp.File("d"));
  WriteFileAtomic(tmp.File("d/x.ark"), "archive bytes");
  WriteFileAtomic(tmp.File("d/feats.scp"), "u1 x.ark:0\nu2 x.ark:5\n");
  const std::string f1 = DataDirFingerprint(tmp.File("d"));
  WriteFileAtomic(tmp.File("d/x.ark"), "archive bytez");
  EXPECT_NE(DataDirFingerprint(tmp.File("d")), f1) << "the archive an scp names is part of it";
  const std::string f2 = DataDirFingerprint(tmp.File("d"));
  WriteFileAtomic(tmp.File("d/ali.ark"), "alignments");
  EXPECT_NE(DataDirFingerprint(tmp.File("d")), f2) << "the alignments choose the utterances";
  const std::string f3 = DataDirFingerprint(tmp.File("d"));
  WriteFileAtomic(tmp.File("d/text"), "u1 one");
  EXPECT_EQ(DataDirFingerprint(tmp.File("d")), f3) << "transcripts do not change the frames";
  EXPECT_THROW(DataDirFingerprint(tmp.File("nothing")), Error);
}

// A large archive (over 256 MiB: sampled, not read in full) is known by its contents only: a
// new modification time or a moved corpus keeps the fingerprint; a byte changed at either end
// or in a sampled block changes it.
TEST(StackCache, LargeArchiveFingerprintIgnoresModificationTime) {
  testing::TempDir tmp;
  MakeDirs(tmp.File("d"));
  const std::string ark = tmp.File("d/feats.ark");
  const int64_t size = int64_t{300} << 20;
  {
    std::FILE* f = std::fopen(ark.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(ftruncate(fileno(f), size), 0);  // sparse: no 300 MiB written
    std::fclose(f);
  }
  const std::string f1 = DataDirFingerprint(tmp.File("d"));
  std::filesystem::last_write_time(
      ark, std::filesystem::last_write_time(ark) - std::chrono::hours(24 * 365));
  EXPECT_EQ(DataDirFingerprint(tmp.File("d")), f1) << "the modification time is not contents";
  std::filesystem::rename(tmp.File("d"), tmp.File("moved"));
  EXPECT_EQ(DataDirFingerprint(tmp.File("moved")), f1) << "nor is the corpus's location";
  auto poke = [&](int64_t offset) {
    std::FILE* f = std::fopen(tmp.File("moved/feats.ark").c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(offset), SEEK_SET);
    std::fputc(1, f);
    std::fclose(f);
  };
  std::string last = f1;
  for (const int64_t offset : {int64_t{10}, size - 10, int64_t{16} << 20}) {  // start, end, block
    poke(offset);
    const std::string f = DataDirFingerprint(tmp.File("moved"));
    EXPECT_NE(f, last) << "a byte changed at " << offset;
    last = f;
  }
}

TEST(StackCache, PretrainsOnceThenHitsEvenUnderConcurrency) {
  testing::TempDir tmp;
  MakeDirs(tmp.File("data"));
  WriteFileAtomic(tmp.File("data/feats.ark"), "x");
  const StackKey key = RbmStackKey(ConfigWithData(tmp.File("data")));
  std::atomic<int> pretrained{0};
  Dbn dbn;
  dbn.layers.push_back({2, 2, {1, 2, 3, 4}, {5, 6}});
  const PretrainFn pretrain = [&](const DbnEpochCallback& cb) {
    ++pretrained;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // others must wait, not redo
    cb({{"layer", 1}, {"epoch", 1}, {"recon_mse", 0.5}});
    return dbn;
  };
  const std::string cache = tmp.File("cache");
  EXPECT_FALSE(StackCached(cache, key.key));
  std::vector<CachedStack> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { got[t] = ObtainStack(cache, key, pretrain, nullptr); });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(pretrained.load(), 1);
  int hits = 0;
  for (const auto& g : got) {
    hits += g.hit;
    EXPECT_EQ(g.dbn.layers.at(0).weights, dbn.layers[0].weights);
    ASSERT_EQ(g.records.size(), 1u);
    EXPECT_EQ(g.records[0]["recon_mse"], 0.5);
  }
  EXPECT_EQ(hits, 3);
  EXPECT_TRUE(StackCached(cache, key.key));
  EXPECT_TRUE(PathExists(StackDir(cache, key.key) + "/key.json"));

  // A damaged stack on disk is pretrained again and replaced.
  const std::string bin = StackDir(cache, key.key) + "/dbn.bin";
  std::string bytes = ReadFile(bin);
  bytes[bytes.size() - 6] ^= 1;
  WriteFileAtomic(bin, bytes);
  const CachedStack redone = ObtainStack(cache, key, pretrain, nullptr);
  EXPECT_FALSE(redone.hit);
  EXPECT_EQ(pretrained.load(), 2);
  EXPECT_TRUE(ObtainStack(cache, key, pretrain, nullptr).hit);
  pretrained = 1;

  // Without a cache dir every call pretrains.
  const CachedStack none = ObtainStack("", key, pretrain, nullptr);
  EXPECT_FALSE(none.hit);
  EXPECT_EQ(pretrained.load(), 2);
}

// A run waiting for another's pretraining hears from the cache while it waits (a heartbeat), and
// can give up by throwing: the lock is released and the cache left to the run that pretrains.
TEST(StackCache, AWaiterIsCalledBackAndCanGiveUp) {
  testing::TempDir tmp;
  MakeDirs(tmp.File("data"));
  WriteFileAtomic(tmp.File("data/feats.ark"), "x");
  const StackKey key = RbmStackKey(ConfigWithData(tmp.File("data")));
  const std::string cache = tmp.File("cache");
  Dbn dbn;
  dbn.layers.push_back({2, 2, {1, 2, 3, 4}, {5, 6}});
  std::atomic<bool> started{false}, release{false};
  const PretrainFn slow = [&](const DbnEpochCallback&) {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return dbn;
  };
  std::thread first([&] { ObtainStack(cache, key, slow, nullptr); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  struct GaveUp {};
  int calls = 0;
  const PretrainFn never = [](const DbnEpochCallback&) -> Dbn {
    throw std::logic_error("waiter pretrained");
  };
  EXPECT_THROW(ObtainStack(cache, key, never, nullptr,
                           [&] {
                             if (++calls == 3) throw GaveUp{};
                           }),
               GaveUp);
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(StackCached(cache, key.key)) << "the waiter wrote nothing";
  release = true;
  first.join();
  EXPECT_TRUE(StackCached(cache, key.key));
  EXPECT_TRUE(
      ObtainStack(cache, key, never, nullptr, [] { FAIL() << "nobody holds the lock"; }).hit);
}

}  // namespace
}  // namespace mavg
