#!/usr/bin/env bash
# The GPU-machine scripts (scripts/device/) on this machine: bundle.sh packs the build this test
# runs from, under the 60 MiB copy limit; the bundle's own libraries suffice (mavg starts under
# env -i with only the bundle's lib/ on LD_LIBRARY_PATH, and ldd resolves every library that is
# neither glibc nor CUDA into that lib/); check.sh run from the bundle on a machine without a
# CUDA device (--no-device-ok) records the device query as passed with count 0 and every GPU step
# as skipped, and leaves at most 4 files in its output folder; packing again gives the same files.
# Then what the GPU machine would run, before it does:
#   * check.sh --rehearse from the bundle: every step's commands on the CPU (tiny_data.py's data
#     through mavg's reader, gpu_epoch.sh's and the memcheck step's `mavg train` lines, the five
#     benchmarks, the test executables with their filters), each device line accepted first by
#     `mavg config check` as written; every step passes, and the plan fits the budget;
#   * the verdicts: summarize.py's rules on fake step results, and check.sh over fake test
#     executables and a fake mavg that sees one device: a failing gpu_backend keeps its first
#     error (buried in a long log) in summary.json and logs.txt; a skipped CUDA test, or no
#     /cuda test run, fails; a step cut by the budget is inconclusive (exit 3), not failed.
# ~40 s, most of it xz and loading CUDA's libraries.
source "$(dirname "$0")/lib.bash"
DEV="$MAVG_SOURCE_DIR/scripts/device"
BUILD=$(dirname "$(dirname "$MAVG")")
B="$WORK/bundle"

# xz -3 instead of the default -6 halves the packing time; its bundle is larger, so one that fits
# at -3 fits at -6.
MAVG_BUNDLE_XZ_LEVEL=3 bash "$DEV/bundle.sh" "$BUILD" "$B" > bundle.txt 2>&1 || fail "bundle.sh: $(cat bundle.txt)"
cat bundle.txt
for f in MANIFEST.txt TESTS.txt check.sh bin/mavg configs/digits.yaml configs/paper-net.yaml \
         scripts/device/check.sh scripts/device/gpu_epoch.sh scripts/device/unpack.sh; do
  [ -s "$B/$f" ] || fail "bundle lacks $f"
done
[ -n "$(find "$B/bin" -name 'unit_*')" ] || fail "no unit test executables in the bundle"
size=$(du -sb "$B" | cut -f1)
[ "$size" -le $((60 * 1024 * 1024)) ] || fail "bundle is $size bytes, over 60 MiB"
bad=$(find "$B/lib" -printf '%f\n' | grep -E '^(libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libcuda\.so|libcudart|libcublas)' || true)
[ -z "$bad" ] || fail "glibc, driver or CUDA libraries bundled: $bad"
grep -q 'bin/mavg' "$B/MANIFEST.txt" || fail "MANIFEST.txt does not list bin/mavg"

libdir=$(bash "$B/scripts/device/unpack.sh" "$B")
[ "$libdir" = "$B/lib" ] || fail "unpack.sh unpacked into '$libdir', not the bundle's lib/"
[ -z "$(find "$B/lib" "$B/bin" -name '*.xz' | while read -r x; do [ -e "${x%.xz}" ] || echo "$x"; done)" ] ||
  fail "unpack.sh left compressed libraries or executables unpacked"
