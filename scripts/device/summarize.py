#!/usr/bin/env python3
"""summarize.py WORK OUT -- assemble check.sh's results into OUT/summary.json and OUT/summary.txt.

check.sh calls it after every step (so a run cut short still leaves a summary). It reads from
WORK (check.sh's scratch folder):
  meta.txt          key=value lines (mode, mavg, budget_s, started, host, ...)
  steps.tsv         name<TAB>status<TAB>seconds<TAB>note, one line per finished step
  nvidia_smi.csv    nvidia-smi --query-gpu=... --format=csv output (optional)
  devices.json      mavg devices --json output (optional)
  unit_gpu.tsv      exe<TAB>rc<TAB>passed<TAB>failed<TAB>skipped (optional)
  gpu_epoch/compare.json   gpu_epoch.sh's comparison (optional)
  bench_*.json      the benchmarks' --json files (optional), merged whole under "bench_raw"
and pulls the key numbers of each benchmark into "bench". Standard library only.
"""

import csv
import datetime
import glob
import json
import os
import sys

# The numbers worth a glance, per benchmark (looked up anywhere in the bench's JSON, so they
# may sit at the top level or inside a nested object).
BENCH_KEYS = {
    "train": ["frames_per_s", "fraction_of_sgemm", "sgemm_gflops_per_s", "step_s_median",
              "device", "optimizer"],
    "replicas": ["per_frame_ratio"],
    "average": ["host_staged_s", "device_s"],
}


def find_key(obj, key):
    """The first value stored under `key` in a JSON tree (depth-first), or None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            found = find_key(v, key)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return None if isinstance(e, FileNotFoundError) else {"unreadable": str(e)}


def main():
    work, out = sys.argv[1], sys.argv[2]
    meta = {}
    if os.path.exists(f"{work}/meta.txt"):
        for line in open(f"{work}/meta.txt"):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    steps = []
    if os.path.exists(f"{work}/steps.tsv"):
        for line in open(f"{work}/steps.tsv"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                steps.append({"name": parts[0], "status": parts[1], "seconds": float(parts[2]),
                              "note": parts[3] if len(parts) > 3 else ""})

    dq = {}
    smi = f"{work}/nvidia_smi.csv"
    if os.path.exists(smi):
        rows = [r for r in csv.reader(open(smi)) if r]
        if len(rows) >= 1:
            head = [h.strip() for h in rows[0]]
            dq["nvidia_smi"] = [dict(zip(head, (c.strip() for c in r))) for r in rows[1:]]
    devices = load_json(f"{work}/devices.json")
    if devices is not None:
        dq["mavg_devices"] = devices
    for k in ("device_count", "glibc", "glibc_needed", "libs_not_found"):
        if k in meta:
            dq[k] = int(meta[k]) if k == "device_count" else meta[k]

    unit = None
    if os.path.exists(f"{work}/unit_gpu.tsv"):
        unit = {"passed": 0, "failed": 0, "skipped": 0, "executables": {}}
        for line in open(f"{work}/unit_gpu.tsv"):
            exe, rc, p, f, s = line.rstrip("\n").split("\t")
            unit["executables"][exe] = {"rc": int(rc), "passed": int(p), "failed": int(f),
                                        "skipped": int(s)}
            unit["passed"] += int(p)
            unit["failed"] += int(f)
            unit["skipped"] += int(s)

    bench, bench_raw = {}, {}
    # In the order the steps ran (bench_train_sgd -> bench_train_sgd.json), then any others.
    order = [s["name"] for s in steps]
    paths = sorted(glob.glob(f"{work}/bench_*.json"),
                   key=lambda p: (order.index(os.path.basename(p)[:-5])
                                  if os.path.basename(p)[:-5] in order else len(order), p))
    for path in paths:
        name = os.path.basename(path)[len("bench_"):-len(".json")]
        data = load_json(path)
        if data is None:
            continue
        bench_raw[name] = data
        kind = "train" if name.startswith("train") else name
        bench[name] = {k: find_key(data, k) for k in BENCH_KEYS.get(kind, [])}

    failed = [s["name"] for s in steps if s["status"] == "fail"]
    summary = {
        "what": "mavg GPU checks (scripts/device/check.sh)",
        "result": "fail" if failed else "pass",
        "failed_steps": failed,
        "written": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "meta": meta,
        "steps": steps,
        "device_query": dq,
        "unit_gpu": unit,
        "gpu_epoch": load_json(f"{work}/gpu_epoch/compare.json"),
        "bench": bench,
        "bench_raw": bench_raw,
    }
    tmp = f"{out}/summary.json.tmp"
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, f"{out}/summary.json")

    # ---- summary.txt: one page ----
    L = []
    L.append(f"mavg GPU checks: {summary['result'].upper()}"
             + (f" (failed: {', '.join(failed)})" if failed else ""))
    L.append(f"host {meta.get('host', '?')}, started {meta.get('started', '?')}, "
             f"mode {meta.get('mode', '?')}, budget {meta.get('budget_s', '?')} s, "
             f"elapsed {meta.get('elapsed_s', '?')} s")
    L.append(f"mavg: {meta.get('mavg', '?')}")
    gpus = dq.get("nvidia_smi") or []
    for g in gpus:
        L.append("gpu:  " + ", ".join(f"{k} {v}" for k, v in g.items()))
    if devices is not None:
        L.append(f"mavg devices: count {find_key(devices, 'count')}")
    if "glibc" in meta:
        L.append(f"glibc {meta['glibc']}" + (f" (the bundle needs >= {meta['glibc_needed']})"
                                              if "glibc_needed" in meta else ""))
    if meta.get("libs_not_found"):
        L.append(f"NOT FOUND by the loader: {meta['libs_not_found']}")
    L.append("")
    L.append(f"{'step':<18} {'status':<6} {'s':>6}  note")
    for s in steps:
        note = s["note"] if len(s["note"]) <= 100 else s["note"][:97] + "..."
        L.append(f"{s['name']:<18} {s['status']:<6} {s['seconds']:>6.1f}  {note}")
    if unit:
        L.append("")
        L.append(f"unit tests (GPU filter): {unit['passed']} passed, {unit['failed']} failed, "
                 f"{unit['skipped']} skipped")
    ge = summary["gpu_epoch"]
    if isinstance(ge, dict) and "cv_loss_cpu" in ge:
        L.append(f"gpu_epoch: cv_loss cpu {ge['cv_loss_cpu']:.6f} cuda {ge['cv_loss_cuda']:.6f} "
                 f"(rel {ge['cv_loss_rel_diff']:.2e}); cv_acc cpu {ge['cv_acc_cpu_pct']:.3f} % "
                 f"cuda {ge['cv_acc_cuda_pct']:.3f} % (diff {ge['cv_acc_diff_pp']:.3f} pp)")
    if bench:
        L.append("")
        L.append("benchmarks:")
        for name, vals in bench.items():
            shown = []
            for k, v in vals.items():
                if v is None:
                    continue
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    shown.append(f"{k} {v:.4g}")
                else:
                    v = str(v)
                    shown.append(f"{k} {v if len(v) <= 60 else v[:57] + '...'}")
            L.append(f"  {name:<14} " + (", ".join(shown) if shown else "(no key numbers found)"))
    L.append("")
    L.append("details: summary.json (all numbers, the bench JSONs under bench_raw), logs.txt")
    with open(f"{out}/summary.txt.tmp", "w") as f:
        f.write("\n".join(L) + "\n")
    os.replace(f"{out}/summary.txt.tmp", f"{out}/summary.txt")


if __name__ == "__main__":
    main()
