# Shared helpers for the end-to-end tests (sourced, not run). ctest sets MAVG (the binary),
# MAVG_SOURCE_DIR and MAVG_TEST_TMP.
set -euo pipefail
: "${MAVG:?run through ctest}" "${MAVG_SOURCE_DIR:?}" "${MAVG_TEST_TMP:?}"
WORK="$MAVG_TEST_TMP/$(basename "$0" .sh)"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# The kernels are mavg's choice unless a test sets OPENBLAS_CORETYPE itself: a caller's (some
# machines export one) would be recorded as the user's, changing what the kernel tests check.
unset OPENBLAS_CORETYPE

fail() { echo "FAIL: $*" >&2; exit 1; }

# contains [GREP-OPTIONS] PATTERN: whether stdin has a matching line, read to its end first.
# `cmd | grep -q` under pipefail fails at random: grep exits at the first match, and a cmd still
# writing dies of SIGPIPE (141), which pipefail reports as the pipeline's status.
contains() { local in; in=$(cat); grep -q "$@" <<<"$in"; }

# expect_error "needle" cmd...: the command must exit non-zero and print one error line that
# contains the needle.
expect_error() {
  local needle="$1"; shift
  local out rc=0
  out=$("$@" 2>&1 >/dev/null) || rc=$?
  [ "$rc" -ne 0 ] || fail "expected failure: $*"
  local last
  last=$(printf '%s\n' "$out" | grep '^mavg: error:' || true)
  [ -n "$last" ] || fail "no 'mavg: error:' line from: $* -- got: $out"
  [ "$(printf '%s\n' "$last" | wc -l)" -eq 1 ] || fail "more than one error line: $last"
  case "$last" in
    *"$needle"*) echo "ok: $needle" ;;
    *) fail "error '$last' lacks '$needle'" ;;
  esac
}

json_get() {  # json_get FILE KEY -> value
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v[sys.argv[2]])' "$1" "$2"
}

# A small Fashion-MNIST copy (needs Debian's dataset-fashion-mnist; scripts/setup.sh installs it).
make_small_fmnist() {  # make_small_fmnist DIR TRAIN_LIMIT TEST_LIMIT
  "$MAVG" -q data fmnist --out "$1" --train-limit "$2" --test-limit "$3" --force >/dev/null
}

# small_base FILE HIDDEN_DIM EPOCHS: the sweep tests' base config, one hidden layer at a constant
# lr on make_small_fmnist's data/.
small_base() {
  cat > "$1" <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 1, hidden_dim: $2}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: $3}
YAML
}

# fake_slurm: a SLURM of scripts on PATH, for tests of what mavg hands it: sbatch keeps each
# script in $WORK/kept/ and answers job id 4242, scontrol logs its arguments to
# $WORK/scontrol.txt, squeue knows no job.
fake_slurm() {
  mkdir -p "$WORK/fake" "$WORK/kept"
  cat > "$WORK/fake/sbatch" <<EOF
#!/bin/bash
for a in "\$@"; do script="\$a"; done
cp "\$script" "$WORK/kept/\$(basename "\$script")"
echo 4242
EOF
  cat > "$WORK/fake/scontrol" <<EOF
#!/bin/bash
echo "scontrol \$*" >> "$WORK/scontrol.txt"
EOF
  printf '#!/bin/bash\nexit 0\n' > "$WORK/fake/squeue"
  chmod +x "$WORK/fake/"*
  export PATH="$WORK/fake:$PATH"
}
