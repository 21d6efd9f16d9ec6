#!/usr/bin/env python3
"""summarize.py WORK OUT [--print-step NAME | --final] -- check.sh's verdicts and summaries.

check.sh records what happened (exit statuses, seconds, limits, logs); this decides what it
means, step by step, and writes OUT/summary.json, OUT/summary.txt and OUT/logs.txt. check.sh
calls it after every step (so a run cut short still leaves a summary): with --print-step NAME
it also prints that step's line; with --final it prints summary.txt and exits 0 (pass), 1 (a step
failed) or 3 (inconclusive, nothing failed). `summarize.py --bench-line JSON NAME` prints one
benchmark's figure beside its reference (check.sh's note for the step).

From WORK (check.sh's scratch folder):
  meta.txt        key=value lines (mode, budget_s, device_visible, rehearsal, limit_s.STEP, ...)
  steps.tsv       name, rc, seconds, limit_s, own_limit_s, note, flag -- one line per step;
                  flag: not_selected, budget_spent (not run) or interrupted (by a signal)
  parts.tsv       step, part, rc, seconds, limit_s, own_limit_s, log, note -- a step's parts
                  (each test executable, each sanitizer run); rc "notrun" when time ran out
                  before it; own_limit_s: what the part would have had without the budget
  tests/STEP/EXE.json, EXE.log   gtest's JSON results and the output of each test executable
  logs/STEP.log   each step's own output
  nvidia_smi.csv, devices.json, versions.json, gpu_epoch/compare.json, bench_*.json
Standard library only (the GPU machine has python3 and nothing else of ours).

The verdicts, each a pure function below (tests/e2e/device_scripts.sh drives them with fake
results): pass, fail, skip, inconclusive. Running out of time is inconclusive when the overall
budget cut the limit, or when a sanitizer ran out of its own (slow, not wrong); otherwise it
fails. With a CUDA device visible (and not in a rehearsal) a GPU step that skips fails (the
sanitizer steps excepted: no compute-sanitizer is not mavg's fault), and so do the test step's
skipped tests, gpu_backend running none, or no `/cuda` test instance running at all.
"""

import csv
import datetime
import glob
import json
import os
import re
import sys

TEST_STEP = "unit_gpu"
SANITIZER_PARTS = {"memcheck", "initcheck"}
MAY_SKIP_WITH_DEVICE = {"memcheck"}  # compute-sanitizer absent, or unable to attach
TIME_RCS = {"124", "137"}  # timeout's "ran out" (137: killed after the grace period)

# A line that reports an error: gtest's failure lines, CUDA and cuBLAS errors, aborts, the
# sanitizers' reports, mavg's one-line errors.
ERROR_RE = re.compile(r"Failure\b|[Ee]rror|ERROR|what\(\)|Aborted|Segmentation fault|terminate called"
                      r"|core dumped|^========= (Invalid|Program hit|Uninitialized|Leaked)|^FAIL")
GTEST_STATUS_RE = re.compile(r"^\[ *(RUN|OK|SKIPPED|PASSED|FAILED|=+|-+) *\]")


# ---- reading ---------------------------------------------------------------------------------
def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return {"unreadable": str(e)}


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def to_int(v, default=0):
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return default


def read_meta(work):
    meta = {}
    for line in read_lines(f"{work}/meta.txt"):
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v
    return meta


def read_steps(work):
    steps = []
    for line in read_lines(f"{work}/steps.tsv"):
        f = line.split("\t")
        if len(f) < 5:
            continue
        f += [""] * (7 - len(f))
        steps.append({"name": f[0], "rc": f[1], "seconds": float(f[2] or 0), "limit_s": to_int(f[3]),
                      "own_limit_s": to_int(f[4]), "note": f[5], "flag": f[6]})
    return steps


def read_parts(work):
    parts = {}
    for line in read_lines(f"{work}/parts.tsv"):
        f = line.split("\t")
        if len(f) < 7:
            continue
        f += [""] * (8 - len(f))
        parts.setdefault(f[0], []).append(
            {"name": f[1], "rc": f[2], "seconds": float(f[3] or 0), "limit_s": to_int(f[4]),
             "own_limit_s": to_int(f[5]), "log": f[6], "note": f[7]})
    return parts


