// The alpha-beta model of averaging against hand-computed closed forms: flat, two-level and
// overlapped epochs, and the cases that must reduce to the flat model.
#include "engine/report/perf_model.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace mavg {
namespace {

// Round numbers: S = 100 MB; inter 1 GB/s, 1 us; intra 10 GB/s, no latency.
const Interconnect kInter{"inter", "", 1e9, 1e-6, ""};
const Interconnect kIntra{"intra", "", 1e10, 0.0, ""};
const Interconnect kStaging{"staging", "", 2e9, 0.0, ""};
constexpr double kBytes = 1e8;
// T_ar(S, 4) on kInter = 2*3*1e-6 + 2*3/4 * 1e8/1e9 = 0.000006 + 0.15
constexpr double kGlobal4 = 0.150006;
// T_ar(S, 2) on kIntra = 2*1*0 + 2*1/2 * 1e8/1e10
constexpr double kGroup2 = 0.01;

EpochShape Shape() {
  EpochShape s;
  s.workers = 4;
  s.bytes = kBytes;
  s.compute_s = 10.0;
  s.combines = 10;
  s.average_every = 2;
  return s;
}

TEST(PerfModel, RingAllReduceClosedForm) {
  EXPECT_NEAR(AveragingTime(kBytes, 4, kInter, nullptr).Total(), kGlobal4, 1e-12);
  EXPECT_NEAR(AveragingTime(kBytes, 2, kIntra, nullptr).Total(), kGroup2, 1e-12);
  // Staging: 2 S / B_host = 0.1 s on top.
  const AveragingCost c = AveragingTime(kBytes, 4, kInter, &kStaging);
  EXPECT_NEAR(c.allreduce_s, kGlobal4, 1e-12);
  EXPECT_NEAR(c.staging_s, 0.1, 1e-12);
  EXPECT_EQ(AveragingTime(kBytes, 1, kInter, &kStaging).Total(), 0.0);
}

// Compressed deltas: every worker's S_c bytes to every other on a ring, (N-1) a + (N-1) S_c / B,
// with the uncompressed parameters staged: at 1/8 of the bytes (int4) and 4 workers the
// gather moves 3 x 12.5 MB where the all-reduce moves 2 x 3/4 x 100 MB.
TEST(PerfModel, RingAllGatherClosedForm) {
  const AveragingCost c =
      AveragingTime(kBytes / 8, 4, kInter, &kStaging, Collective::kAllGather, kBytes);
  EXPECT_NEAR(c.allreduce_s, 3 * 1e-6 + 3 * 1.25e7 / 1e9, 1e-12);
  EXPECT_NEAR(c.staging_s, 0.1, 1e-12);
  EXPECT_EQ(AveragingTime(kBytes / 8, 1, kInter, nullptr, Collective::kAllGather).Total(), 0.0);
  // In an epoch: 10 combines of the gather.
  EpochShape s = Shape();
  s.bytes = kBytes / 8, s.collective = Collective::kAllGather;
  EXPECT_NEAR(ModelEpoch(s, {&kIntra, &kInter, nullptr}).Total(), 10.0 + 10 * 0.037503, 1e-12);
  // With two workers a gather of S moves what an all-reduce of S does (one S each way), with
  // half its latency.
  EXPECT_NEAR(AveragingTime(kBytes, 2, kInter, nullptr, Collective::kAllGather).Total(),
              AveragingTime(kBytes, 2, kInter, nullptr).Total() - 1e-6, 1e-12);
}

TEST(PerfModel, FlatEpoch) {
  const EpochModel m = ModelEpoch(Shape(), {&kIntra, &kInter, nullptr});
  EXPECT_EQ(m.global_combines, 10);
  EXPECT_EQ(m.group_combines, 0);
  EXPECT_NEAR(m.Total(), 10.0 + 10 * kGlobal4, 1e-12);
  // One worker: no communication at all.
  EpochShape one = Shape();
  one.workers = 1;
  EXPECT_EQ(ModelEpoch(one, {&kIntra, &kInter, &kStaging}).Total(), 10.0);
  // Staging is added to every combine.
  EXPECT_NEAR(ModelEpoch(Shape(), {&kIntra, &kInter, &kStaging}).Total(),
              10.0 + 10 * (kGlobal4 + 0.1), 1e-12);
}

TEST(PerfModel, TwoLevelEpoch) {
  // N = 4, g = 2, K = 2, K2 = 8: global at combine points 4, 8 and the epoch's last (10).
  EpochShape s = Shape();
  s.group_size = 2;
  s.average_every_global = 8;
  ASSERT_TRUE(IsTwoLevel(s));
  const EpochModel m = ModelEpoch(s, {&kIntra, &kInter, nullptr});
  EXPECT_EQ(m.global_combines, 3);
  EXPECT_EQ(m.group_combines, 7);
  EXPECT_NEAR(m.group_s, 7 * kGroup2, 1e-12);
  EXPECT_NEAR(m.global_s, 3 * kGlobal4, 1e-12);
  EXPECT_NEAR(m.Total(), 10.0 + 0.07 + 0.450018, 1e-12);
  // 12 combine points, a multiple of K2/K: 3 global, 9 group.
  s.combines = 12;
  EXPECT_EQ(ModelEpoch(s, {&kIntra, &kInter, nullptr}).global_combines, 3);
  // The count the run recorded wins over the derivation.
  s.global_combines = 5;
  const EpochModel r = ModelEpoch(s, {&kIntra, &kInter, nullptr});
  EXPECT_EQ(r.global_combines, 5);
  EXPECT_EQ(r.group_combines, 7);
  // g = 1: group "combines" are free; only the global ones cost.
  EpochShape g1 = Shape();
  g1.group_size = 1;
  g1.average_every_global = 8;
  EXPECT_NEAR(ModelEpoch(g1, {&kIntra, &kInter, nullptr}).Total(), 10.0 + 3 * kGlobal4, 1e-12);
}

TEST(PerfModel, TwoLevelDegeneratesToFlat) {
  const double flat = ModelEpoch(Shape(), {&kIntra, &kInter, nullptr}).Total();
  EpochShape all = Shape();  // g = N: one group of everyone
  all.group_size = 4;
  all.average_every_global = 8;
  EXPECT_FALSE(IsTwoLevel(all));
  EXPECT_DOUBLE_EQ(ModelEpoch(all, {&kIntra, &kInter, nullptr}).Total(), flat);
  all.group_size = 6;  // g > N
  EXPECT_DOUBLE_EQ(ModelEpoch(all, {&kIntra, &kInter, nullptr}).Total(), flat);
  EpochShape same = Shape();  // K2 = K
  same.group_size = 2;
  same.average_every_global = 2;
  EXPECT_FALSE(IsTwoLevel(same));
  EXPECT_DOUBLE_EQ(ModelEpoch(same, {&kIntra, &kInter, nullptr}).Total(), flat);
  EpochShape zero = Shape();  // K2 = 0, g = 0: the defaults
  zero.group_size = 2;
  EXPECT_DOUBLE_EQ(ModelEpoch(zero, {&kIntra, &kInter, nullptr}).Total(), flat);
  // One link for both levels (--interconnect alone): a two-level run pays T_ar(S, g) on it.
  EpochShape two = Shape();
  two.group_size = 2;
  two.average_every_global = 8;
  const double group_on_inter = 2 * 1e-6 + 1e8 / 1e9;  // T_ar(S, 2) on kInter
  EXPECT_NEAR(ModelEpoch(two, {&kInter, &kInter, nullptr}).Total(),
              10.0 + 7 * group_on_inter + 3 * kGlobal4, 1e-12);
}

TEST(PerfModel, OverlapExposesOnlyWhatComputeDoesNotHide) {
  // Flat, compute 1 s over 10 blocks: 0.1 s per block hides 0.1 of each 0.150006 s all-reduce;
  // the epoch's last all-reduce is paid in full.
  EpochShape s = Shape();
  s.compute_s = 1.0;
  s.overlap = true;
  const EpochModel m = ModelEpoch(s, {&kIntra, &kInter, nullptr});
  EXPECT_NEAR(m.global_s, 10 * kGlobal4, 1e-12);
  EXPECT_NEAR(m.exposed_s, 9 * (kGlobal4 - 0.1) + kGlobal4, 1e-12);
  EXPECT_NEAR(m.Total(), 1.0 + 0.60006, 1e-12);
  // Compute longer than the all-reduce: all but the last one hidden.
  s.compute_s = 10.0;
  EXPECT_NEAR(ModelEpoch(s, {&kIntra, &kInter, nullptr}).Total(), 10.0 + kGlobal4, 1e-12);
  // Two-level: only the global combines overlap; block = compute / R_global = 0.1 s.
  EpochShape t = Shape();
  t.compute_s = 0.3;
  t.group_size = 2;
  t.average_every_global = 8;
  t.overlap = true;
  const EpochModel u = ModelEpoch(t, {&kIntra, &kInter, nullptr});
  EXPECT_NEAR(u.group_s, 0.07, 1e-12);
  EXPECT_NEAR(u.exposed_s, 2 * (kGlobal4 - 0.1) + kGlobal4, 1e-12);
  EXPECT_NEAR(u.Total(), 0.3 + 0.07 + 0.250018, 1e-12);
}

// Streaming: each fragment's exchange hides behind tau steps of compute (compute / steps each);
// the epoch's last F exchanges are synchronous; tau = 0 is the flat model.
TEST(PerfModel, StreamingHidesEachExchangeBehindItsOverlapSteps) {
  EpochShape s = Shape();  // 10 exchanges of 0.150006 s, compute 10 s
  s.stream_fragments = 2;
  s.steps = 100;
  s.overlap_steps = 1;  // 0.1 s of compute behind each
  EXPECT_NEAR(ModelEpoch(s, {&kIntra, &kInter, nullptr}).exposed_s,
              8 * (kGlobal4 - 0.1) + 2 * kGlobal4, 1e-12);
  s.overlap_steps = 5;  // 0.5 s: all hidden but the epoch's end
  EXPECT_NEAR(ModelEpoch(s, {&kIntra, &kInter, nullptr}).exposed_s, 2 * kGlobal4, 1e-12);
  s.overlap_steps = 0;
  EXPECT_NEAR(ModelEpoch(s, {&kIntra, &kInter, nullptr}).exposed_s, 10 * kGlobal4, 1e-12);
}

// A link given by its rate and latency, as tc writes them; presets by name; bad specs refused.
TEST(PerfModel, LinksByRateAndLatency) {
  const Interconnect a = ParseInterconnect("100mbit@2ms");
  EXPECT_DOUBLE_EQ(a.bandwidth, 12.5e6);
  EXPECT_DOUBLE_EQ(a.latency, 2e-3);
  EXPECT_DOUBLE_EQ(ParseInterconnect("2.5gbit").bandwidth, 2.5e9 / 8);
  EXPECT_DOUBLE_EQ(ParseInterconnect("100Mbit").bandwidth, 12.5e6);  // as tc prints it
  EXPECT_DOUBLE_EQ(ParseInterconnect("1gbit@50us").latency, 50e-6);
  EXPECT_EQ(ParseInterconnect("eth-1g").bandwidth, FindInterconnect("eth-1g").bandwidth);
  for (const char* bad : {"100", "100mb", "0mbit", "-1gbit", "mbit", "1gbit@", "1gbit@5", "x"}) {
    EXPECT_THROW(ParseInterconnect(bad), Error) << bad;
  }
}

TEST(PerfModel, PresetsForTwoLinks) {
  const Interconnect& nv = FindInterconnect("nvlink4");
  EXPECT_DOUBLE_EQ(nv.bandwidth, 450e9);  // 900 GB/s both directions
  EXPECT_NE(nv.source.find("not a hardware figure"), std::string::npos);
  const Interconnect& hdr = FindInterconnect("ib-hdr");
  EXPECT_DOUBLE_EQ(hdr.bandwidth, 25e9);  // 200 Gb/s
  EXPECT_DOUBLE_EQ(hdr.latency, 0.6e-6);
  try {
    FindInterconnect("nvlink9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvlink4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mavg
