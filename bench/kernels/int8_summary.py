#!/usr/bin/python3
"""ResNet-50's INT8 convolutions as one figure: runs kiln_kernel_bench on every distinct shape
(bench/kernels/layers.cc, kResNet50) for one tactic and thread count, and weights each shape by how
often it occurs in the network (the `repeats` counter):

    GOP/s = sum(repeats * ops) / sum(repeats * time),  % of the peak measured in the same run
    (vpdpbusd's; tdpbsud's for the AMX tactic).

  bench/kernels/int8_summary.py build/release/bench/kiln_kernel_bench [--tactic=qconv.vnni.u8s8.avx512]
      [--threads=1] [--min-time=0.3]
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--tactic", default="qconv.vnni.u8s8.avx512")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-time", default="0.3")
    args = ap.parse_args()
    pattern = rf"resnet50\.qconv.*/{args.tactic}/threads:{args.threads}/"
    out = subprocess.run([args.bench, f"--benchmark_filter={pattern}",
                          f"--benchmark_min_time={args.min_time}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True)
    rows = json.loads(out.stdout)["benchmarks"]
    if not rows:
        sys.exit(f"no benchmark matched {pattern}")
    ops = time = 0.0
    peak = None
    print(f"{'layer':40} {'x':>2} {'ms':>8} {'GOP/s':>7} {'% peak':>6}")
    for r in rows:
        if "_residual/" in r["name"]:  # the block ends again with their residual: not in the suite
            continue
        seconds = r["real_time"] * {"ms": 1e-3, "us": 1e-6, "ns": 1e-9}[r["time_unit"]]
        n = int(r.get("repeats", 1))
        ops += n * r["GOPs"] * seconds
        time += n * seconds
        if "peak_pct" in r:
            peak = r["GOPs"] / r["peak_pct"] * 100
        print(f"{r['name'].split('/')[0]:40} {n:>2} {seconds * 1e3:8.3f} {r['GOPs']:7.1f} "
              f"{r.get('peak_pct', 0):6.1f}")
    total = ops / time
    tail = f", {100 * total / peak:.1f}% of the tactic's measured peak ({peak:.0f} GOP/s)" if peak else ""
    print(f"ResNet-50 convolutions, network-weighted: {total:.1f} GOP/s{tail}; "
          f"{time * 1e3:.2f} ms per image in convolutions")


if __name__ == "__main__":
    main()
