// Collectives over a thread group, checked against closed forms.
#include "engine/comm/thread_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>

#include "engine/comm/communicator.h"
#include "engine/core/error.h"

namespace mavg {
namespace {

TEST(ThreadGroup, AllReduceSumMaxAndBroadcastClosedForms) {
  for (int n : {1, 2, 3, 5, 8}) {
    RunThreadGroup(n, [n](Communicator& comm) {
      EXPECT_EQ(comm.WorldSize(), n);
      const int r = comm.Rank();
      // Sum of (r + 1) * (i + 1) over ranks = (i + 1) n (n + 1) / 2.
      std::vector<float> x(1000);
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((r + 1) * (i + 1));
      comm.AllReduceSum(std::span<float>(x));
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(x[i], static_cast<float>((i + 1) * n * (n + 1) / 2)) << "n " << n;
      }
      std::vector<double> d = {static_cast<double>(r), -static_cast<double>(r)};
      comm.AllReduceMax(std::span<double>(d));
      EXPECT_EQ(d[0], n - 1);
      EXPECT_EQ(d[1], 0.0);
      std::vector<double> s = {0.5 * r};
      comm.AllReduceSum(std::span<double>(s));
      EXPECT_DOUBLE_EQ(s[0], 0.25 * n * (n - 1));
      std::vector<float> b(3, static_cast<float>(r));
      comm.Broadcast(std::span<float>(b), n - 1);
      for (float v : b) EXPECT_EQ(v, static_cast<float>(n - 1));
      comm.Barrier();
    });
  }
}

// Every rank's block on every rank, whatever the others held there before (garbage outside a
// rank's own block must not leak in); odd block sizes.
TEST(ThreadGroup, AllGatherHandsEveryRankEveryBlock) {
  for (int n : {1, 2, 3, 5}) {
    for (size_t block : {size_t{1}, size_t{7}, size_t{64}}) {
      RunThreadGroup(n, [n, block](Communicator& comm) {
        const int r = comm.Rank();
        std::vector<std::byte> all(block * n, std::byte{0xAB});  // not zeros
        for (size_t i = 0; i < block; ++i) {
          all[r * block + i] = static_cast<std::byte>((r * 31 + i) & 0xFF);
        }
        comm.AllGather(all);
        for (int q = 0; q < n; ++q) {
          for (size_t i = 0; i < block; ++i) {
            ASSERT_EQ(all[q * block + i], static_cast<std::byte>((q * 31 + i) & 0xFF))
                << "n " << n << " rank " << r << " block of " << q;
          }
        }
      });
    }
  }
}

TEST(ThreadGroup, SumsInRankOrder) {
  // Values whose float sum depends on the order: rank order must be used, every time.
  const int n = 4;
  const float vals[n] = {1e8f, 1.0f, -1e8f, 1.0f};
  float expected = vals[0];
  for (int r = 1; r < n; ++r) expected += vals[r];  // ((1e8 + 1) - 1e8) + 1 = 1
  for (int trial = 0; trial < 20; ++trial) {
    RunThreadGroup(n, [&](Communicator& comm) {
      float x = vals[comm.Rank()];
      comm.AllReduceSum(std::span<float>(&x, 1));
      EXPECT_EQ(x, expected);
    });
  }
}

TEST(ThreadGroup, ManyCollectivesInARow) {
  RunThreadGroup(3, [](Communicator& comm) {
    for (int i = 0; i < 500; ++i) {
      double v = i + comm.Rank();
      comm.AllReduceSum(std::span<double>(&v, 1));
      ASSERT_EQ(v, 3.0 * i + 3.0);
    }
  });
}

TEST(ThreadGroup, AFailingRankDoesNotHangTheOthers) {
  const auto start = std::chrono::steady_clock::now();
  try {
    RunThreadGroup(4, [](Communicator& comm) {
      if (comm.Rank() == 2) MAVG_FAIL("rank 2 fails");
      float x = 1.0f;
      for (int i = 0; i < 10; ++i) comm.AllReduceSum(std::span<float>(&x, 1));
    });
    FAIL() << "expected the failure to propagate";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rank 2 fails");  // the root cause, not the others' abort
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LocalCommunicator, IsAWorldOfOne) {
  auto comm = CreateLocalCommunicator();
  EXPECT_EQ(comm->WorldSize(), 1);
  EXPECT_FALSE(comm->IsDistributed());
  float x = 3.0f;
  comm->AllReduceSum(std::span<float>(&x, 1));
  EXPECT_EQ(x, 3.0f);
}

}  // namespace
}  // namespace mavg
