#!/usr/bin/env python3
"""Test helper without numpy: writes random float32 .npy inputs and compares
two float32 .npy outputs by relative L2.

  npy_plain.py make DIR B H HKV NQ NK D LAYOUT SEED
  npy_plain.py compare A.npy B.npy TOL     -> prints rel_l2, exits 1 above TOL or on NaN
"""
import math
import random
import struct
import sys


def save(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"{path}: not a .npy file")
    major = data[6]
    hlen = struct.unpack("<H", data[8:10])[0] if major == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if major == 1 else 12) + hlen
    header = data[start - hlen:start].decode()
    if "'<f4'" not in header:
        raise SystemExit(f"{path}: expected float32, header {header.strip()}")
    n = (len(data) - start) // 4
    return struct.unpack("<%df" % n, data[start:start + 4 * n])


def make(d, b, h, hkv, nq, nk, dim, layout, seed):
    rng = random.Random(int(seed))
    b, h, hkv, nq, nk, dim = map(int, (b, h, hkv, nq, nk, dim))
    shape_q = (b, h, nq, dim) if layout == "bhsd" else (b, nq, h, dim)
    shape_kv = (b, hkv, nk, dim) if layout == "bhsd" else (b, nk, hkv, dim)
    for name, shape in (("q", shape_q), ("k", shape_kv), ("v", shape_kv)):
        save(f"{d}/{name}.npy", shape, [rng.gauss(0.0, 1.0) for _ in range(math.prod(shape))])


def compare(a, b, tol):
    x, y = load(a), load(b)
    if len(x) != len(y):
        print(f"size mismatch {len(x)} vs {len(y)}")
        return 1
    if any(math.isnan(v) for v in x + y):
        print("NaN in output")
        return 1
    num = sum((p - q) ** 2 for p, q in zip(x, y))
    den = sum(q * q for q in y) or 1.0
    rel = math.sqrt(num / den)
    print(f"rel_l2 {rel:.2e}")
    return 0 if rel <= float(tol) else 1


if __name__ == "__main__":
    if len(sys.argv) >= 11 and sys.argv[1] == "make":
        make(*sys.argv[2:11])
    elif len(sys.argv) == 5 and sys.argv[1] == "compare":
        sys.exit(compare(*sys.argv[2:5]))
    else:
        sys.exit(__doc__)
