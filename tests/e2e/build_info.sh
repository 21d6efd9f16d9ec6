#!/usr/bin/env bash
# cmake/BuildInfo.cmake's two hashes: the code version changes with any engine source a run
# executes (not the reports'), the pretraining code version (part of the RBM stack cache key)
# only with the sources a pretrained stack depends on (pretrain/, backend/, data/, nn/,
# core/rng), so a stale-rerun after a change to the pretraining code pretrains again instead of
# reloading an old stack.
source "$(dirname "$0")/lib.bash"
mkdir -p tree
cp -r "$MAVG_SOURCE_DIR/engine" "$MAVG_SOURCE_DIR/cmake" "$MAVG_SOURCE_DIR/CMakeLists.txt" tree/
versions() {  # prints "CODE PRETRAIN" for the tree as it is
  cmake -DSRC="$PWD/tree" -DOUT="$PWD/info.cpp" -DBUILD_TYPE=x -DWITH_CUDA=false -DCOMPILER=x \
    -P "$MAVG_SOURCE_DIR/cmake/BuildInfo.cmake"
  python3 - <<'PY'
import re
t = open("info.cpp").read()
print(re.search(r'kCodeVersion = "(\w+)"', t)[1], re.search(r'kPretrainCodeVersion = "(\w+)"', t)[1])
PY
}
read -r code0 pre0 < <(versions)
[ ${#pre0} -eq 16 ] || fail "no pretraining code version: '$pre0'"
echo "// a change to the trainer" >> tree/engine/train/trainer.cpp
read -r code1 pre1 < <(versions)
[ "$code1" != "$code0" ] || fail "the code version ignored a trainer change"
[ "$pre1" = "$pre0" ] || fail "a trainer change changed the pretraining code version"
for f in engine/pretrain/rbm.cpp engine/backend/cpu/cpu_backend.cpp engine/data/minibatch.cpp engine/core/rng.cpp; do
  cp "$MAVG_SOURCE_DIR/$f" "tree/$f.orig"
  echo "// a change" >> "tree/$f"
  read -r _ pre2 < <(versions)
  [ "$pre2" != "$pre0" ] || fail "a change to $f kept the pretraining code version"
  mv "tree/$f.orig" "tree/$f"
done
read -r code3 pre3 < <(versions)
[ "$pre3" = "$pre0" ] || fail "restoring the sources did not restore the version"
# Only the engine's sources count: CMakeLists.txt files elsewhere in the tree (tests/, a build
# directory's scratch projects) and other files under engine/ leave both versions as they were.
mkdir -p tree/tests tree/build/CMakeFiles/scratch tree/docs
echo "add_test(x)" > tree/tests/CMakeLists.txt
echo "project(scratch)" > tree/build/CMakeFiles/scratch/CMakeLists.txt
echo "notes" > tree/engine/NOTES.txt
echo "notes" > tree/docs/a.cpp
# The reports read finished runs and do not run in them: a change there leaves a run current.
echo "// a change" >> tree/engine/report/stats.cpp
echo "// a change" >> tree/engine/cli/cmd_report.cpp
read -r code4 pre4 < <(versions)
[ "$code4" = "$code3" ] || fail "files outside the sources a run executes changed the code version"
[ "$pre4" = "$pre0" ] || fail "files outside the engine's sources changed the pretraining version"
echo "# a change" >> tree/CMakeLists.txt
read -r code5 _ < <(versions)
[ "$code5" != "$code3" ] || fail "the code version ignored a change to the top CMakeLists.txt"
echo PASS