def first_error_index(lines):
    """Index of the first line that reports an error (gtest's own status lines aside; its
    "[  FAILED  ]" line only when nothing else says more), or None."""
    failed_line = None
    for i, line in enumerate(lines):
        if GTEST_STATUS_RE.match(line):
            if failed_line is None and line.startswith("[  FAILED  ]"):
                failed_line = i
            continue
        if ERROR_RE.search(line):
            return i
    return failed_line


def first_error(lines, after=12, limit=1500):
    """The first error with a line before it and up to `after` lines of what follows."""
    i = first_error_index(lines)
    if i is None:
        return None
    block = []
    for line in lines[max(0, i - 1):i + 1 + after]:
        if block and line.startswith("[ RUN"):
            break
        block.append(line)
    text = "\n".join(block)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_gtest(json_path, log_path):
    """One test executable's results: from gtest's JSON, or from its output when the process died
    before writing it (then crashed_in names the test that was running)."""
    r = {"passed": [], "failed": [], "skipped": [], "crashed_in": None, "from": "json"}
    lines = read_lines(log_path)
    data = load_json(json_path)
    if isinstance(data, dict) and "testsuites" in data:
        for suite in data["testsuites"]:
            for t in suite.get("testsuite", []):
                if t.get("status") == "NOTRUN":
                    continue
                name = f"{t.get('classname', suite.get('name', '?'))}.{t.get('name', '?')}"
                if t.get("failures"):
                    r["failed"].append(name)
                elif t.get("result") == "SKIPPED":
                    r["skipped"].append(name)
                else:
                    r["passed"].append(name)
    else:
        r["from"] = "output"
        running = None
        for line in lines:
            m = re.match(r"^\[ *(RUN|OK|FAILED|SKIPPED) *\] (\S+)( \(\d+ ms\))?$", line)
            if not m or (m.group(1) != "RUN" and not m.group(3)):
                continue
            kind, name = m.group(1), m.group(2)
            if kind == "RUN":
                running = name
                continue
            {"OK": r["passed"], "FAILED": r["failed"], "SKIPPED": r["skipped"]}[kind].append(name)
            running = None
        r["crashed_in"] = running
    r["first_error"] = first_error(lines)
    return r


# ---- verdicts (pure) ---------------------------------------------------------------------------
def out_of_time(limit_s, own_limit_s, sanitizer):
    """The verdict of a run that ran out of its time, or was not run for want of it."""
    if limit_s < own_limit_s:
        return "inconclusive", f"cut by the overall budget at {limit_s} s (its own limit: {own_limit_s} s)"
    if sanitizer:
        return "inconclusive", f"out of its own {own_limit_s} s: the sanitizer is slow, which proves no error"
    return "fail", f"out of its own {own_limit_s} s limit"


def part_verdict(part):
    """(verdict, note) of one part: a test executable or a sanitizer run."""
    rc, sanitizer = part["rc"], part["name"] in SANITIZER_PARTS
    if rc == "notrun" or rc in TIME_RCS:
        v, why = out_of_time(part["limit_s"], part["own_limit_s"], sanitizer)
        return v, ("not run: " if rc == "notrun" else "") + why
    if rc == "77":
        return "skip", part["note"]
    if rc != "0":
        return "fail", part["note"] or f"exit status {rc}"
    return "pass", part["note"]


def worst(verdicts):
    for v in ("fail", "inconclusive", "pass"):
        if v in verdicts:
            return v
    return "skip"


