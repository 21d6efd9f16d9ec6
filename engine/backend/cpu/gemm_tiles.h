#pragma once
// How the CPU backend cuts a GEMM into tiles, each computed by one single-threaded BLAS call:
// a function of the product's shape alone, never of the thread count, so that a model is the
// same bits however many threads run the tiles (docs/algorithms.md §1h).
//
// OpenBLAS gives other bits for one product at another thread count: its threaded driver
// blocks the inner dimension differently, and small products take other kernels (Debian's
// 0.3.21, measured on a Xeon: 256 x 256 x 440 differs in 74 % of the outputs between 1 and 2
// threads on the Zen kernels, 128 x 512 x 784 in 80 % on SkylakeX's). A single-threaded call is
// deterministic, so a
// fixed set of tiles, each one call, gives one result at any thread count, run in any order.
//
// The price is the smaller calls: each packs its operands again, and the threads of one
// product no longer share a packed operand. C [m x n] is cut along its longer side (rows on a
// tie) into at most kMaxGemmTiles pieces of at least kMinGemmTileFlops, each a multiple of 64
// rows or columns and at least kMinGemmTileRows rows or kMinGemmTileCols columns; the shorter
// side stays whole. Chosen by measuring training steps (mavg bench train, against the build
// that called OpenBLAS on whole products; Xeon, SkylakeX kernels, 2 cores): 4 tiles cost 0-10 %
// of the step on one thread, 0-15 % on two for 512-unit layers and up, up to 30 % for a 2 x 256
// network (scripts/bench/determinism.sh, on a noisy host; the small networks' output layers, below
// kMinGemmTileFlops, stay whole and serial); 8 or 16 tiles, or both sides cut, cost 15-25 % on
// the paper's network (tiles under ~512 columns re-pack a 2 MB operand each). The cap also caps
// one worker's GEMMs at 4 threads: more cores are used by more workers (simulated workers
// stepping at once, MPI ranks), each with its own tiles.

#include <algorithm>
#include <cstdint>

namespace mavg {

struct GemmTiling {
  int64_t tile_rows = 0;  // rows of C per tile (the last may be shorter)
  int64_t tile_cols = 0;  // columns of C per tile
  int64_t Tiles(int64_t m, int64_t n) const {
    return ((m + tile_rows - 1) / tile_rows) * ((n + tile_cols - 1) / tile_cols);
  }
};

inline constexpr int64_t kMaxGemmTiles = 4;
inline constexpr double kMinGemmTileFlops = 8.0e6;
inline constexpr int64_t kMinGemmTileRows = 128;
inline constexpr int64_t kMinGemmTileCols = 256;

// The tiles of C = op(A) op(B) with C [m x n] and inner dimension k (all > 0).
inline GemmTiling GemmTilesOf(int64_t m, int64_t n, int64_t k) {
  const bool cut_cols = n > m;
  const int64_t len = cut_cols ? n : m;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * k;
  const int64_t want =
      std::clamp<int64_t>(static_cast<int64_t>(flops / kMinGemmTileFlops), 1, kMaxGemmTiles);
  int64_t chunk = (len + want - 1) / want;
  chunk = (chunk + 63) / 64 * 64;
  chunk = std::max(chunk, cut_cols ? kMinGemmTileCols : kMinGemmTileRows);
  if (chunk >= len) return GemmTiling{m, n};
  return cut_cols ? GemmTiling{m, chunk} : GemmTiling{chunk, n};
}

}  // namespace mavg
