#!/usr/bin/env bash
# Sets up (dependencies + build) and runs every test except the `gpu` and `bench` labels.
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit  or  scripts/test.sh -R Config
#
#   scripts/test.sh --sanitize   the same code under AddressSanitizer + UndefinedBehaviorSanitizer
#                                (Clang, CPU-only, in build-asan/): the unit and e2e suites, and
#                                each fuzz target for 20 s (label fuzz; scripts/fuzz.sh for more)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = --sanitize ]; then
  shift
  export MAVG_BUILD_DIR="${MAVG_SANITIZE_BUILD_DIR:-build-asan}"
  export MAVG_CMAKE_ARGS="-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DMAVG_FUZZ=ON -DMAVG_WITH_CUDA=OFF ${MAVG_CMAKE_ARGS:-}"
  # A finding stops the process with a stack: the test fails and its log says where.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
  scripts/setup.sh
  ctest --test-dir "$MAVG_BUILD_DIR" --output-on-failure -L 'unit|e2e|fuzz' -j "$(nproc)" "$@"
  exit
fi
scripts/setup.sh
build_dir="${MAVG_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -LE 'gpu|bench' -j "$(nproc)" "$@"