[ -n "$(find "$B/bin" -name 'unit_*.xz')" ] || fail "the test executables are not stored compressed"
for x in "$B"/bin/*.xz; do [ -x "${x%.xz}" ] || fail "unpack.sh left ${x%.xz} not executable"; done
bash "$B/scripts/device/unpack.sh" "$B" > /dev/null || fail "unpack.sh is not idempotent"

env -i LD_LIBRARY_PATH="$B/lib" "$B/bin/mavg" --help > help.txt 2>&1 || fail "bundled mavg does not start: $(cat help.txt)"
grep -q 'Subcommands:' help.txt || fail "unexpected --help output: $(cat help.txt)"
# The proof: apart from glibc and CUDA, every library resolves into the bundle's lib/.
for exe in "$B"/bin/*; do
  case "$exe" in *.xz) continue ;; esac  # the packed test executables, unpacked beside them
  env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$B/lib" ldd "$exe" > ldd.txt 2>&1 || fail "ldd $exe: $(cat ldd.txt)"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case "$name" in
      libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.*) continue ;;
      libcuda.so* | libnvidia-* | libcudart.so* | libcublas* | libcurand* | libcusolver* | libcusparse* | libcufft* | libnccl*) continue ;;
    esac
    case "$path" in /usr/local/cuda*) continue ;; esac
    [ "$path" != "not" ] || fail "$(basename "$exe"): $name not found with the bundle's lib/"
    [ "$(dirname "$(readlink -f "$path")")" = "$(readlink -f "$B/lib")" ] ||
      fail "$(basename "$exe"): $name resolves to $path, outside the bundle"
  done < ldd.txt
done
env -i LD_LIBRARY_PATH="$B/lib" "$B/bin/unit_core" --gtest_list_tests > /dev/null 2>&1 ||
  fail "a bundled unit test executable does not start"
echo "ok: bundled mavg and tests load only the bundle's libraries (besides glibc and CUDA)"

# check.sh from the bundle, here (no CUDA device): device query passes with count 0, the GPU
# steps are skipped, not failed.
rc=0
bash "$B/check.sh" --out "$WORK/out" --budget-s 60 --no-device-ok > check.txt 2>&1 || rc=$?
cat check.txt
[ "$rc" -eq 0 ] || fail "check.sh exited $rc"
[ -s "$WORK/out/summary.json" ] || fail "no summary.json"
[ "$(find "$WORK/out" -type f | wc -l)" -le 4 ] || fail "more than 4 files in check.sh's output: $(ls "$WORK/out")"
python3 - "$WORK/out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
steps = {x["name"]: x for x in s["steps"]}
order = [x["name"] for x in s["steps"]]
assert order == ["device_query", "unit_gpu", "gpu_epoch", "memcheck", "bench_train_sgd",
                 "bench_train_ngsgd", "bench_train_tf32", "bench_replicas", "bench_average"], order
dq = steps["device_query"]
assert dq["status"] == "pass", dq
assert s["device_query"]["mavg_devices"]["count"] == 0, s["device_query"]
for name in order[1:]:
    assert steps[name]["status"] == "skip", steps[name]
    assert "no CUDA device visible" in steps[name]["note"], steps[name]
assert s["result"] == "pass", s["result"]
print("ok: device query count 0, GPU steps skipped")
PY
# Without --no-device-ok a machine without a visible device cannot pass.
rc=0
bash "$DEV/check.sh" --build "$BUILD" --out "$WORK/out-nodev" --only bench_average > check-nodev.txt 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "check.sh without a device and without --no-device-ok exited $rc, not 1: $(cat check-nodev.txt)"
grep -q '^device_query  *fail .*no CUDA device visible' "$WORK/out-nodev/summary.txt" ||
  fail "no failed device query in $(cat "$WORK/out-nodev/summary.txt")"
echo "ok: no device and no --no-device-ok: the device query fails"

# The rehearsal: every step's commands on the CPU, from the bundle.
rc=0
bash "$B/check.sh" --rehearse --out "$WORK/rehearsal" --work "$WORK/rehearsal-work" > rehearsal.txt 2>&1 || rc=$?
cat rehearsal.txt
[ "$rc" -eq 0 ] || fail "check.sh --rehearse exited $rc (a step's command does not work on the CPU)"
python3 - "$WORK/rehearsal/summary.json" "$WORK/rehearsal-work" <<'PY'
import json, os, sys
s, work = json.load(open(sys.argv[1])), sys.argv[2]
assert s["rehearsal"] and not s["ran_on_a_gpu"] and s["result"] == "pass", s["result"]
steps = {x["name"]: x for x in s["steps"]}
for name, st in steps.items():
    assert st["status"] == "pass", st
# Each device line was accepted as written by `mavg config check` (device=cuda, TF32 on), then run.
for name in ("memcheck", "bench_train_sgd", "bench_train_tf32", "bench_replicas", "bench_average"):
    log = open(f"{work}/logs/{name}.log").read()
    assert "rehearsal: mavg config check" in log and ": ok, run id" in log, (name, log[-2000:])
assert "device_options.tf32=true" in open(f"{work}/logs/bench_train_tf32.log").read()
assert ": ok, run id" in open(f"{work}/gpu_epoch/check.txt").read()
# tiny_data.py's corpus went through mavg's reader (a completed run on it) in both training steps.
for run in ("gpu_epoch/cpu", "gpu_epoch/cuda", "memcheck/run"):
    r = json.load(open(f"{work}/{run}/result.json"))
    assert r["status"] == "completed" and r["frames"] > 0, (run, r)
# The tests ran with their filters: gpu_backend's tests (skipped: no device) and a unit executable.
t = s["tests"]
assert t["gpu_backend"]["executables"] == 1 and t["gpu_backend"]["skipped"] > 0, t["gpu_backend"]
assert t["unit"]["executables"] == 1 and t["unit"]["passed"] > 0, t["unit"]
parts = {p["name"]: p for p in steps["memcheck"]["parts"]}
assert parts["memcheck"]["status"] == "pass" and parts["initcheck"]["status"] == "pass", parts
# Every benchmark's figure beside its reference.
for name in ("train_sgd", "train_ngsgd", "train_tf32", "replicas", "average"):
    b = s["bench"][name]
    assert b.get("figure") and b.get("reference") and b.get("ratio") is not None, (name, b)
assert s["bench"]["train_tf32"].get("vs_train_sgd"), s["bench"]["train_tf32"]
# The plan: the limits fit the default budget with room for set-up, the estimate is <= 5 minutes.
p = s["plan"]
assert p["budget_s"] == 300 and p["limits_s"] + 10 <= p["budget_s"], p
assert 0 < p["expected_s_on_h200"] <= 300, p
print(f"ok: rehearsal: every step passed on the CPU in {p['elapsed_s']:.0f} s")
PY
rm -rf "$WORK/rehearsal-work/lib"  # the unpacked libraries, ~100 MiB
grep -q 'limits add to [0-9]* s of the 300 s budget.*expected on an H200' rehearsal.txt ||
  fail "check.sh does not print its plan and estimate at the start"

# The verdicts: summarize.py's rules on fake step results.
PYTHONPATH="$DEV" python3 - <<'PY'
from summarize import (excerpt, first_error, out_of_time, part_verdict, result_of, step_verdict,
                       test_rules)

def step(name, rc, limit=30, own=30, flag="", note="n"):
    return {"name": name, "rc": str(rc), "seconds": 1.0, "limit_s": limit, "own_limit_s": own,
            "note": note, "flag": flag}

def part(name, rc, limit=30, own=30, note=""):
    return {"name": name, "rc": str(rc), "seconds": 1.0, "limit_s": limit, "own_limit_s": own,
            "log": "", "note": note}

# Out of time: the budget's doing is inconclusive; a step's own limit fails; a sanitizer's own
# limit is inconclusive (slow is not wrong).
assert out_of_time(20, 30, False)[0] == "inconclusive"
assert out_of_time(30, 30, False)[0] == "fail"
assert out_of_time(30, 30, True)[0] == "inconclusive"
assert step_verdict(step("bench_train_sgd", 124, 12, 15), [], True, False)[0] == "inconclusive"
assert step_verdict(step("bench_train_sgd", 124, 15, 15), [], True, False)[0] == "fail"
assert step_verdict(step("bench_average", 137, 12, 12), [], True, False)[0] == "fail"
assert step_verdict(step("memcheck", 124), [part("memcheck", 124, 50, 50)], True, False)[0] == "inconclusive"
assert step_verdict(step("memcheck", 124), [part("memcheck", 124, 10, 50)], True, False)[0] == "inconclusive"
assert step_verdict(step("memcheck", 1), [part("memcheck", 9), part("initcheck", 0)], True, False)[0] == "fail"
assert step_verdict(step("memcheck", 124), [part("memcheck", 0), part("initcheck", "notrun", 1, 25)],
                    True, False)[0] == "inconclusive"
assert step_verdict(step("x", 124, 0, 15, "budget_spent"), [], True, False)[0] == "inconclusive"
assert step_verdict(step("x", 143, 15, 15, "interrupted"), [], True, False)[0] == "inconclusive"
assert step_verdict(step("x", 77, 0, 15, "not_selected"), [], True, False)[0] == "skip"
assert part_verdict(part("unit_optim", "notrun", 0, 20))[0] == "inconclusive"
assert part_verdict(part("unit_optim", "notrun", 0, 0))[0] == "fail"
# A GPU step that skips with a device visible fails (not the sanitizer's: it may be absent);
# without a device, or in a rehearsal, it is a skip.
assert step_verdict(step("gpu_epoch", 77), [], True, False)[0] == "fail"
assert step_verdict(step("gpu_epoch", 77), [], False, False)[0] == "skip"
assert step_verdict(step("gpu_epoch", 77), [], True, True)[0] == "skip"
assert step_verdict(step("memcheck", 77), [], True, False)[0] == "skip"
assert step_verdict(step("memcheck", 77), [part("memcheck", 77)], True, False)[0] == "skip"

# The test step: skipped tests and missing /cuda instances with a device visible.
def group(passed=(), failed=(), skipped=()):
    return {"passed": len(passed), "failed": len(failed), "skipped": len(skipped),
            "cuda_instances_run": sum(n.endswith("/cuda") for n in list(passed) + list(failed)),
            "failed_tests": list(failed), "skipped_tests": list(skipped), "executables": 1,
            "seconds": 1.0, "problems": []}
good = {"gpu_backend": group(["CudaVsCpu.A"]), "unit": group(["AllBackends/Sgd.Step/cuda"])}
assert test_rules(good, True, True) == []
skipped = {"gpu_backend": group(["CudaVsCpu.A"]),
           "unit": group(["AllBackends/Sgd.Step/cuda"], skipped=["AllBackends/Sgd.Other/cuda"])}
assert "skipped with a CUDA device visible" in test_rules(skipped, True, True)[0]
assert test_rules(skipped, True, False) != []  # a skip counts even when time ran out
assert test_rules(skipped, False, True) == []  # no device: nothing to demand
no_cuda = {"gpu_backend": group(["CudaVsCpu.A"]), "unit": group(["Config.GpuKeys"])}
assert test_rules(no_cuda, True, True) == ["no /cuda test instance ran"]
assert test_rules(no_cuda, True, False) == []  # cut short: missing tests are not proof
none = {"gpu_backend": group(skipped=["CudaVsCpu.A"]), "unit": group(["AllBackends/Sgd.Step/cuda"])}
assert any("gpu_backend ran no test" in p for p in test_rules(none, True, True))
parts = [part("gpu_backend", 0, note="gpu_backend"), part("unit_optim", 0, note="unit")]
assert step_verdict(step("unit_gpu", 0), parts, True, False, no_cuda)[0] == "fail"
assert step_verdict(step("unit_gpu", 0), parts, True, False, good)[0] == "pass"
assert step_verdict(step("unit_gpu", 0), parts, True, True, no_cuda)[0] == "pass"  # rehearsal
assert result_of([{"status": "pass"}, {"status": "inconclusive"}]) == "inconclusive"
assert result_of([{"status": "fail"}, {"status": "inconclusive"}]) == "fail"
assert result_of([{"status": "pass"}, {"status": "skip"}]) == "pass"

# The first error survives a long log: logs.txt keeps it beside the head and tail.
lines = [f"noise {i}" for i in range(400)] + ["x.cu:12: CUDA error 700: an illegal memory access"] \
    + [f"after {i}" for i in range(400)]
assert "CUDA error 700" in first_error(lines)
kept = excerpt(lines)
assert any("CUDA error 700" in line for line in kept) and len(kept) < 300, len(kept)
assert first_error(["[ RUN      ] Backend.CudaIsAClearError", "[       OK ] Backend.CudaIsAClearError (0 ms)"]) is None
print("ok: verdict rules")
PY

# The verdicts end to end: check.sh over a fake build whose mavg sees one device.
F="$WORK/fake"
mkdir -p "$F/bin" "$F/tests" "$F/path"
cat > "$F/bin/mavg" <<'SH'
#!/usr/bin/env bash
case "$1" in
  --help) echo "Subcommands:" ;;
  devices) printf '{"count": 1, "devices": [{"index": 0, "name": "Fake H200", "memory_bytes": 150000000000, "compute_capability": "9.0"}]}\n' > "$3" ;;
  *) echo "fake mavg: $*" >&2; exit 1 ;;
esac
SH
cat > "$F/path/nvidia-smi" <<'SH'
#!/usr/bin/env bash
printf 'name, memory.total [MiB], driver_version, compute_cap\nFake H200, 143771 MiB, 580.65.06, 9.0\n'
SH
chmod +x "$F/bin/mavg" "$F/path/nvidia-smi"
# fake_gtest NAME SUITE RESULTS...: an executable that lists SUITE's tests and "runs" them: each
# RESULT is name:ok|fail|skip; FAKE_SCENARIO=slow makes it sleep; a failing test writes a long
# log with a CUDA error deep inside it.
fake_gtest() {
  local exe="$F/tests/$1"
  shift
  { echo '#!/usr/bin/env python3'
    echo "SUITE, RESULTS = '$1', '${*:2}'.split()"
    cat <<'PY'
import json, os, sys, time
tests = [r.rsplit(":", 1) for r in RESULTS]
if "--gtest_list_tests" in sys.argv:
    print(SUITE + ".")
    for name, _ in tests:
        print("  " + name)
    sys.exit()
if os.environ.get("FAKE_SCENARIO") == "slow":
    time.sleep(60)
out = [a.split(":", 1)[1] for a in sys.argv if a.startswith("--gtest_output=json:")][0]
suite, failed = [], False
for name, r in tests:
    print(f"[ RUN      ] {SUITE}.{name}")
    if r == "fail":
        print("\n".join(f"noise {i}" for i in range(300)))
        print("cuda_backend.cu:123: CUDA error 700 (an illegal memory access was encountered) in Gemm")
        print("\n".join(f"poisoned {i}" for i in range(400)))
        print(f"cuda_vs_cpu_test.cpp:70: Failure\n[  FAILED  ] {SUITE}.{name} (5 ms)")
        failed = True
    else:
        print(f"[  {'     OK' if r == 'ok' else 'SKIPPED'} ] {SUITE}.{name} (1 ms)")
    suite.append({"name": name, "classname": SUITE, "status": "RUN",
                  "result": "SKIPPED" if r == "skip" else "COMPLETED",
                  **({"failures": [{"failure": "CUDA error 700"}]} if r == "fail" else {})})
json.dump({"testsuites": [{"name": SUITE, "testsuite": suite}]}, open(out, "w"))
sys.exit(1 if failed else 0)
PY
  } > "$exe"
  chmod +x "$exe"
}
fake_check() {  # fake_check OUT ARGS...: check.sh over the fake build; sets rc
  local out=$1
  shift
  rc=0
  PATH="$F/path:$PATH" bash "$DEV/check.sh" --build "$F" --only unit_gpu --out "$WORK/$out" "$@" \
    > "$out.txt" 2>&1 || rc=$?
}

# 1. gpu_backend fails (its first error deep in a long log), a unit test skips on the device.
fake_gtest gpu_backend CudaVsCpu Gemm:ok Softmax:fail
fake_gtest unit_optim AllBackends/Sgd Step/cuda:ok Other/cuda:skip
fake_check fake1
[ "$rc" -eq 1 ] || fail "a failing gpu test: check.sh exited $rc, not 1: $(cat fake1.txt)"
python3 - "$WORK/fake1" <<'PY'
import json, sys
out = sys.argv[1]
s = json.load(open(f"{out}/summary.json"))
st = {x["name"]: x for x in s["steps"]}
assert s["result"] == "fail" and st["unit_gpu"]["status"] == "fail", st["unit_gpu"]
assert st["device_query"]["status"] == "pass" and s["device"]["name"] == "Fake H200", s["device"]
assert s["device"]["driver_version"] == "580.65.06", s["device"]
assert st["gpu_epoch"]["status"] == "skip", st["gpu_epoch"]  # not selected
assert s["first_failing_tests"] == ["CudaVsCpu.Softmax"], s["first_failing_tests"]
assert "CUDA error 700" in s["first_errors"]["unit_gpu/gpu_backend"], s["first_errors"]
assert "skipped with a CUDA device visible" in st["unit_gpu"]["note"], st["unit_gpu"]["note"]
assert "AllBackends/Sgd.Other/cuda" in s["tests"]["unit"]["skipped_tests"], s["tests"]
logs = open(f"{out}/logs.txt").read()
assert "CUDA error 700" in logs and "noise 200" not in logs, "logs.txt lost the first error"
assert "CUDA error 700" in open(f"{out}/summary.txt").read()
PY
echo "ok: a failing gpu test fails the check, its first error kept; a skipped /cuda test fails"

# 2. Everything passes, but no /cuda test instance runs: the device was not used.
fake_gtest gpu_backend CudaVsCpu Gemm:ok
fake_gtest unit_optim Config GpuKeys:ok
fake_check fake2
[ "$rc" -eq 1 ] || fail "no /cuda test: check.sh exited $rc, not 1: $(cat fake2.txt)"
grep -q 'unit_gpu .*fail .*no /cuda test instance ran' "$WORK/fake2/summary.txt" ||
  fail "no /cuda test run, yet: $(cat "$WORK/fake2/summary.txt")"
echo "ok: no /cuda test run fails the check"

# 3. The budget runs out inside gpu_backend: inconclusive, exit 3, not a failure.
FAKE_SCENARIO=slow fake_check fake3 --budget-s 7
[ "$rc" -eq 3 ] || fail "a step cut by the budget: check.sh exited $rc, not 3: $(cat fake3.txt)"
python3 - "$WORK/fake3/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
st = {x["name"]: x for x in s["steps"]}
assert s["result"] == "inconclusive" and s["failed_steps"] == [], s["result"]
assert st["unit_gpu"]["status"] == "inconclusive" and "budget" in st["unit_gpu"]["note"], st["unit_gpu"]
PY
echo "ok: a step cut by the budget is inconclusive (exit 3)"
# Idempotent: packing again over the used bundle (unpacked libraries, check.sh's leftovers) gives
# exactly the files its MANIFEST.txt lists (uncompressed this time, to save time: hence the limit).
MAVG_BUNDLE_XZ_MIN_KIB=1000000 MAVG_BUNDLE_LIMIT_MIB=1000 bash "$DEV/bundle.sh" "$BUILD" "$B" > bundle2.txt 2>&1 || fail "bundle.sh again: $(cat bundle2.txt)"
(cd "$B" && find . -type f ! -name MANIFEST.txt -printf '%P\n' | LC_ALL=C sort) > files.txt
awk '/^# size  path/ {on = 1; next} on && NF == 0 {exit} on {print $2}' "$B/MANIFEST.txt" | LC_ALL=C sort > manifest.txt
cmp -s files.txt manifest.txt || fail "bundle files and MANIFEST.txt differ: $(diff files.txt manifest.txt | head -5)"
rm -rf "$B"  # ~140 MiB once unpacked
echo PASS
