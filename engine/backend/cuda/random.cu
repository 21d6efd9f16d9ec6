// Counter-based random fills (bodies in random.cuh): the same numbers as the CPU backend.
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/cuda/random.cuh"

namespace mavg::cuda {

void LaunchRandomUniform(Stream s, uint64_t seed, uint64_t offset, MatrixView x) {
  const Extent e = CommonExtent(x);
  LaunchElementwise(s, e.rows, e.cols, UniformBody{WithExtent(x, e), e.cols, seed, offset});
}

void LaunchRandomGaussian(Stream s, uint64_t seed, uint64_t offset, float stddev, MatrixView x) {
  const Extent e = CommonExtent(x);
  LaunchElementwise(s, e.rows, e.cols,
                    GaussianBody{WithExtent(x, e), e.cols, seed, offset, stddev});
}

void LaunchSampleBernoulli(Stream s, uint64_t seed, uint64_t offset, ConstMatrixView probs,
                           MatrixView out) {
  const Extent e = CommonExtent(probs, out);
  LaunchElementwise(s, e.rows, e.cols,
                    BernoulliBody{WithExtent(probs, e), WithExtent(out, e), e.cols, seed, offset});
}

}  // namespace mavg::cuda
