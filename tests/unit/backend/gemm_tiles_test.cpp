// The CPU backend's GEMM tiles (backend/cpu/gemm_tiles.h): the tiling covers the product and
// depends on its shape alone; tiled products equal a double-precision reference on strided,
// transposed views and matrix-vector shapes; and a product is the same bits at 1, 2, 3 and 4
// threads, and inside another pool's task (simulated workers stepping at once), which OpenBLAS
// on a whole product is not (its threaded driver blocks differently).
#include "engine/backend/cpu/gemm_tiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/thread_pool.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::NormalizedError;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

struct Shape {
  int64_t m, n, k;
  bool ta, tb;
};

// The GEMMs of a training step of the digits, Fashion-MNIST and paper-sized networks (forward,
// backward to the input, weight gradient) and matrix-vector shapes.
const Shape kShapes[] = {
    {256, 256, 440, false, true},  {256, 440, 256, false, false}, {256, 440, 256, true, false},
    {256, 63, 256, false, true},   {63, 256, 256, true, false},   {128, 512, 784, false, true},
    {512, 784, 128, true, false},  {128, 10, 512, false, true},   {10, 512, 128, true, false},
    {256, 2048, 440, false, true}, {2048, 440, 256, true, false}, {4096, 1, 2048, false, false},
    {1, 3000, 2048, false, true},  {2048, 1, 3000, true, true},   {300, 700, 97, true, true},
};

HostMat RefGemm(const Shape& s, float alpha, const HostMat& a, const HostMat& b, float beta,
                const HostMat& c) {
  HostMat out(s.m, s.n);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < s.k; ++p) {
        acc += static_cast<double>(s.ta ? a(p, i) : a(i, p)) * (s.tb ? b(j, p) : b(p, j));
      }
      out(i, j) = static_cast<float>(alpha * acc + (beta != 0.0f ? beta * c(i, j) : 0.0));
    }
  }
  return out;
}

TEST(GemmTiles, CoverTheProductAlongOneSideInWholeSimdPanels) {
  for (int64_t m : {1, 10, 63, 128, 256, 257, 1000, 2048, 8806}) {
    for (int64_t n : {1, 10, 63, 256, 440, 2048, 8806}) {
      for (int64_t k : {1, 63, 256, 2048}) {
        const GemmTiling t = GemmTilesOf(m, n, k);
        SCOPED_TRACE(::testing::Message() << m << " x " << n << " x " << k);
        ASSERT_GE(t.tile_rows, 1);
        ASSERT_GE(t.tile_cols, 1);
        EXPECT_LE(t.tile_rows, m);
        EXPECT_LE(t.tile_cols, n);
        EXPECT_TRUE(t.tile_rows == m || t.tile_cols == n) << "both sides cut";
        if (t.tile_rows < m) {
          EXPECT_EQ(t.tile_rows % 64, 0);
        }
        if (t.tile_cols < n) {
          EXPECT_EQ(t.tile_cols % 64, 0);
        }
        EXPECT_LE(t.Tiles(m, n), kMaxGemmTiles);
        if (t.Tiles(m, n) > 1) {
          // On average a tile holds the minimum work (the last may be shorter).
          EXPECT_GE(2.0 * m * n * k / static_cast<double>(t.Tiles(m, n)), kMinGemmTileFlops)
              << t.Tiles(m, n) << " tiles";
        }
      }
    }
  }
  // The paper's hidden layers in 4 pieces; a small output layer whole.
  EXPECT_EQ(GemmTilesOf(256, 2048, 2048).Tiles(256, 2048), 4);
  EXPECT_EQ(GemmTilesOf(256, 63, 256).Tiles(256, 63), 1);
}

