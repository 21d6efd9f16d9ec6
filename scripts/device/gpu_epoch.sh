#!/usr/bin/env bash
# gpu_epoch.sh [--rehearse] MAVG WORKDIR -- end-to-end GPU check: one epoch of training on a tiny synthetic
# corpus with device=cuda and with device=cpu (same config, same seed), then the two runs' final
# CV loss and CV frame accuracy must agree within a tolerance (below).
#
# Run on the GPU machine; check.sh runs it as its step "gpu_epoch":
#   scripts/device/gpu_epoch.sh build/bin/mavg /tmp/gpu-epoch
# Exit 0: agree (prints both runs' numbers); 1: disagree or a run failed; 77 (one line
# "skipped: ..."): no CUDA device visible (`mavg devices --json` reports count 0). Needs python3 (standard library only). Takes ~10 s.
# --rehearse (check.sh --rehearse; no device needed): `mavg config check` must accept the cuda
# run's config, then both runs go on the CPU (a twentieth of the data, a small network, one
# thread) and must agree within the tolerances.
#
# The data: tests/e2e builds tiny corpora with `mavg data digits` (TTS) or `mavg data fmnist`
# (Debian's dataset package); neither is on the GPU machine, so tiny_data.py synthesises one
# (40-dim frames, 24 overlapping classes, 400 utterances / ~40k frames; CV accuracy ~58 %).
#
# The tolerance: |cv_loss_cuda - cv_loss_cpu| / cv_loss_cpu <= 2e-3 and |cv_acc difference| <=
# 0.5 percentage points. The runs cannot agree bit for bit: cuBLAS and OpenBLAS accumulate each
# GEMM's float32 sums in different orders (and the GPU's reductions differ again), so every step
# differs by relative ~1e-6. Those differences grow over an epoch of SGD steps -- the dynamics
# are chaotic in the parameters but contractive in the loss -- so the parameters drift apart
# while the epoch's summary statistics stay close: two CPU runs with 1 and 2 OpenBLAS threads
# (just a different summation order) already differ by ~1e-8 in CV loss here. 2e-3 leaves
# room for the GPU's own orders (cuBLAS may split k) and is far below what a real bug (a wrong
# transpose, a missed bias, a stale buffer) does to a 156-step epoch; 0.5 pp is 42 of the 8.5k
# dev frames.
set -euo pipefail

REHEARSE=""
if [ "${1:-}" = --rehearse ]; then REHEARSE=1; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--rehearse] MAVG WORKDIR" >&2; exit 2; }
MAVG=$1
WORK=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REL_LOSS_TOL=2e-3
ACC_TOL_PP=0.5

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

if [ -z "$REHEARSE" ]; then
  "$MAVG" -q devices --json "$WORK/devices.json" > "$WORK/devices.txt" 2>&1 ||
    { echo "FAIL: mavg devices --json exited non-zero: $(tail -3 "$WORK/devices.txt")"; exit 1; }
  count=$(python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["count"]))' "$WORK/devices.json")
  if [ "$count" -eq 0 ]; then
    echo "skipped: no CUDA device visible"
    exit 77
  fi
fi

rm -rf "$WORK/data" "$WORK/cpu" "$WORK/cuda"
python3 "$HERE/tiny_data.py" "$WORK/data" --seed 1 ${REHEARSE:+--train-utts 20 --dev-utts 5}
cat > "$WORK/epoch.yaml" <<YAML
data: {train: $WORK/data/train, dev: $WORK/data/dev, context: 5, cmvn: global}
model: {hidden_layers: 3, hidden_dim: 512, activation: sigmoid}
optimizer: {type: sgd, minibatch: 256}
schedule: {type: constant, lr: 0.008, epochs: 1}
seed: 777
YAML
if [ -n "$REHEARSE" ]; then
  "$MAVG" -q config check "$WORK/epoch.yaml" --set device=cuda > "$WORK/check.txt" 2>&1 ||
    { echo "FAIL: mavg config check refuses the cuda run: $(tail -3 "$WORK/check.txt")"; exit 1; }
