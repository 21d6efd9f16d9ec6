#!/usr/bin/env bash
# Values from a spec or a flag that reach a generated batch script, a path or a claim, as a
# careful reviewer would try them:
# - every control character in every flag and spec value that reaches the sbatch script is
#   refused with one line naming it, before anything is written or claimed;
# - values without control characters that sbatch or bash would read differently (#, quotes,
#   blanks, $( ), ;) are written as one argument: a fake sbatch keeps the script, a parser that
#   reads #SBATCH lines as sbatch does finds every option mavg wrote with its exact value, and
#   the script, run as an array task, runs its run and nothing else;
# - a sweep name from any source is one safe path component;
# - a failure after a run is claimed ends it failed with the reason, never "running".
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 600 100
small_base base.yaml 8 1

fake_slurm  # (lib.bash: sbatch keeps each script in kept/)

spec() {  # spec FILE NAME RESOURCES
  printf 'name: %s\nbase: %s\ngrid: {schedule.lr: [0.004]}\nresources: %s\n' "$2" "$WORK/base.yaml" "$3" > "$1"
}

# 1. Control characters, in every flag and spec value that reaches the script.
spec ok.yaml ok '{time: "10:00"}'
for c in $'\n' $'\r' $'\t' $'\v' $'\f' $'\x01' $'\x7f'; do
  v="x${c}touch PWNED"
  shown=$(python3 -c 'import sys; print(repr(sys.argv[1]))' "$v")
  for flag in --partition --account --time; do
    expect_error "$flag 'x" "$MAVG" sweep run ok.yaml --launcher slurm --results res "$flag" "$v"
  done
  # Spec values: YAML double-quoted strings carry the character.
  esc=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$v")
  for key in qos constraint; do
    spec bad.yaml bad "{$key: $esc}"
    expect_error "resources.$key" "$MAVG" sweep run bad.yaml --launcher slurm --results res
  done
  spec bad.yaml bad "{sbatch: [$(python3 -c 'import json,sys; print(json.dumps("--comment=" + sys.argv[1]))' "$v")]}"
  expect_error "resources.sbatch entry" "$MAVG" sweep run bad.yaml --launcher slurm --results res
  [ ! -e res ] || fail "a refused value ($shown) left files: $(find res | head)"
  [ ! -e PWNED ] || fail "a hostile value ran"
done
echo "ok: control characters refused in every script value, nothing written"

# 2. Values sbatch and bash would split or cut, accepted and written as one word each, from a
# working directory whose name holds all of them.
odd="$WORK/w d 'q\" \$(touch PWNED) #x;y"
mkdir -p "$odd"
cp -r data "$odd/"
cd "$odd"
spec odd.yaml odd '{time: "10:00", constraint: "a100&ib", sbatch: ["--comment=a#b", "--mail-user=x@y.z"]}'
"$MAVG" sweep run odd.yaml --launcher slurm --results "r es" --partition 'gpu#1' --account "pro'j" > submit.txt 2>&1 ||
  fail "submission failed: $(cat submit.txt)"