def test_group(parts, tests, group):
    """The counts and names of one group of test executables (gpu_backend, or the unit_*)."""
    g = {"executables": 0, "passed": 0, "failed": 0, "skipped": 0, "cuda_instances_run": 0,
         "seconds": 0.0, "failed_tests": [], "skipped_tests": [], "problems": []}
    for p in parts:
        if p["note"] != group:
            continue
        g["executables"] += 1
        g["seconds"] += p["seconds"]
        t = tests.get(p["name"])
        v, why = part_verdict(p)
        if v == "fail" and p["rc"] not in TIME_RCS and p["rc"] != "notrun":
            why = f"exit status {p['rc']}"  # the part's note is only its group's name
        if t is None:
            if v != "pass":
                g["problems"].append(f"{p['name']}: {why}")
            continue
        g["passed"] += len(t["passed"])
        g["failed"] += len(t["failed"])
        g["skipped"] += len(t["skipped"])
        g["cuda_instances_run"] += sum(n.endswith("/cuda") for n in t["passed"] + t["failed"])
        g["failed_tests"] += t["failed"]
        g["skipped_tests"] += t["skipped"]
        timed = p["rc"] in TIME_RCS or p["rc"] == "notrun"
        if v != "pass" and (timed or not t["failed"]):  # failed tests are named elsewhere
            msg = f"{p['name']}: {why}"
            if t["crashed_in"]:  # the test that hung, or that the process died in
                msg += f" ({'running' if timed else 'crashed in'} {t['crashed_in']})"
            err = (t["first_error"] or "").strip().splitlines()
            if err and not timed:
                msg += f": {err[-1][:160]}"
            g["problems"].append(msg)
    g["seconds"] = round(g["seconds"], 1)
    return g