fi
# In a rehearsal the "cuda" run is a second CPU run, both small and on one thread.
small=()
[ -z "$REHEARSE" ] || small=(--set model.hidden_dim=32 --set device_options.threads=1
                              --set schedule.collapse.chance_fraction=0)
for dev in cpu cuda; do
  run_dev=$dev
  [ -z "$REHEARSE" ] || run_dev=cpu
  if ! "$MAVG" -q train "$WORK/epoch.yaml" --set device=$run_dev "${small[@]}" --out "$WORK/$dev" \
       --no-progress --cache-dir '' > "$WORK/$dev.txt" 2>&1; then
    echo "FAIL: the device=$dev run failed: $(grep -m1 -E 'error' "$WORK/$dev.txt" || tail -1 "$WORK/$dev.txt")"
    tail -5 "$WORK/$dev.txt"
    exit 1
  fi
done

python3 - "$WORK" "$REL_LOSS_TOL" "$ACC_TOL_PP" "${REHEARSE:-0}" <<'PY'
import json, sys
work, rel_tol, acc_tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rehearsal = sys.argv[4] == "1"
r = {d: json.load(open(f"{work}/{d}/result.json")) for d in ("cpu", "cuda")}
backend = r["cuda"].get("build", {}).get("device", "")
loss = {d: r[d]["cv_loss"] for d in r}
acc = {d: 100.0 * r[d]["cv_acc"] for d in r}
rel = abs(loss["cuda"] - loss["cpu"]) / abs(loss["cpu"])
dacc = abs(acc["cuda"] - acc["cpu"])
out = {"cv_loss_cpu": loss["cpu"], "cv_loss_cuda": loss["cuda"], "cv_loss_rel_diff": rel,
       "cv_acc_cpu_pct": acc["cpu"], "cv_acc_cuda_pct": acc["cuda"], "cv_acc_diff_pp": dacc,
       "rel_loss_tol": rel_tol, "acc_tol_pp": acc_tol, "cuda_backend": backend,
       "frames": r["cuda"].get("frames"), "wall_s_cpu": r["cpu"].get("wall_s"),
       "wall_s_cuda": r["cuda"].get("wall_s")}
on_cpu = backend.lower().startswith("cpu") and not rehearsal
ok = rel <= rel_tol and dacc <= acc_tol and not on_cpu
out["pass"] = ok
out["rehearsal"] = rehearsal
json.dump(out, open(f"{work}/compare.json", "w"), indent=1)
print(f"cpu : cv_loss {loss['cpu']:.6f}  cv_acc {acc['cpu']:.3f} %  ({r['cpu'].get('wall_s', 0):.1f} s)")
print(f"cuda: cv_loss {loss['cuda']:.6f}  cv_acc {acc['cuda']:.3f} %  ({r['cuda'].get('wall_s', 0):.1f} s; {backend})")
problems = []
if rel > rel_tol:
    problems.append("CV loss out of tolerance")
if dacc > acc_tol:
    problems.append("CV accuracy out of tolerance")
if on_cpu:
    problems.append(f"the device=cuda run reports a CPU backend ({backend[:40]})")
# The last line is check.sh's note for the step.
print(f"{'PASS' if ok else 'FAIL: ' + '; '.join(problems) + ' --'}"
      f"{' (rehearsal: both runs on the CPU)' if rehearsal else ''} cv_loss cpu {loss['cpu']:.6f} "
      f"cuda {loss['cuda']:.6f} (rel diff {rel:.2e}, tol {rel_tol:g}); cv_acc cpu {acc['cpu']:.3f} % "
      f"cuda {acc['cuda']:.3f} % (diff {dacc:.3f} pp, tol {acc_tol:g})")
sys.exit(0 if ok else 1)
PY
