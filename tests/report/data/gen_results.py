#!/usr/bin/env python3
"""Writes the synthetic results files (format_version 1) the compare/history/report
tests use. Deterministic: run it again and the files come out the same.

  base.json          H100 (Vulkan + CUDA: attnvk, cudnn, cublas) and a PoCL CPU, driver 550
  new_slow30.json    driver 560: one case 30% slower (attnvk/vulkan d128 N=4096), one 15% faster
  new_noise.json     one case 1% slower with 3% spread, one 8% slower with 6% spread: no regression
  new_fail.json      one case turned "fail"
  new_accuracy.json  one case's rel_l2 grown 40x (still under tolerance)
  new_missing.json   one case missing, one new case
  bad_json.json, bad_version.json: bad input
Not written here: cpu_gpu_f32.json, a real run (attnvk peak, then attnvk bench --api cpu,vulkan,opencl
--impl attnvk,openblas,clblast --batch 1 --heads 4 --head-dim 64,128 --seq 64,128,256,512,1k --dtype f32
-r 20 on a 2-core VM: the CPU device, lavapipe and PoCL, with their cached peaks; samples rounded to 6 digits).
"""
import copy
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
H100_UUID = "8f0c2a6e-1b4d-4c8e-9a1f-0d3b5e7c9a21"
H100 = "NVIDIA H100 80GB HBM3"
POCL = "cpu-haswell-Intel(R) Xeon(R) CPU @ 2.20GHz"
PEAK = {("attnvk", "cuda"): 520.0, ("attnvk", "vulkan"): 430.0, ("cudnn", "cuda"): 600.0,
        ("cublas", "cuda"): 180.0, ("attnvk", "opencl"): 0.35}


def device(api, index, name, driver, uuid, vendor="NVIDIA", dtype_=1):
    return {"api": api, "index": index, "name": name, "vendor": vendor, "vendor_id": 4318 if uuid else 0,
            "type": "discrete" if uuid else "cpu", "driver_version": driver, "api_version": "1.3.280" if api == "vulkan" else "3.0",
            "architecture": "sm_90" if uuid else "haswell", "memory_bytes": 85899345920 if uuid else 17179869184,
            "compute_units": 132 if uuid else 2, "subgroup_sizes": [32] if uuid else [8], "shared_memory_per_group": 232448 if uuid else 65536,
            "max_workgroup_size": 1024, "fp16": True, "bf16": bool(uuid), "cooperative_matrix": bool(uuid), "uuid": uuid,
            "default_variant": "fa2-coopmat" if uuid else "fa2-scalar", "group": uuid or ("name:" + name)}


def case(d, n, causal, b=4, h=16):
    name = "fa-d%d-n%d-b%d-h%d%s" % (d, n, b, h, "-causal" if causal else "")
    return {"name": name, "batch": b, "heads": h, "kv_heads": h, "seq_q": n, "seq_kv": n, "head_dim": d,
            "causal": causal, "dtype": "f16", "layout": "bhsd", "scale": round(1 / math.sqrt(d), 7)}


def flops(c):
    f = 4.0 * c["batch"] * c["heads"] * c["seq_q"] * c["seq_kv"] * c["head_dim"]
    return f / 2 if c["causal"] else f


def memory(impl, c):
    bh = c["batch"] * c["heads"]
    qkvo = 4 * bh * c["seq_q"] * c["head_dim"] * 2
    if impl == "cublas":  # scores and probabilities in f16: N^2
        return qkvo + 2 * bh * c["seq_q"] * c["seq_kv"] * 2
    return qkvo + bh * c["seq_q"] * 4  # log-sum-exp rows


