#!/usr/bin/env bash
# Under mpirun: every rank settles its own OpenBLAS kernels (a wrong choice corrected in each),
# ranks running different kernels are told and recorded, and simulated workers stepping at once
# (two threads: one GEMM thread each) equal MPI ranks with one thread each, bit for bit.
source "$(dirname "$0")/lib.bash"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: not an x86-64 machine"; exit 77; }
make_small_fmnist data 2000 300
cat > k.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 1, hidden_dim: 32}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: 1}
parallel: {workers: 2, average_every: 4, deterministic: true}
device_options: {threads: 1}
YAML
"$MAVG" devices --json own.json >/dev/null
read -r family isa < <(python3 -c 'import json; c = json.load(open("own.json"))["cpu"]; print(c["blas_kernels"], c["isa"])')

# Simulated workers at once (2 threads) = 2 ranks with a thread each, bit for bit.
"$MAVG" -q train k.yaml --set device_options.threads=2 --out sim --no-progress
"${MPIRUN[@]}" -np 2 "$MAVG" -q train k.yaml --set parallel.mode=mpi --out mpi --no-progress
"$MAVG" model diff sim/model.bin mpi/model.bin --max-rel 0 || fail "workers at once differ from MPI ranks"
[ "$(json_get mpi/result.json blas_kernels)" = "OpenBLAS $family" ] ||
  fail "mpi: $(json_get mpi/result.json blas_kernels), expected OpenBLAS $family"

if [ "$isa" != SSE3 ] && [ "$isa" != SSE2 ]; then
  # Every rank corrects OpenBLAS's (simulated) Prescott for itself.
  "${MPIRUN[@]}" -np 2 -x MAVG_TEST_OPENBLAS_START=Prescott "$MAVG" -q train k.yaml \
    --set parallel.mode=mpi --out mpi-fixed --no-progress
  python3 - mpi-fixed/result.json "$family" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["blas_kernels"] == "OpenBLAS " + sys.argv[2], r["blas_kernels"]  # no rank differs
assert r["build"]["blas_kernels_by"] == "mavg", r["build"]
PY
  # One rank told to run Prescott by its user: the run says its ranks differ.
  "${MPIRUN[@]}" -np 1 "$MAVG" -q train k.yaml --set parallel.mode=mpi --out mpi-mixed --no-progress : \
    -np 1 -x OPENBLAS_CORETYPE=Prescott "$MAVG" -q train k.yaml --set parallel.mode=mpi \
    --out mpi-mixed --no-progress 2> mixed.log
  grep -q "the MPI ranks run different BLAS kernels" mixed.log || fail "no warning: $(cat mixed.log)"
  case "$(json_get mpi-mixed/result.json blas_kernels)" in
    *"other ranks differ"*) echo "ok: mixed kernels recorded" ;;
    *) fail "mixed kernels not recorded: $(json_get mpi-mixed/result.json blas_kernels)" ;;
  esac
fi
echo PASS