script=$(ls "$WORK"/kept/*.sbatch)
python3 - "$script" "$odd" <<'PY'
import sys
# #SBATCH lines read as sbatch reads them (src/sbatch/opt.c): blanks split arguments outside
# quotes, a backslash makes the next character literal, an unquoted '#' ends the line; sbatch
# stops at the first line that is neither a comment nor blank.
def arguments(line):
    out, i, cur, have, quoted, q = [], 0, "", False, False, ""
    while i < len(line):
        c = line[i]
        if not quoted and c.isspace():
            if have: out.append(cur); cur, have = "", False
            i += 1; continue
        if c == "\\" and i + 1 < len(line):
            cur += line[i + 1]; have = True; i += 2; continue
        if quoted:
            if c == q: quoted = False
            else: cur += c
            i += 1; continue
        if c in "\"'":
            quoted, q, have = True, c, True; i += 1; continue
        if c == "#": break
        cur += c; have = True; i += 1
    assert not quoted, line
    if have: out.append(cur)
    return out
args = []
for line in open(sys.argv[1]).read().split("\n")[1:]:
    if line.startswith("#SBATCH"):
        args += arguments(line[len("#SBATCH"):])
    elif line.strip() and not line.startswith("#"):
        break
odd = sys.argv[2]
want = ["--partition=gpu#1", "--account=pro'j", "--constraint=a100&ib", "--comment=a#b",
        "--mail-user=x@y.z", "--chdir=" + odd, "--requeue", "--job-name=mavg-odd",
        "--output=" + odd + "/r es/runs/odd/slurm/logs/%A_%a.out", "--open-mode=append"]
for w in want:
    assert w in args, (w, args)
assert sum(a.startswith("--array") for a in args) == 1, args
assert sum(a.startswith("--partition") for a in args) == 1, args
print("ok: every #SBATCH option mavg wrote is read back as one argument with its value")
PY
( cd "$odd" && SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=4242 bash "$script" > task.txt 2>&1 ) ||
  fail "the array task failed: $(cat task.txt)"
[ ! -e "$WORK/PWNED" ] && [ ! -e "$odd/PWNED" ] && [ ! -e PWNED ] || fail "a value ran as a command"
run=$(ls -d "r es/runs/odd"/*/ | head -1)
[ "$(json_get "$run/result.json" status)" = completed ] || fail "the task's run did not complete"
cd "$WORK"
echo "ok: the task ran its run and nothing else"

# 3. Sweep names: one rule for the spec's name, the file's name and --name, checked before
# anything is created.
for name in '..' '.' '/abs' 'a/b' '-x' '.hidden' 'a b' "$(printf 'a%.0s' $(seq 101))"; do
  printf 'name: "%s"\nbase: base.yaml\ngrid: {schedule.lr: [0.004]}\n' "$name" > n.yaml
  expect_error "sweep name" "$MAVG" sweep run n.yaml --results res
  expect_error "--name" "$MAVG" sweep run --base base.yaml --grid schedule.lr=0.004 --name "$name" --results res
done
printf 'name: "a\\0b"\nbase: base.yaml\ngrid: {schedule.lr: [0.004]}\n' > nul.yaml
expect_error "a NUL byte" "$MAVG" sweep run nul.yaml --results res
printf 'base: base.yaml\ngrid: {schedule.lr: [0.004]}\n' > 'my sweep.yaml'
expect_error "the sweep name (the file's name" "$MAVG" sweep run 'my sweep.yaml' --results res
expect_error "sweep name" "$MAVG" sweep retry ../x --results res
[ ! -e res ] || fail "a refused name left files: $(find res | head)"
# A generated name follows the rule whatever the base file is called.
cp base.yaml 'my base.yaml'
"$MAVG" sweep plan --base 'my base.yaml' --grid schedule.lr=0.004 --results res > gen.txt
grep -q "my_base-" gen.txt || fail "generated name: $(head -3 gen.txt)"
echo "ok: names"

# 3b. The size of a sweep is refused before its values are looked at (linear and fast: a
# million-value axis took a minute and gigabytes when every value was checked first): the
# last value is bad, yet the answer is the size.
python3 -c 'print("name: huge\nbase: base.yaml\ngrid: {seed: [" + ",".join(map(str, range(1000000))) + ",x]}")' > huge.yaml
expect_error "the sweep has 1000001 runs" "$MAVG" sweep plan huge.yaml --results res
vals=$(python3 -c 'print(",".join(map(str, range(15000))) + ",x")')
expect_error "the sweep has 15001 runs" "$MAVG" sweep plan --base base.yaml --grid "seed=$vals" --results res
echo "ok: sizes first"

# 4. A failure after a run is claimed ends it failed with the reason: here the sweep's runs
# directory cannot be created (a file is in the way).
spec claim.yaml claim '{time: "10:00"}'
mkdir -p res2/runs
touch res2/runs/claim
rc=0
"$MAVG" sweep run claim.yaml --results res2 > claim.txt 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the sweep should fail"
"$MAVG" sweep status claim --results res2 > status.txt
grep -q "failed 1" status.txt || fail "the claimed run is not failed: $(cat status.txt)"
grep -q "failed to start" status.txt || fail "no reason: $(cat status.txt)"
! grep -q "running" status.txt || fail "a claim was left running: $(cat status.txt)"
echo PASS
