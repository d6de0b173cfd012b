#!/usr/bin/env python3
"""Reads an ATTNVK_CUDA_TIMELINE file (runtime/cuda/cuda_timeline.c; the kernel's
native/sm90_timeline.h) and prints where a launch's time went: each CTA's phases
(prologue until Q is in shared memory, the first S, the key loop, the wait at the
epilogue's sync, the epilogue), the gap before the next CTA on the same SM, and the
launch's tail. Clocks are SM cycles, shown as microseconds through the ratio of
%globaltimer to clock64 across each SM's CTAs.

usage: timeline.py FILE [FILE ...]"""
import statistics
import sys


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def summarize(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            w = [int(x) for x in line.split()]
            cta, word0, gt, c0, cq, cs, cl, csync, cend = w[:9]
            waits = (w[9:13] + [0, 0, 0, 0])[:4]  # K, V, the turn (thread 0), the producer's free stages
            staged, began, k_issued = (w[13:16] + [0, 0, 0])[:3]
            rows.append(dict(cta=cta, sm=word0 >> 32, tiles=word0 & 0xFFFFFFFF, gt=gt, c0=c0, cq=cq, cs=cs,
                             cl=cl, csync=csync, cend=cend, waits=waits, staged=staged, began=began, k_issued=k_issued))
    by_sm = {}
    for r in rows:
        by_sm.setdefault(r["sm"], []).append(r)
    # ns per cycle: globaltimer against clock64 over each SM's first and last CTA
    ratios = []
    for lst in by_sm.values():
        lst.sort(key=lambda r: r["c0"])
        if len(lst) >= 2 and lst[-1]["c0"] > lst[0]["c0"]:
            ratios.append((lst[-1]["gt"] - lst[0]["gt"]) / (lst[-1]["c0"] - lst[0]["c0"]))
    ns = statistics.median(ratios) if ratios else 1.0 / 1.755
    us = ns / 1000.0
    phase = {k: [] for k in ("entry->block", "block->Q", "entry->1st K", "prologue", "first S", "loop", "per tile", "sync wait", "epilogue", "CTA", "gap",
                             "K wait/tile", "V wait/tile", "turn wait/tile", "prod. wait/tile")}
    fixed = []
    for lst in by_sm.values():
        for i, r in enumerate(lst):
            has_s = r["cs"] >= r["cq"] and r["cs"] > 0
            phase["prologue"].append((r["cq"] - r["c0"]) * us)
            if has_s:
                phase["first S"].append((r["cs"] - r["cq"]) * us)
                phase["loop"].append((r["cl"] - r["cs"]) * us)
                if r["tiles"] > 1:
                    phase["per tile"].append((r["cl"] - r["cs"]) * us / (r["tiles"] - 1))
            phase["sync wait"].append((r["csync"] - r["cl"]) * us)
            phase["epilogue"].append((r["cend"] - r["csync"]) * us)
            if r["began"] and r["k_issued"]:
                phase["entry->block"].append((r["began"] - r["c0"]) * us)
                phase["block->Q"].append((r["cq"] - r["began"]) * us)
                phase["entry->1st K"].append((r["k_issued"] - r["c0"]) * us)
            if r["staged"]:
                phase.setdefault("epi: staging", []).append((r["staged"] - r["csync"]) * us)
                phase.setdefault("epi: stores", []).append((r["cend"] - r["staged"]) * us)
            phase["CTA"].append((r["cend"] - r["c0"]) * us)
            if r["tiles"] > 0:
                for k, name in enumerate(("K wait/tile", "V wait/tile", "turn wait/tile", "prod. wait/tile")):
                    phase[name].append(r["waits"][k] * us / r["tiles"])
            if i + 1 < len(lst):
                phase["gap"].append((lst[i + 1]["c0"] - r["cend"]) * us)
    tile_us = statistics.median(phase["per tile"]) if phase["per tile"] else 0.0
    tile_cycles = tile_us / us if tile_us else 0.0
    for r in rows:
        fixed.append((r["cend"] - r["c0"]) * us - r["tiles"] * tile_us)
    t0 = min(r["gt"] for r in rows)
    ends = {sm: max(r["gt"] + (r["cend"] - r["c0"]) * ns for r in lst) for sm, lst in by_sm.items()}
    span = (max(ends.values()) - t0) / 1000.0
    first_idle = (min(ends.values()) - t0) / 1000.0
    busy = sum((r["cend"] - r["c0"]) * us for r in rows)
    print(f"{path}: {len(rows)} CTAs on {len(by_sm)} SMs ({len(rows) / max(1, len(by_sm)):.1f} each), "
          f"{ns:.4f} ns/cycle; tiles a CTA: median {statistics.median(r['tiles'] for r in rows)}, "
          f"{tile_cycles:.0f} cycles a tile")
    print(f"  launch span {span:.1f} us (first SM idle at {first_idle:.1f} us); busy {busy / len(by_sm) / span * 100:.1f}% "
          f"of SM time; fixed cost a CTA (CTA time - tiles x median tile) median {statistics.median(fixed):.2f} us")
    print("  phase        median     p10      p90     mean   (us)")
    for k, v in phase.items():
        if v:
            print(f"  {k:15s} {statistics.median(v):8.3f} {pct(v, 0.1):8.3f} {pct(v, 0.9):8.3f} {statistics.fmean(v):8.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        summarize(p)