def test_rules(groups, device_visible, complete):
    """With a CUDA device visible, what the test step's results must show (problems, or []).
    A skipped test is a problem whenever it is seen; tests missing only once every executable
    ran to its end (`complete`), not when time ran out first."""
    if not device_visible:
        return []
    problems = []
    skipped = [n for g in groups.values() for n in g["skipped_tests"]]
    if skipped:
        problems.append(f"{len(skipped)} test{'s' if len(skipped) > 1 else ''} skipped with a CUDA device visible: "
                        + ", ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""))
    if complete:
        backend = groups.get("gpu_backend")
        if backend is not None and backend["passed"] + backend["failed"] == 0:
            problems.append("gpu_backend ran no test")
        if sum(g["cuda_instances_run"] for g in groups.values()) == 0:
            problems.append("no /cuda test instance ran")
    return problems


def step_verdict(step, parts, device_visible, rehearsal, groups=None):
    """(verdict, note) of one step from what check.sh recorded: the step's own exit status, or
    its parts' when it has parts; `groups` (test_group's) for the test step."""
    flag, rc, note = step["flag"], step["rc"], step["note"]
    if flag == "not_selected":
        return "skip", note
    if flag == "budget_spent":
        return "inconclusive", f"{note} (the overall budget was spent)"
    if flag == "interrupted":
        return "inconclusive", f"interrupted by a signal after {step['seconds']:.0f} s"
    gpu_check = device_visible and not rehearsal
    may_skip = step["name"] == "device_query" or step["name"] in MAY_SKIP_WITH_DEVICE
    if not parts:
        if rc in TIME_RCS:
            v, why = out_of_time(step["limit_s"], step["own_limit_s"], False)
            return v, f"{why}: {note}"
        if rc == "77":
            if gpu_check and not may_skip:
                return "fail", f"skipped although a CUDA device is visible: {note}"
            return "skip", note
        return ("pass" if rc == "0" else "fail"), note
    verdicts = [part_verdict(p) for p in parts]
    v = worst([x for x, _ in verdicts])
    if step["name"] == TEST_STEP and groups is not None:
        problems = test_rules(groups, gpu_check, complete=v == "pass")
        if problems:
            v = "fail"
        return v, "; ".join(problems + [test_note(n, g) for n, g in groups.items()])
    notes = [why for _, why in verdicts if why]
    if v == "skip" and gpu_check and not may_skip:
        v, notes = "fail", ["skipped although a CUDA device is visible"] + notes
    return v, "; ".join(notes) or note


def test_note(name, g):
    s = f"{name}: {g['passed']} passed"
    if g["cuda_instances_run"]:
        s += f" ({g['cuda_instances_run']} /cuda)"
    if g["failed"]:
        s += f", {g['failed']} FAILED ({', '.join(g['failed_tests'][:3])}{' ...' if g['failed'] > 3 else ''})"
    if g["skipped"]:
        s += f", {g['skipped']} skipped"
    s += f" in {g['executables']} executable{'s' if g['executables'] != 1 else ''}, {g['seconds']:.1f} s"
    if g["problems"]:
        s += " [" + "; ".join(g["problems"][:3]) + "]"
    return s


def result_of(steps):
    verdicts = [s["status"] for s in steps]
    if "fail" in verdicts:
        return "fail"
    if "inconclusive" in verdicts:
        return "inconclusive"
    return "pass"


# ---- benchmarks ---------------------------------------------------------------------------------
def find_key(obj, key):
    """The first value stored under `key` in a JSON tree (depth-first), or None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def bench_figures(name, data, others=None):
    """One benchmark's figure beside its reference, and their ratio (figure / reference): the
    training step's GEMM rate against the SGEMM rate of the same GEMMs alone, N replicas'
    frames/s against one worker's, the on-device mean's seconds against host staging's."""
    g = lambda k: num(find_key(data, k))  # noqa: E731
    b = {"device": find_key(data, "device")}
    if name.startswith("train"):
        fps, step_rate, sgemm = g("frames_per_s"), g("executed_gemm_gflops_per_s"), g("sgemm_gflops_per_s")
        b.update(frames_per_s=fps, step_gemm_gflops_per_s=step_rate, sgemm_gflops_per_s=sgemm,
                 fraction_of_sgemm=g("fraction_of_sgemm"), step_s_median=g("step_s_median"),
                 optimizer=find_key(data, "optimizer"))
        if None not in (fps, step_rate, sgemm):
            b["figure"] = f"{fps:.4g} frames/s, the step's GEMMs at {step_rate:.4g} GFLOP/s"
            b["reference"] = f"the same GEMMs alone at {sgemm:.4g} GFLOP/s"
            b["ratio"] = step_rate / sgemm if sgemm else None
        sgd = num(find_key((others or {}).get("train_sgd"), "frames_per_s"))
        if name != "train_sgd" and fps is not None and sgd:
            b["vs_train_sgd"] = fps / sgd
    elif name == "replicas":
        many, one, ratio = g("replicas_frames_per_s"), g("one_worker_frames_per_s"), g("per_frame_ratio")
        b.update(replicas_frames_per_s=many, one_worker_frames_per_s=one, per_frame_ratio=ratio,
                 workers=find_key(data, "workers"))
        if None not in (many, one):
            b["figure"] = f"{b['workers']} replicas: {many:.0f} frames/s"
            b["reference"] = f"one worker: {one:.0f} frames/s"
            b["ratio"] = many / one if one else None
    elif name == "average":
        dev, host = g("device_s"), g("host_staged_s")
        b.update(device_s=dev, host_staged_s=host, device_n_s=g("device_n_s"))
        if None not in (dev, host):
            b["figure"] = f"on-device mean of 2 replicas {dev * 1e3:.2f} ms"
            b["reference"] = f"host staging {host * 1e3:.2f} ms"
            b["ratio"] = dev / host if host else None
    return b


def bench_line(b):
    if "figure" not in b:
        return "no figures in its JSON"
    ratio = f" (ratio {b['ratio']:.3g})" if num(b.get("ratio")) is not None else ""
    vs = f"; {b['vs_train_sgd']:.3g}x train_sgd's frames/s" if num(b.get("vs_train_sgd")) else ""
    return f"{b['figure']} against {b['reference']}{ratio}{vs}"


# ---- logs.txt: each log whole if short, else its head, first error and tail -------------------
def excerpt(lines, whole=250, head=30, tail=150, around=40):
    if len(lines) <= whole:
        return lines
    out = lines[:head]
    i = first_error_index(lines)
    start = head
    if i is not None and head <= i < len(lines) - tail:
        a = max(head, i - 3)
        if a > head:
            out.append(f"[... {a - head} lines ...]")
        out += lines[a:i + around]
        start = i + around
    if start < len(lines) - tail:
        out.append(f"[... {len(lines) - tail - start} lines ...]")
        out += lines[len(lines) - tail:]
    else:
        out += lines[start:]
    return out


def write_logs(work, out, steps, parts):
    L = []
    for s in steps:
        L.append(f"===== {s['name']}: {s['status']} ({s['seconds']:.1f} s of {s['limit_s']} s) -- {s['note']}")
        L += excerpt(read_lines(f"{work}/logs/{s['name']}.log"))
        for p in parts.get(s["name"], []):
            if not p["log"]:
                continue
            v, _ = part_verdict(p)
            lines = read_lines(p["log"])
            L.append(f"----- {s['name']}/{p['name']}: {v}, exit {p['rc']} ({p['seconds']:.1f} s of {p['limit_s']} s)")
            L += excerpt(lines) if v != "pass" else (["[...]"] if len(lines) > 5 else []) + lines[-5:]
        L.append("")
    write_atomic(f"{out}/logs.txt", "\n".join(L) + "\n")


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


# ---- the summary ---------------------------------------------------------------------------------
def device_info(work, meta):
    dev = {"visible": to_int(meta.get("device_visible")), "count": to_int(meta.get("device_count"))}
    devices = load_json(f"{work}/devices.json")
    listed = (devices or {}).get("devices") or []
    smi = []
    if os.path.exists(f"{work}/nvidia_smi.csv"):
        rows = [r for r in csv.reader(open(f"{work}/nvidia_smi.csv")) if r]
        if rows:
            head = [h.strip() for h in rows[0]]
            smi = [dict(zip(head, (c.strip() for c in r))) for r in rows[1:]]
    if listed:
        d = listed[0]
        dev["name"] = d.get("name")
        dev["memory_gib"] = round(d.get("memory_bytes", 0) / 2**30, 1)
        dev["compute_capability"] = d.get("compute_capability")
    elif smi:
        dev["name"] = smi[0].get("name")
    if smi:
        dev["driver_version"] = smi[0].get("driver_version")
    elif meta.get("proc_driver"):
        dev["driver_version"] = meta["proc_driver"]
    ver = load_json(f"{work}/versions.json") or {}
    def cuda_version(v):  # 13000 -> "13.0"; the runtime reports 0 for the driver without one
        if not isinstance(v, int):
            return None
        return f"{v // 1000}.{v % 1000 // 10}" if v > 0 else "none"
    dev["cuda_runtime"] = cuda_version(ver.get("runtime"))
    dev["cuda_driver_api"] = cuda_version(ver.get("driver_api"))
    for key, lib in (("cudart_file", "cuda_runtime_library"), ("cublas_file", "cublas_library")):
        if meta.get(key):
            dev[lib] = os.path.basename(meta[key])
    return dev, smi, devices


def summarize(work, out):
    meta = read_meta(work)
    steps = read_steps(work)
    parts = read_parts(work)
    device_visible = to_int(meta.get("device_visible")) > 0
    rehearsal = meta.get("rehearsal") == "1"

    tests, groups = {}, {}
    for p in parts.get(TEST_STEP, []):
        tests[p["name"]] = read_gtest(f"{work}/tests/{TEST_STEP}/{p['name']}.json", p["log"])
    for group in ("gpu_backend", "unit"):
        if any(p["note"] == group for p in parts.get(TEST_STEP, [])):
            groups[group] = test_group(parts[TEST_STEP], tests, group)

    for s in steps:
        s["status"], s["note"] = step_verdict(s, parts.get(s["name"], []), device_visible, rehearsal,
                                              groups if s["name"] == TEST_STEP else None)
        s["expect_s"] = to_int(meta.get(f"expect_s.{s['name']}"), None)
        if parts.get(s["name"]):
            s["parts"] = [{"name": p["name"], "status": part_verdict(p)[0], "rc": p["rc"],
                           "seconds": p["seconds"], "limit_s": p["limit_s"]}
                          for p in parts[s["name"]]]

    dev, smi, devices = device_info(work, meta)
    dq = {"mavg_devices": devices} if devices is not None else {}
    if smi:
        dq["nvidia_smi"] = smi
    for k in ("device_count", "glibc", "glibc_needed", "libs_not_found"):
        if k in meta:
            dq[k] = to_int(meta[k]) if k == "device_count" else meta[k]

    test_summary = {}
    for group, g in groups.items():
        g = dict(g)
        g["executables_detail"] = {
            p["name"]: {"rc": p["rc"], "seconds": p["seconds"], "passed": len(tests[p["name"]]["passed"]),
                        "failed_tests": tests[p["name"]]["failed"], "skipped_tests": tests[p["name"]]["skipped"],
                        "crashed_in": tests[p["name"]]["crashed_in"],
                        "first_error": tests[p["name"]]["first_error"]
                        if part_verdict(p)[0] != "pass" else None}
            for p in parts[TEST_STEP] if p["note"] == group and p["name"] in tests}
        test_summary[group] = g
    first_errors = {}
    for step, ps in parts.items():
        for p in ps:
            if part_verdict(p)[0] in ("fail", "inconclusive") and p["log"]:
                e = tests[p["name"]]["first_error"] if step == TEST_STEP and p["name"] in tests \
                    else first_error(read_lines(p["log"]))
                if e:
                    first_errors[f"{step}/{p['name']}"] = e
    for s in steps:
        if s["status"] == "fail" and not parts.get(s["name"]):
            e = first_error(read_lines(f"{work}/logs/{s['name']}.log"))
            if e:
                first_errors[s["name"]] = e

    bench_raw = {}
    order = [s["name"] for s in steps]
    for path in sorted(glob.glob(f"{work}/bench_*.json"),
                       key=lambda p: (order.index("bench_" + os.path.basename(p)[6:-5])
                                      if "bench_" + os.path.basename(p)[6:-5] in order else len(order), p)):
        data = load_json(path)
        if data is not None:
            bench_raw[os.path.basename(path)[len("bench_"):-len(".json")]] = data
    bench = {name: bench_figures(name, data, bench_raw) for name, data in bench_raw.items()}

    result = result_of(steps)
    failed = [s["name"] for s in steps if s["status"] == "fail"]
    inconclusive = [s["name"] for s in steps if s["status"] == "inconclusive"]
    gpu_ran = device_visible and not rehearsal and any(
        s["status"] == "pass" for s in steps if s["name"] != "device_query")
    summary = {
        "what": "mavg GPU checks (scripts/device/check.sh)",
        "result": result,
        "failed_steps": failed,
        "inconclusive_steps": inconclusive,
        "ran_on_a_gpu": gpu_ran,
        "rehearsal": rehearsal,
        "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": dev,
        "plan": {"budget_s": to_int(meta.get("budget_s")), "limits_s": to_int(meta.get("limits_s")),
                 "expected_s_on_h200": to_int(meta.get("expect_s")),
                 "elapsed_s": float(meta.get("elapsed_s", 0) or 0)},
        "steps": steps,
        "first_failing_tests": [n for g in groups.values() for n in g["failed_tests"]][:20],
        "first_errors": first_errors,
        "tests": test_summary,
        "gpu_epoch": load_json(f"{work}/gpu_epoch/compare.json"),
        "bench": bench,
        "device_query": dq,
        "meta": meta,
        "bench_raw": bench_raw,
    }
    write_atomic(f"{out}/summary.json", json.dumps(summary, indent=1) + "\n")
    write_atomic(f"{out}/summary.txt", "\n".join(summary_page(summary)) + "\n")
    write_logs(work, out, steps, parts)
    return summary


def summary_page(s):
    L = []
    head = f"mavg GPU checks: {s['result'].upper()}"
    if s["failed_steps"]:
        head += f" (failed: {', '.join(s['failed_steps'])})"
    if s["inconclusive_steps"]:
        head += f" (inconclusive: {', '.join(s['inconclusive_steps'])})"
    if s["rehearsal"]:
        head += " -- REHEARSAL on the CPU: nothing ran on a GPU"
    elif not s["ran_on_a_gpu"]:
        head += " -- nothing ran on a GPU"
    L.append(head)
    d = s["device"]
    if d.get("name"):
        L.append(f"device: {d['name']}" + (f", {d['memory_gib']} GiB" if d.get("memory_gib") else "")
                 + (f", compute {d['compute_capability']}" if d.get("compute_capability") else ""))
    L.append(f"driver {d.get('driver_version') or '?'} (CUDA {d.get('cuda_driver_api') or '?'}); "
             f"runtime CUDA {d.get('cuda_runtime') or '?'} ({d.get('cuda_runtime_library') or '?'}); "
             f"cuBLAS {d.get('cublas_library') or '?'}")
    m, p = s["meta"], s["plan"]
    L.append(f"host {m.get('host', '?')}, started {m.get('started', '?')}, mode {m.get('mode', '?')}; "
             f"elapsed {p['elapsed_s']:.0f} s; budget {p['budget_s']} s, limits {p['limits_s']} s, "
             f"expected on an H200 ~{p['expected_s_on_h200']} s")
    dq = s["device_query"]
    if "glibc" in dq:
        L.append(f"glibc {dq['glibc']}" + (f" (the bundle needs >= {dq['glibc_needed']})"
                                            if "glibc_needed" in dq else ""))
    if dq.get("libs_not_found"):
        L.append(f"NOT FOUND by the loader: {dq['libs_not_found']}")
    L.append("")
    L.append(f"{'step':<18} {'verdict':<12} {'s':>6} {'limit':>5}  note")
    for st in s["steps"]:
        note = st["note"] if len(st["note"]) <= 160 else st["note"][:157] + "..."
        L.append(f"{st['name']:<18} {st['status']:<12} {st['seconds']:>6.1f} {st['limit_s']:>5}  {note}")
    if s["first_failing_tests"]:
        L.append("")
        L.append("first failing tests: " + ", ".join(s["first_failing_tests"][:10]))
    if s["first_errors"]:
        L.append("")
        L.append("first errors:")
        for where, e in s["first_errors"].items():
            L.append(f"  {where}:")
            L += ["    " + line for line in e.splitlines()[:8]]
    ge = s["gpu_epoch"]
    if isinstance(ge, dict) and "cv_loss_cpu" in ge:
        L.append("")
        L.append(f"gpu_epoch: cv_loss cpu {ge['cv_loss_cpu']:.6f} cuda {ge['cv_loss_cuda']:.6f} "
                 f"(rel {ge['cv_loss_rel_diff']:.2e}); cv_acc cpu {ge['cv_acc_cpu_pct']:.3f} % "
                 f"cuda {ge['cv_acc_cuda_pct']:.3f} % (diff {ge['cv_acc_diff_pp']:.3f} pp)")
    if s["bench"]:
        L.append("")
        L.append("benchmarks (figure against its reference):")
        for name, b in s["bench"].items():
            L.append(f"  {name:<12} {bench_line(b)}")
    L.append("")
    L.append("details: summary.json (every number; the benchmarks' JSON under bench_raw), logs.txt")
    return L


def step_line(summary, name):
    for st in summary["steps"]:
        if st["name"] == name:
            return (f"[{summary['plan']['elapsed_s']:6.1f}s] {st['name']:<18} {st['status']:<12} "
                    f"({st['seconds']:.1f} s of {st['limit_s']}) {st['note'][:300]}")
    return f"{name}: no such step recorded"


def main(argv):
    if len(argv) >= 2 and argv[1] == "--bench-line":
        data = load_json(argv[2])
        print(bench_line(bench_figures(argv[3], data)) if isinstance(data, dict) and "unreadable" not in data
              else f"no JSON: {argv[2]}")
        return 0
    work, out = argv[1], argv[2]
    summary = summarize(work, out)
    if "--print-step" in argv:
        print(step_line(summary, argv[argv.index("--print-step") + 1]))
    if "--final" in argv:
        print("\n".join(summary_page(summary)))
        return {"pass": 0, "fail": 1, "inconclusive": 3}[summary["result"]]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
