#!/usr/bin/env bash
# A run's model is the same bits at 1, 2, 3 and 4 threads (more threads than this machine's
# cores included), in turn or two at once, as MPI ranks or simulated workers: for SGD, NG-SGD,
# RBM pretraining and every averaging algorithm (docs/algorithms.md §1h). The threads are not
# part of the run id, so nothing else may depend on them.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 4000 500
# Layers wide enough that every hidden layer's GEMMs are cut into tiles (gemm_tiles.h).
cat > m.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 512}
optimizer: {minibatch: 256}
schedule: {type: exponential, lr: 0.002, final_ratio: 0.5, epochs: 2}
parallel: {workers: 2, average_every: 2}
YAML
same() {  # same A B WHAT: the two models are identical
  "$MAVG" model diff "$1/model.bin" "$2/model.bin" --max-rel 0 > /dev/null ||
    fail "$3: $("$MAVG" model diff "$1/model.bin" "$2/model.bin")"
}
train() {  # train OUT THREADS MODE [--set ...]
  local out=$1 threads=$2 mode=$3
  shift 3
  if [ "$mode" = mpi ]; then
    local ranks
    ranks=$("$MAVG" -q train m.yaml "$@" --dump-config | sed -n 's/^  workers: //p')
    "${MPIRUN[@]}" -np "$ranks" "$MAVG" -q train m.yaml "$@" --set parallel.mode=mpi \
      --set device_options.threads="$threads" --out "$out" --no-progress > /dev/null
  else
    "$MAVG" -q train m.yaml "$@" --set device_options.threads="$threads" --out "$out" \
      --no-progress > /dev/null
  fi
  [ "$(json_get "$out/result.json" status)" = completed ] || fail "$out: $(cat "$out/result.json")"
}

# threads x mode x optimizer
for opt in sgd ngsgd; do
  sets=(--set optimizer.type=$opt)
  [ $opt = ngsgd ] && sets+=(--set schedule.lr=0.008)
  train $opt-simulated-1 1 simulated "${sets[@]}"
  for mode in simulated mpi; do
    for t in 1 2 3 4; do
      [ "$mode-$t" = simulated-1 ] && continue
      train $opt-$mode-$t $t $mode "${sets[@]}"
      same $opt-simulated-1 $opt-$mode-$t "$opt, $mode, $t threads vs simulated, 1 thread"
    done
  done
  echo "ok: $opt: simulated and mpi at 1-4 threads, one model"
done
# Two at once, on 1 and 2 threads: the same model as either alone.
train at-once-1 1 simulated & p1=$!
train at-once-2 2 simulated & p2=$!
wait $p1 && wait $p2 || fail "runs at once failed"
same sgd-simulated-1 at-once-1 "at once, 1 thread"
same sgd-simulated-1 at-once-2 "at once, 2 threads"
echo "ok: two runs at once"

# RBM pretraining (the stack is built anew by each run: no cache), then 2 workers.
rbm=(--set model.init=rbm --set pretrain.rbm.vis_bias_utts=500 --cache-dir '')
train rbm-1 1 simulated "${rbm[@]}"
train rbm-3 3 simulated "${rbm[@]}"
train rbm-mpi-2 2 mpi "${rbm[@]}"
same rbm-1 rbm-3 "rbm, 3 threads"
same rbm-1 rbm-mpi-2 "rbm, mpi with 2 threads"
echo "ok: rbm pretraining"

# Every averaging algorithm: BMUF, overlapped, two-level (4 workers in groups of 2; sums in rank
# order, so that 4 MPI ranks add as simulated workers do).
algos=("bmuf:--set parallel.algorithm=bmuf"
       "overlap:--set parallel.overlap=true"
       "two-level:--set parallel.workers=4 --set parallel.group_size=2 --set parallel.average_every_global=4 --set parallel.deterministic=true")
for entry in "${algos[@]}"; do
  name=${entry%%:*}
  read -ra sets <<< "${entry#*:}"
  train $name-1 1 simulated "${sets[@]}"
  train $name-4 4 simulated "${sets[@]}"
  train $name-mpi-2 2 mpi "${sets[@]}"
  same $name-1 $name-4 "$name, 4 threads"
  same $name-1 $name-mpi-2 "$name, mpi with 2 threads"
  echo "ok: $name"
done
echo PASS