// Tiles address the right blocks of strided and transposed operands (each a view into a wider
// matrix, one column in), and beta 0 ignores what C held (NaN).
TEST(CpuBackend, TiledGemmMatchesTheReferenceOnStridedViews) {
  const auto backend = CreateCpuBackend(2);
  for (const Shape& s : kShapes) {
    if (s.m * s.n * s.k > int64_t{300} * 1000 * 1000) continue;  // the reference's time
    for (float beta : {0.0f, 0.5f}) {
      const int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
      const int64_t br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
      const HostMat abig = RandomHost(ar, ac + 3, 41), bbig = RandomHost(br, bc + 2, 42);
      HostMat cbig = RandomHost(s.m, s.n + 4, 43);
      if (beta == 0.0f) cbig(s.m - 1, s.n) = std::nanf("");
      Matrix da = ToDevice(*backend, abig), db = ToDevice(*backend, bbig);
      Matrix dc = ToDevice(*backend, cbig);
      backend->Gemm(s.ta, s.tb, 0.7f, ConstMatrixView(da).ColRange(1, ac),
                    ConstMatrixView(db).ColRange(1, bc), beta, MatrixView(dc).ColRange(1, s.n));
      HostMat a(ar, ac), b(br, bc), c(s.m, s.n);
      for (int64_t i = 0; i < ar; ++i)
        for (int64_t j = 0; j < ac; ++j) a(i, j) = abig(i, j + 1);
      for (int64_t i = 0; i < br; ++i)
        for (int64_t j = 0; j < bc; ++j) b(i, j) = bbig(i, j + 1);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) c(i, j) = cbig(i, j + 1);
      const HostMat got_big = ToHost(*backend, dc);
      HostMat got(s.m, s.n);
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n + 4; ++j) {
          if (j >= 1 && j <= s.n) {
            got(i, j - 1) = got_big(i, j);
          } else {  // outside the view: untouched
            const float g = got_big(i, j), w = cbig(i, j);
            ASSERT_EQ(std::memcmp(&g, &w, sizeof(float)), 0) << i << "," << j;
          }
        }
      }
      EXPECT_LT(NormalizedError(got, RefGemm(s, 0.7f, a, b, beta, c)), 1e-5)
          << s.m << " x " << s.n << " x " << s.k << " ta " << s.ta << " tb " << s.tb << " beta "
          << beta << " (" << GemmTilesOf(s.m, s.n, s.k).Tiles(s.m, s.n) << " tiles)";
    }
  }
}

TEST(CpuBackend, GemmIsTheSameBitsAtAnyThreadCount) {
  for (const Shape& s : kShapes) {
    const HostMat a = s.ta ? RandomHost(s.k, s.m, 51) : RandomHost(s.m, s.k, 51);
    const HostMat b = s.tb ? RandomHost(s.n, s.k, 52) : RandomHost(s.k, s.n, 52);
    const HostMat c0 = RandomHost(s.m, s.n, 53);
    std::vector<HostMat> results;
    for (int threads : {1, 2, 3, 4}) {
      const auto backend = CreateCpuBackend(threads);
      Matrix da = ToDevice(*backend, a), db = ToDevice(*backend, b), dc = ToDevice(*backend, c0);
      backend->Gemm(s.ta, s.tb, 1.0f, da, db, 0.25f, dc);
      results.push_back(ToHost(*backend, dc));
      if (threads == 2) {  // from inside another pool's task: the tiles run there, in order
        ThreadPool lanes(2);
        Matrix dc2 = ToDevice(*backend, c0);
        lanes.Run(2, [&](int64_t i) {
          if (i == 1) backend->Gemm(s.ta, s.tb, 1.0f, da, db, 0.25f, dc2);
        });
        results.push_back(ToHost(*backend, dc2));
      }
    }
    for (size_t i = 1; i < results.size(); ++i) {
      ASSERT_EQ(std::memcmp(results[i].v.data(), results[0].v.data(),
                            results[0].v.size() * sizeof(float)),
                0)
          << s.m << " x " << s.n << " x " << s.k << ": run " << i << " differs from 1 thread";
    }
  }
}

}  // namespace
}  // namespace mavg
