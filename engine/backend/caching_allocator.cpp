#include "engine/backend/caching_allocator.h"

#include <algorithm>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr size_t kSmallUnit = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kLargeUnit = size_t{2} << 20;

size_t RoundUp(size_t bytes, size_t unit) {
  MAVG_CHECK(bytes <= SIZE_MAX - unit, "allocation of {} bytes is too large", bytes);
  return (bytes + unit - 1) / unit * unit;
}

// A cached block serves a request if it wastes no more than the request itself (small) or one
// large unit (large): a 2 MiB block may serve 1.5 MiB, a 1 GiB block never serves 4 MiB.
bool Fits(size_t block, size_t request) {
  return request <= kSmallLimit ? block <= 2 * request : block <= request + kLargeUnit;
}

}  // namespace

CachingAllocator::CachingAllocator(RawAllocator raw) : raw_(std::move(raw)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCacheLocked();
}

size_t CachingAllocator::RoundSize(size_t bytes) {
  if (bytes == 0) bytes = 1;
  return bytes <= kSmallLimit ? RoundUp(bytes, kSmallUnit) : RoundUp(bytes, kLargeUnit);
}

void* CachingAllocator::Allocate(size_t bytes) {
  const size_t size = RoundSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = free_.lower_bound(size);
  if (it != free_.end() && Fits(it->first, size)) {
    void* p = it->second;
    const size_t block = it->first;
    free_.erase(it);
    stats_.cached_bytes -= block;
    stats_.in_use_bytes += block;
    ++stats_.reuses;
    in_use_.emplace(p, block);
    return p;
  }
  void* p = raw_.allocate(size);
  if (p == nullptr && !free_.empty()) {
    ReleaseCacheLocked();
    p = raw_.allocate(size);
  }
  MAVG_CHECK(p != nullptr,
             "out of {} memory allocating {} bytes ({} bytes in use by mavg; free memory on the "
             "device or use a smaller model or minibatch)",
             raw_.device, bytes, stats_.in_use_bytes);
  ++stats_.raw_allocations;
  stats_.in_use_bytes += size;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes + stats_.cached_bytes);
  in_use_.emplace(p, size);
  return p;
}

void CachingAllocator::Free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  MAVG_CHECK(it != in_use_.end(), "free of a pointer the {} allocator did not hand out",
             raw_.device);
  const size_t size = it->second;
  in_use_.erase(it);
  stats_.in_use_bytes -= size;
  stats_.cached_bytes += size;
  free_.emplace(size, ptr);
}

void CachingAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCacheLocked();
}

void CachingAllocator::ReleaseCacheLocked() {
  for (auto& [size, p] : free_) raw_.free(p);
  free_.clear();
  stats_.cached_bytes = 0;
}

CachingAllocator::Stats CachingAllocator::GetStats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace mavg
