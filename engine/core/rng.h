#pragma once
// Deterministic random numbers that give the same sequence on every platform and standard
// library (std::normal_distribution and std::shuffle do not), so a seed names one experiment.
// Generator: xoshiro256**, seeded through splitmix64; streams are derived by hashing.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

namespace mavg {

// Mixes a seed with a path of integers (e.g. {worker, epoch}) into an independent seed.
uint64_t DeriveSeed(uint64_t seed, std::initializer_list<uint64_t> path);

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t NextU64();
  // Uniform in [0, 1) with 53 random bits.
  double Uniform();
  // Uniform integer in [0, n), unbiased (n > 0).
  uint64_t Below(uint64_t n);
  // Standard normal (Box-Muller; the second value is cached).
  double Gaussian();

  // Fisher-Yates shuffle of [first, first + n).
  template <typename T>
  void Shuffle(T* first, size_t n) {
    for (size_t i = n; i > 1; --i) {
      size_t j = static_cast<size_t>(Below(i));
      std::swap(first[i - 1], first[j]);
    }
  }

 private:
  uint64_t s_[4] = {};      // xoshiro256** state
  bool has_spare_ = false;  // Box-Muller second value available
  double spare_ = 0.0;
};

}  // namespace mavg
