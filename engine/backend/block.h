#pragma once
// The Block policy of the small programs that run where a backend's data is (NG-SGD's
// backend/ngsgd_small.h, the RBM's backend/rbm_small.h): on the host as one thread, on a GPU
// as one block of threads (backend/cuda/block.cuh), with no host round trip. A program is a
// __host__ __device__ function template over the policy b:
//   b.For(n, f)   f(i) for i < n; the calls are independent (a GPU runs them in parallel)
//   b.Sync()      every earlier For and leader write is visible to what follows
//   b.Sum(n, f)   sum of f(i), the same value on every thread; b.Max likewise
//   b.Leader()    true on exactly one thread (for writes of single values)
//   b.FastMemory(n)  n doubles of the block's fast memory (a GPU block's shared memory), the
//                 same pointer on every thread, or nullptr when it has less: a program keeps
//                 its hottest working set there and falls back to its work buffer
// Code outside For runs on every thread and computes the same values from the same memory.
// The host policies (SerialBlock, and the tests' reversed one) run For in one order, so a phase
// that depended on the order of its own items would show up as a difference.

#include <math.h>

#include <cstdint>

#include "engine/backend/host_device.h"

namespace mavg {

// The host's block: one thread, items in order.
struct SerialBlock {
  static constexpr bool kHostEigen = false;  // see ngsgd_small::SymmetricEigen
  template <typename F>
  MAVG_HOST_DEVICE void For(int64_t n, F f) {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
  MAVG_HOST_DEVICE void Sync() {}
  template <typename F>
  MAVG_HOST_DEVICE double Sum(int64_t n, F f) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += f(i);
    return s;
  }
  template <typename F>
  MAVG_HOST_DEVICE double Max(int64_t n, F f) {
    double m = -HUGE_VAL;
    for (int64_t i = 0; i < n; ++i) m = fmax(m, f(i));
    return m;
  }
  MAVG_HOST_DEVICE bool Leader() const { return true; }
  MAVG_HOST_DEVICE double* FastMemory(int64_t /*n*/) const { return nullptr; }
};

}  // namespace mavg
