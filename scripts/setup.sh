#!/usr/bin/env bash
# Installs mavg's dependencies from Debian's apt (only what is missing) and builds everything
# with CMake into build/ (Release). Idempotent: a second run installs nothing and rebuilds only
# what changed. Nothing is downloaded except Debian packages.
#
#   scripts/setup.sh            dependencies + build
#   scripts/setup.sh --no-build dependencies only
#   scripts/setup.sh --bench    also python3-torch (only for scripts/bench/torch_peer.py)
#
# Environment: MAVG_BUILD_DIR (default build), MAVG_CMAKE_ARGS (extra configure arguments,
# e.g. "-DMAVG_WITH_CUDA=OFF" or "-DMAVG_SANITIZE=ON -DMAVG_WITH_CUDA=OFF").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=1
bench=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --bench) bench=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake git pkg-config python3
  libopenblas-openmp-dev       # BLAS (CPU backend), one thread per call (GEMM tiles)
  libyaml-cpp-dev              # configs and sweep specs
  nlohmann-json3-dev           # run files
  libfmt-dev libspdlog-dev     # formatting, logging
  libcli11-dev                 # command line
  libssl-dev                   # SHA-256 (run ids)
  zlib1g-dev                   # gzip'd idx files, CRC-32
  libopenmpi-dev openmpi-bin   # MPI ranks (parallel.mode: mpi)
  libsqlite3-dev               # results store
  libeigen3-dev                # symmetric eigendecompositions (NG-SGD)
  libfftw3-dev libsamplerate0-dev  # filterbank features, resampling
  flite1-dev libespeak-ng-dev espeak-ng-data  # TTS voices for the digits corpus
  python3-matplotlib python3-yaml python3-numpy  # analysis/plot.py (figures); numpy: tests
  python3-jinja2 libjs-jquery libjs-jquery-datatables  # mavg report html: the page, its sortable run list
  chromium chromium-driver python3-selenium  # tests: the report page in a headless browser
  python3-pandas               # tests: mavg report runs read as researchers would
  slurmctld slurmd slurm-client munge  # the SLURM launcher's tests (scripts/slurm/local-cluster.sh)
  libgtest-dev                 # tests
  clang libclang-rt-dev libomp-dev  # sanitizer build and fuzz targets (scripts/test.sh --sanitize)
  dataset-fashion-mnist        # built-in demo data
)
if [ "$bench" = 1 ]; then
  packages+=(python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
else
  echo "[setup] all packages present"
fi

[ "$build" = 1 ] || exit 0
build_dir="${MAVG_BUILD_DIR:-build}"
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${MAVG_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
echo "[setup] built $build_dir/bin/mavg"