def timed(rng, median_ms, cv, n=15):
    samples = sorted(median_ms * (1 + rng.gauss(0, cv)) for _ in range(n))
    mean = sum(samples) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in samples) / (n - 1))
    pick = lambda q: samples[min(n - 1, int(math.ceil(q * n)) - 1)]
    stats = {"min_ms": samples[0], "median_ms": samples[n // 2], "mean_ms": mean, "std_ms": std,
             "p95_ms": pick(0.95), "p99_ms": pick(0.99), "cv": std / mean}
    return [round(s, 6) for s in samples], {k: round(v, 6) for k, v in stats.items()}


def record(rng, impl, api, dev_index, dev, c, slowdown=1.0, cv=0.01):
    model = PEAK[(impl, api)] * c["seq_kv"] / (c["seq_kv"] + 1500.0) * (0.8 if c["head_dim"] == 64 else 1.0)
    model *= 0.85 if c["causal"] else 1.0
    median = flops(c) / (model * 1e12) * 1e3 * slowdown
    samples, stats = timed(rng, median, cv)
    tf = flops(c) / (stats["median_ms"] * 1e-3) / 1e12
    return {"implementation": impl, "api": api, "device_index": dev_index, "device_name": dev["name"],
            "device_uuid": dev["uuid"], "group": dev["group"], "driver_version": dev["driver_version"], "case": c,
            "status": "ok", "reason": "", "variant": "fa2-coopmat" if impl == "attnvk" else impl,
            "tile_br": 64, "tile_bc": 64, "workgroup_size": 128, "split_kv": 1, "params": "",
            "samples_ms": samples, "stats": stats, "flops": flops(c), "tflops": round(tf, 3),
            "tokens_per_s": round(c["batch"] * c["seq_q"] / (stats["median_ms"] * 1e-3), 1),
            "gbytes_per_s": round(memory(impl, c) / (stats["median_ms"] * 1e-3) / 1e9, 2),
            "peak_fraction": round(tf / 989.0, 4) if dev["uuid"] else None, "memory_bytes": memory(impl, c),
            "check": {"rel_l2": round(2.1e-4 * (1 + 0.2 * rng.random()), 8), "max_abs": 1.9e-3, "tolerance": 5e-3,
                      "rows_checked": 256, "nonfinite": 0, "passed": True},
            "speedup_vs_vendor": None, "vendor_reference": None}


def not_run(r, status, reason):
    r.update(status=status, reason=reason, samples_ms=None, stats=None, tflops=None, tokens_per_s=None,
             gbytes_per_s=None, peak_fraction=None, check=None)
    return r


def fill_speedups(doc):
    """speedup_vs_vendor: the fastest ok vendor record of the same group and case."""
    for r in doc["records"]:
        r["speedup_vs_vendor"], r["vendor_reference"] = None, None
    for r in doc["records"]:
        if r["implementation"] != "attnvk" or r["status"] != "ok":
            continue
        vendors = [v for v in doc["records"] if v["implementation"] != "attnvk" and v["status"] == "ok"
                   and v["group"] == r["group"] and v["case"] == r["case"]]
        if vendors:
            best = min(vendors, key=lambda v: v["stats"]["median_ms"])
            r["speedup_vs_vendor"] = round(best["stats"]["median_ms"] / r["stats"]["median_ms"], 4)
            r["vendor_reference"] = best["implementation"]


def run(seed, driver, created, commit, tweak=None):
    rng = random.Random(seed)
    devs = [device("vulkan", 0, H100, driver, H100_UUID), device("cuda", 0, H100, driver, H100_UUID),
            device("opencl", 0, POCL, "pocl 3.1", None, vendor="GenuineIntel")]
    records = []
    for d in (64, 128):
        for causal in (False, True):
            for n in (512, 1024, 2048, 4096, 8192, 16384):
                c = case(d, n, causal)
                for impl, api, di in (("attnvk", "vulkan", 0), ("attnvk", "cuda", 1), ("cudnn", "cuda", 1), ("cublas", "cuda", 1)):
                    slowdown, cv = (tweak or (lambda *a: (1.0, 0.01)))(impl, api, c)
                    r = record(rng, impl, api, di, devs[di], c, slowdown, cv)
                    if impl == "cublas" and n == 16384:
                        not_run(r, "skipped", "workspace needs <32 GiB> of scores & \"probabilities\" > free 'memory'")
                    records.append(r)
    for n in (512, 1024, 2048):
        records.append(record(rng, "attnvk", "opencl", 2, devs[2], case(64, n, False, b=1, h=2)))
    doc = {"format_version": 1, "attnvk_version": "0.1.0", "git_commit": commit, "created": created,
           "host": {"os": "Linux 6.1.0-27-amd64 x86_64", "hostname": "gpu-box<1>&co", "cpu": "AMD EPYC 9454 48-Core"},
           "command": "attnvk bench --suite standard --json out.json",
           "settings": {"suite": "standard", "dtype": "f16", "layout": "bhsd", "causal": False, "warmup": 3,
                        "iters": None, "min_time_s": 0.5, "cooldown_s": 0},
           "devices": devs, "records": records}
    fill_speedups(doc)
    return doc


def find(doc, name, impl, api):
    return next(r for r in doc["records"] if r["case"]["name"] == name and r["implementation"] == impl and r["api"] == api)


def write(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


def main():
    write("base.json", run(1, "550.54.15", "2026-11-20T09:00:00Z", "a1b2c3d4e5f6"))

    def slow30(impl, api, c):
        if impl == "attnvk" and api == "vulkan" and c["name"] == "fa-d128-n4096-b4-h16":
            return 1.30, 0.01
        if impl == "attnvk" and api == "cuda" and c["name"] == "fa-d64-n8192-b4-h16-causal":
            return 0.85, 0.01
        return 1.0, 0.01
    write("new_slow30.json", run(2, "560.28.03", "2026-11-21T09:00:00Z", "a1b2c3d4e5f6", slow30))

    def noise(impl, api, c):
        if impl == "attnvk" and api == "vulkan" and c["name"] == "fa-d128-n2048-b4-h16":
            return 1.01, 0.03
        if impl == "attnvk" and api == "cuda" and c["name"] == "fa-d64-n2048-b4-h16":
            return 1.08, 0.06
        return 1.0, 0.01
    write("new_noise.json", run(3, "560.28.03", "2026-11-21T10:00:00Z", "a1b2c3d4e5f6", noise))

    doc = run(4, "560.28.03", "2026-11-21T11:00:00Z", "a1b2c3d4e5f6")
    r = find(doc, "fa-d64-n1024-b4-h16", "attnvk", "vulkan")
    r.update(status="fail", reason="rel_l2 3.1e-01 > tolerance 5.0e-03", tflops=None, speedup_vs_vendor=None)
    r["check"].update(rel_l2=0.31, passed=False)
    fill_speedups(doc)
    find(doc, "fa-d64-n1024-b4-h16", "attnvk", "vulkan")["speedup_vs_vendor"] = None
    write("new_fail.json", doc)

    doc = run(5, "560.28.03", "2026-11-21T12:00:00Z", "a1b2c3d4e5f6")
    find(doc, "fa-d128-n1024-b4-h16", "attnvk", "cuda")["check"]["rel_l2"] = 4.2e-3
    write("new_accuracy.json", doc)

    doc = run(6, "560.28.03", "2026-11-21T13:00:00Z", "a1b2c3d4e5f6")
    doc["records"].remove(find(doc, "fa-d128-n8192-b4-h16-causal", "attnvk", "cuda"))
    rng = random.Random(60)
    doc["records"].append(record(rng, "attnvk", "cuda", 1, doc["devices"][1], case(256, 4096, False)))
    write("new_missing.json", doc)

    with open(os.path.join(HERE, "base.json")) as f:
        text = f.read()
    with open(os.path.join(HERE, "bad_json.json"), "w") as f:
        f.write(text[:5000])  # cut mid-record
    bad = json.loads(text)
    bad["format_version"] = 2
    write("bad_version.json", bad)


if __name__ == "__main__":
    main()
