#!/usr/bin/python3
"""Writes one benchmark summary per (model, batch, threads, engine) of a bench/peers run next to its
raw.jsonl, in kiln's summary schema (kiln.exec.summary, docs/exec_summary.schema.json), so that
`kiln report RESULTS_DIR -o report.html` renders the comparison next to kiln's own runs.

Each summary holds the medians over the repeats that measured (aggregate.py): p50, p90, p99 and mean
of the runs' latencies, the smallest run, images/s as throughput_qps x batch; source.tool is the
engine ("kiln", "onnxruntime", "pytorch", "opencv"); accuracy.max_abs_err is the output check
against PyTorch's reference output. What the runners do not record (the CPU's features, standard
deviations, the walltime) is null. A cell where every repeat failed gets no summary.

Usage: summaries.py RESULTS_DIR
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aggregate  # noqa: E402

SCHEMA = "kiln.exec.summary"
SCHEMA_VERSION = 4


# The tool and precision of each engine of a run (run.py's names).
TOOL_PRECISION = {"kiln-int8": ("kiln", "int8"), "kiln-int8-w7": ("kiln", "int8"),
                  "onnxruntime-qdq": ("onnxruntime", "int8"),
                  "pytorch-int8": ("pytorch", "int8")}


def tool_precision(engine):
    return TOOL_PRECISION.get(engine, (engine, "fp32"))


def file_name(key):
    model, batch, threads, engine = key
    tool, precision = tool_precision(engine)
    return f"{model}-{precision}-b{batch}-t{threads}-{tool}.json"


def _iso(date):
    """meta.json's "2026-11-25 18:07 UTC" as "2026-11-25T18:07:00Z"; None when it is not that."""
    parts = (date or "").split()
    if len(parts) == 3 and parts[2] == "UTC" and len(parts[1]) == 5:
        return f"{parts[0]}T{parts[1]}:00Z"
    return None


def _stats(s):
    percentiles = [{"percentile": p, "ms": s[f"p{p}_ms"]} for p in (90, 99) if f"p{p}_ms" in s]
    return {"min": s.get("min_ms"), "max": None, "mean": s.get("mean_ms"), "median": s["p50_ms"],
            "stddev": None, "cov_percent": None, "percentiles": percentiles}


def _policy(meta):
    return {
        "warmup_ms": 1000.0 * meta["warmup_s"],
        "min_iterations": meta["min_iters"],
        "min_duration_s": 0,
        "avg_runs": 1,
        "percentiles": [90, 99],
        "warmup_policy": f"{meta['warmup_runs']} runs or {meta['warmup_s']:g} s, whichever ends "
                         "first (at least one run)",
        "stop_rule": f"up to {meta['iters']} timed runs, stopping after {meta['budget_s']:g} s but "
                     f"never before {meta['min_iters']} runs; {meta['repeats']} repeat(s), each "
                     "its own process",
        "clock": "a monotonic clock around each run, in the runner",
        "percentile_method": "numpy's linear interpolation over one repeat's runs; the median of "
                             "the repeats' values",
        "median_method": "numpy's median of one repeat's runs; the median of the repeats' values",
        "cov_method": "not computed by bench/peers (see the spread in results.warnings)",
        "unstable_cov_percent": 1.0,
    }


def _warnings(s):
    w = [f"p50 spread over {s['n']} repeat(s): {s['spread_pct']:.0f}% "
         f"(min {s['p50_min']:.4g} ms, max {s['p50_max']:.4g} ms)"]
    if s.get("layout"):
        w.append(f"PyTorch layout: {s['layout']}")
    for e in s["errors"]:
        w.append(f"failed repeat(s): {e}")
    return w


def summary(key, s, meta):
    """The summary of one aggregated cell (aggregate.aggregate's value for `key`)."""
    model, batch, threads, engine = key
    tool, precision = tool_precision(engine)
    latency = _stats(s)
    queries = sum(s["iters"])
    accuracy = None
    if "max_abs_err" in s:
        accuracy = {"reference": "PyTorch's output for the model set's reference input "
                                 "(first batch row)",
                    "samples": 1, "max_abs_err": s["max_abs_err"]}
    kernel = meta.get("kernel")
    out = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "source": {"tool": tool, "version": s.get("version") or None, "log": "raw.jsonl"},
        "started_at": _iso(meta.get("date")),
        "command": [],
        "model": {"name": model, "batch": batch, "onnx": None, "engine": None,
                  "saved_engine": None, "inputs": [], "outputs": []},
        "build": {"import_ms": None, "build_ms": None, "save_ms": None, "load_ms": None,
                  "precision": precision, "builder_optimization_level": None},
        "environment": {"cpu": None, "os": f"Linux {kernel}" if kernel else None,
                        "device": meta.get("cpu"), "kiln": None},
        "execution": {"inference_streams": 1, "threads_per_stream": threads,
                      "cores_used": threads},
        "policy": _policy(meta),
        "results": {
            "warmup_queries": s.get("warmup_runs"), "warmup_end_ms": None,
            "queries": queries if queries > 0 else None, "queries_per_stream": None,
            "throughput_qps": s["images_per_s"] / batch,
            "total_host_walltime_s": None, "total_compute_time_s": None,
            "latency_ms": latency, "enqueue_ms": None, "compute_ms": latency,
            "h2d_ms": None, "d2h_ms": None, "end_to_end_ms": None,
            "stable": None, "warnings": _warnings(s),
        },
        "profile": None,
        "throughput_search": None,
    }
    if accuracy:
        out["accuracy"] = accuracy
    return out


def build(rows, meta):
    """{file name: summary} for every cell with at least one measurement."""
    agg = aggregate.aggregate(rows)
    return {file_name(k): summary(k, s, meta) for k, s in agg.items() if "p50_ms" in s}


def write_summaries(results_dir):
    """Writes the summaries (each atomically) next to raw.jsonl; returns their paths."""
    rows = aggregate.load(os.path.join(results_dir, "raw.jsonl"))
    with open(os.path.join(results_dir, "meta.json")) as f:
        meta = json.load(f)
    written = []
    for name, s in sorted(build(rows, meta).items()):
        path = os.path.join(results_dir, name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(s, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
        written.append(path)
    return written


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    paths = write_summaries(sys.argv[1])
    print(f"[peers] {len(paths)} summaries written next to raw.jsonl in {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
