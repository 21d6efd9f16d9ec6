#!/usr/bin/env bash
# A CUDA build does not link cuBLAS: it loads it when it makes a CUDA backend, so that a mavg
# process that never touches a GPU does not pay libcublasLt's ~150 ms start-up. `mavg devices`
# names the soname and the file the loader finds (or why it cannot), the version read from the
# library itself; a CPU-only build reports no cuBLAS at all.
source "$(dirname "$0")/lib.bash"
"$MAVG" devices --json devices.json > devices.txt
python3 - <<'PY'
import json, os, re
d = json.load(open("devices.json"))
c = d["cublas"]
if not d["built_with_cuda"]:
    assert c is None, c
    assert "cublas" not in open("devices.txt").read(), "a CPU-only build reports cuBLAS"
    print("CPU-only build: no cuBLAS reported")
    raise SystemExit
m = re.fullmatch(r"libcublas\.so\.(\d+)", c["soname"])
assert m, c
line = [l for l in open("devices.txt") if l.startswith("cublas")]
assert len(line) == 1 and c["soname"] in line[0], line
if c["error"]:
    assert c["soname"] in c["error"] and not c["file"], c
    assert "not loadable" in line[0], line
else:
    assert os.path.isfile(c["file"]) and os.path.basename(c["file"]).startswith("libcublas.so"), c
    assert re.fullmatch(m[1] + r"\.\d+\.\d+", c["version"]), c
    assert c["file"] in line[0] and c["version"] in line[0], line
print("cuBLAS:", c)
PY
# The point of loading it late: neither mavg nor anything it links needs libcublas to start.
if ldd "$MAVG" | contains 'libcublas'; then fail "mavg links cuBLAS: $(ldd "$MAVG" | grep cublas)"; fi
echo PASS
