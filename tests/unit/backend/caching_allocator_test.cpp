// The caching allocator's bookkeeping, over a fake raw allocator that counts and can fail.
#include "engine/backend/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "engine/core/error.h"

namespace mavg {
namespace {

struct FakeDevice {
  size_t capacity = size_t{64} << 20;
  size_t used = 0;
  int allocations = 0, frees = 0;
  std::set<void*> live;
  CachingAllocator::RawAllocator Raw() {
    return {[this](size_t bytes) -> void* {
              if (used + bytes > capacity) return nullptr;
              void* p = std::malloc(bytes);
              used += bytes;
              ++allocations;
              live.insert(p);
              sizes[p] = bytes;
              return p;
            },
            [this](void* p) {
              used -= sizes[p];
              ++frees;
              live.erase(p);
              std::free(p);
            },
            "fake:0"};
  }
  std::map<void*, size_t> sizes;
};

TEST(CachingAllocator, SizeClasses) {
  EXPECT_EQ(CachingAllocator::RoundSize(0), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::RoundSize(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(CachingAllocator::RoundSize((size_t{1} << 20) + 1), size_t{2} << 20);
  EXPECT_EQ(CachingAllocator::RoundSize((size_t{5} << 20) + 7), size_t{6} << 20);
  EXPECT_THROW(CachingAllocator::RoundSize(SIZE_MAX - 10), Error);
}

TEST(CachingAllocator, ReusesFreedBlocksOfTheSameClassWithoutCallingTheRawAllocator) {
  FakeDevice dev;
  {
    CachingAllocator a(dev.Raw());
    for (int step = 0; step < 10; ++step) {  // a training loop's temporaries
      void* p = a.Allocate(1000);
      void* q = a.Allocate(3 << 20);
      a.Free(p);
      a.Free(q);
    }
    EXPECT_EQ(dev.allocations, 2);
    const CachingAllocator::Stats s = a.GetStats();
    EXPECT_EQ(s.raw_allocations, 2);
    EXPECT_EQ(s.reuses, 18);
    EXPECT_EQ(s.in_use_bytes, 0u);
    EXPECT_EQ(s.cached_bytes, 1024u + (4u << 20));
    EXPECT_EQ(s.peak_bytes, 1024u + (4u << 20));
    // A block up to twice a small request serves it; a much larger one does not.
    void* small = a.Allocate(100);  // the cached 1024-byte block
    EXPECT_EQ(dev.allocations, 2);
    void* small2 = a.Allocate(100);  // not the 4 MiB block
    EXPECT_EQ(dev.allocations, 3);
    a.Free(small);
    a.Free(small2);
  }
  EXPECT_EQ(dev.frees, 3);  // the destructor returns the cache
  EXPECT_TRUE(dev.live.empty());
}

TEST(CachingAllocator, BlocksInUseAreDistinct) {
  FakeDevice dev;
  CachingAllocator a(dev.Raw());
  std::set<void*> seen;
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(seen.insert(a.Allocate(4096)).second);
  for (void* p : seen) a.Free(p);
  EXPECT_EQ(a.GetStats().in_use_bytes, 0u);
}

TEST(CachingAllocator, ReleasesTheCacheAndRetriesWhenTheDeviceIsFull) {
  FakeDevice dev;
  dev.capacity = size_t{10} << 20;
  CachingAllocator a(dev.Raw());
  void* p = a.Allocate(size_t{6} << 20);  // 6 MiB class
  a.Free(p);                              // cached, still held on the device
  void* q = a.Allocate(size_t{8} << 20);  // does not fit beside the cached block
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(dev.frees, 1);
  EXPECT_EQ(a.GetStats().cached_bytes, 0u);
  try {
    a.Allocate(size_t{4} << 20);
    FAIL() << "expected out of memory";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out of fake:0 memory allocating 4194304 bytes"), std::string::npos)
        << what;
    EXPECT_NE(what.find("8388608 bytes in use"), std::string::npos) << what;
  }
  a.Free(q);
}

TEST(CachingAllocator, RejectsFreeOfAForeignPointer) {
  FakeDevice dev;
  CachingAllocator a(dev.Raw());
  int x = 0;
  EXPECT_THROW(a.Free(&x), Error);
  a.Free(nullptr);  // ignored
}

}  // namespace
}  // namespace mavg
