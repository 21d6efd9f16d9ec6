#!/usr/bin/env bash
# Sets up (dependencies + build) and runs every test except the `gpu` and `bench` labels.
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit  or  scripts/test.sh -R Config
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
build_dir="${MAVG_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -LE 'gpu|bench' -j "$(nproc)" "$@"
