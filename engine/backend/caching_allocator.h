#pragma once
// A caching allocator over a raw device allocator (cudaMalloc on CUDA): freed blocks are kept
// in size classes and handed out again, so a training loop that allocates the same shapes every
// minibatch (workspaces, temporaries) calls the raw allocator only at its first minibatch.
// Blocks are reused only by the same stream (the CUDA backend has one), so a block freed while
// kernels that use it are still queued is safe to reuse: later work on the stream runs after.
// When the raw allocator fails, the cache is released and the allocation retried once; a
// failure after that throws with the request, the bytes in use and the device's cache.
// Device-free (plain C++) so that its bookkeeping is tested on the host.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace mavg {

class CachingAllocator {
 public:
  struct RawAllocator {
    std::function<void*(size_t)> allocate;  // returns nullptr when out of memory
    std::function<void(void*)> free;
    std::string device;  // for error messages, e.g. "cuda:0"
  };
  struct Stats {
    size_t in_use_bytes = 0;      // handed out (rounded sizes)
    size_t cached_bytes = 0;      // free blocks kept for reuse
    size_t peak_bytes = 0;        // largest in_use + cached
    int64_t raw_allocations = 0;  // calls of the raw allocator that succeeded
    int64_t reuses = 0;           // allocations served from the cache
  };

  explicit CachingAllocator(RawAllocator raw);
  ~CachingAllocator();  // returns every cached block (blocks still in use are the owner's bug)
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The size class of a request: multiples of 512 bytes up to 1 MiB, of 2 MiB above.
  static size_t RoundSize(size_t bytes);

  void* Allocate(size_t bytes);
  // `ptr` must come from Allocate (nullptr is ignored).
  void Free(void* ptr);
  // Returns every cached block to the raw allocator.
  void ReleaseCache();
  Stats GetStats() const;

 private:
  void ReleaseCacheLocked();

  RawAllocator raw_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;         // size -> cached block
  std::unordered_map<void*, size_t> in_use_;  // block -> its size
  Stats stats_;
};

}  // namespace mavg
