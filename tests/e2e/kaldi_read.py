"""An independent reader of the Kaldi formats mavg writes, for the end-to-end tests (written
from Kaldi's format description, sharing no code with mavg): binary float-matrix archives,
text matrix archives, binary double matrices (CMVN statistics), and binary int32-vector archives
(alignments)."""
import struct


def binary_matrices(path):
    """{key: [[float]]} from an archive of binary float or double matrices ("\\0B" "FM " or
    "DM ", the latter as Kaldi writes CMVN statistics)."""
    data, out, pos = open(path, "rb").read(), {}, 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        key = data[pos:sp].decode()
        pos = sp + 1
        assert data[pos:pos + 5] in (b"\0BFM ", b"\0BDM "), (path, key, data[pos:pos + 5])
        fmt, size = ("d", 8) if data[pos + 2:pos + 3] == b"D" else ("f", 4)
        assert data[pos + 5] == 4 and data[pos + 10] == 4, (path, key)
        rows = struct.unpack_from("<i", data, pos + 6)[0]
        cols = struct.unpack_from("<i", data, pos + 11)[0]
        pos += 15
        vals = struct.unpack_from(f"<{rows * cols}{fmt}", data, pos)
        pos += size * rows * cols
        out[key] = [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]
    return out


def offsets(path):
    """{key: byte offset of its object} of an archive of binary matrices, as an scp names them."""
    data, out, pos = open(path, "rb").read(), {}, 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        key, pos = data[pos:sp].decode(), sp + 1
        out[key] = pos
        size = 8 if data[pos + 2:pos + 3] == b"D" else 4
        rows = struct.unpack_from("<i", data, pos + 6)[0]
        cols = struct.unpack_from("<i", data, pos + 11)[0]
        pos += 15 + size * rows * cols
    return out


def text_matrices(path):
    """{key: [[float]]} from a text archive: "key  [", rows of numbers, the last ending "]"."""
    out, key, rows = {}, None, []
    for line in open(path):
        t = line.split()
        if key is None:
            assert len(t) >= 2 and t[1] == "[", (path, line)
            key, t = t[0], t[2:]
        end = bool(t) and t[-1] == "]"
        values = t[:-1] if end else t
        if values:
            rows.append([float(v) for v in values])
        if end:
            out[key], key, rows = rows, None, []
    return out


def alignment_counts(path):
    """{pdf: frames} over a binary archive of int32 vectors (a Kaldi ali.ark of pdf ids)."""
    data, counts, pos = open(path, "rb").read(), {}, 0
    while pos < len(data):
        pos = data.index(b" ", pos) + 3  # the key, " \0B"
        assert data[pos] == 4, (path, pos)
        n = struct.unpack_from("<i", data, pos + 1)[0]
        pos += 5
        for i in range(n):
            pdf = struct.unpack_from("<i", data, pos + 5 * i + 1)[0]
            counts[pdf] = counts.get(pdf, 0) + 1
        pos += 5 * n
    return counts
