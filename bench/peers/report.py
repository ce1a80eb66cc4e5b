#!/usr/bin/python3
"""Writes the peers comparison as markdown: RESULTS_DIR/summary.md, and with --update-docs also the
part of docs/performance.md between `<!-- peers:begin -->` and `<!-- peers:end -->`.

Usage: report.py RESULTS_DIR [--update-docs] [--docs PATH]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aggregate  # noqa: E402
import summaries  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"
PEERS = ("onnxruntime", "pytorch", "opencv")
INT8 = ("kiln-int8", "kiln-int8-w7", "onnxruntime-qdq", "pytorch-int8")
NAMES = {"kiln": "kiln", "onnxruntime": "ONNX Runtime", "pytorch": "PyTorch", "opencv": "OpenCV DNN",
         "kiln-int8": "kiln INT8", "onnxruntime-qdq": "ONNX Runtime QDQ INT8",
         "pytorch-int8": "PyTorch INT8", "kiln-int8-w7": "kiln INT8 7-bit weights"}
ORDER = ("kiln",) + PEERS + INT8


def _engines(agg):
    present = {e for (_, _, _, e) in agg}
    return [e for e in ORDER if e in present] + sorted(present - set(ORDER))


def _ratio_columns(agg):
    """The summary table's columns: (engine, header) for each ratio some cell has."""
    present = {e for (_, _, _, e) in agg}
    cols = [(p, f"kiln/{NAMES[p]}") for p in PEERS]
    if "kiln-int8" in present:
        cols.append(("kiln-int8", "kiln INT8/kiln FP32"))
    if "onnxruntime-qdq" in present:
        cols.append(("onnxruntime-qdq", "kiln INT8/ONNX Runtime QDQ INT8"))
    if "pytorch-int8" in present:
        cols.append(("pytorch-int8", "kiln INT8/PyTorch INT8"))
    if "kiln-int8-w7" in present:
        cols.append(("kiln-int8-w7", "kiln INT8 7-bit/ONNX Runtime QDQ INT8"))
    return cols


def _fmt(v, digits=2):
    return f"{v:.{digits}f}"


def markdown(rows, meta):
    agg = aggregate.aggregate(rows)
    rat = aggregate.ratios(agg, rows)
    engines = _engines(agg)
    versions = {}
    for (_, _, _, e), s in agg.items():
        if s.get("version"):
            versions.setdefault(e, set()).add(s["version"].split(" (")[0])
    torch_blas = next((s for (_, _, _, e), s in agg.items() if e == "pytorch" and "blas" in s), None)
    lines = [
        f"Measured {meta['date']} by `bench/peers/run.sh` (kiln {meta.get('kiln_commit', '?')}) on "
        f"{meta['cpu']}, {meta['cores']} cores. Versions: "
        + "; ".join(f"{NAMES.get(e, e)}: {', '.join(sorted(v))}" for e, v in sorted(versions.items()))
        + ".",
        "",
        "How: every measurement is its own process that loads the model, feeds the model set's "
        "reference input (tiled to the batch), warms up "
        f"({meta['warmup_runs']} runs or {meta['warmup_s']:g} s), then times up to {meta['iters']} "
        f"runs (at most {meta['budget_s']:g} s, at least {meta['min_iters']} runs), each run timed "
        "alone. All engines run one cell before the next, in an order rotated per cell and repeat; "
        f"the whole comparison ran {meta['repeats']} times. Values are medians over the repeats; "
        "spread = (max - min) / median of the per-repeat p50. Threads: kiln's context pool and "
        "tuner, ONNX Runtime intra-op (inter-op 1, sequential, all graph optimizations), "
        "`torch.set_num_threads`, `cv::setNumThreads`; OMP/OpenBLAS pools are set to the same count. "
        "kiln builds with its default options and a profile at exactly the batch. PyTorch is eager "
        "under `inference_mode`, best of the default and channels_last layouts (named per row). "
        "OpenCV reads static-batch opset-11 re-exports of the same models (`cv_export.py`).",
    ]
    loads = sorted(r["loadavg1"] for r in rows if r.get("loadavg1") is not None)
    if loads:
        mid = loads[len(loads) // 2]
        lines += ["", f"Machine load (1-minute load average when each measurement started): median "
                      f"{mid:.1f}, range {loads[0]:.1f}–{loads[-1]:.1f}, on {meta['cores']} cores. "
                      "Above the core count, other processes were competing for the cores: "
                      "multi-threaded runs suffer most, since every thread of a parallel region "
                      "waits for the slowest."]
    if torch_blas:
        lines += ["", f"PyTorch's BLAS: `{torch_blas['blas'].split(',')[-1].strip()}` "
                      f"(a 512x512 matmul ran at {torch_blas['matmul512_gflops']:.0f} GFLOP/s in the "
                      "runner; the reference BLAS would be about 100x slower)."]
    lines += ["", "p50/p99 in ms, img/s = batch x runs / timed seconds; runs = timed runs per "
                  "repeat; max err = largest |output - PyTorch's reference output| (first batch "
                  "row, all repeats; outputs are of order 1); kiln/peer = kiln's p50 over the "
                  "peer's, kiln's INT8 engine for the INT8 peers (below 1: kiln is faster); on the "
                  "kiln INT8 row, its p50 over kiln's FP32 engine's; on the 7-bit weights row, "
                  "its p50 over ONNX Runtime QDQ's.", "",
              "| model | batch | threads | engine | p50 | p99 | img/s | spread | runs | max err | kiln/peer p50 |",
              "|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|"]
    failures = []
    for (m, b, t) in aggregate.cells(agg):
        for e in engines:
            s = agg.get((m, b, t, e))
            if s is None:
                continue
            name = NAMES.get(e, e)
            if e == "pytorch" and s.get("layout"):
                name += f" ({s['layout']})"
            if "p50_ms" not in s:
                lines.append(f"| {m} | {b} | {t} | {name} | — | — | — | — | failed x{s['n_errors']} | — | — |")
                failures.append((m, b, t, e, s["errors"]))
                continue
            r = rat.get((m, b, t, e))
            ratio = f"{r['p50']:.2f}x" if r else "—"
            runs = "/".join(str(i) for i in s["iters"])
            err = f"{s['max_abs_err']:.0e}" if "max_abs_err" in s else "—"
            lines.append(f"| {m} | {b} | {t} | {name} | {_fmt(s['p50_ms'])} | "
                         f"{_fmt(s['p99_ms'])} | {_fmt(s['images_per_s'], 1)} | "
                         f"{s['spread_pct']:.0f}% | {runs} | {err} | {ratio} |")
            if s["errors"]:
                failures.append((m, b, t, e, s["errors"]))
    ratio_cols = _ratio_columns(agg)
    lines += ["", "kiln's p50 relative to each peer (median p50 over median p50; in parentheses, "
                  "with more than one repeat, the median of the per-repeat ratios, steadier when "
                  "the host's speed drifts between repeats; below 1: kiln is faster):", "",
              "| model | batch | threads | " + " | ".join(h for _, h in ratio_cols) + " |",
              "|---|---:|---:|" + "---:|" * len(ratio_cols)]
    for (m, b, t) in aggregate.cells(agg):
        cols = []
        for p, _ in ratio_cols:
            r = rat.get((m, b, t, p))
            cell = f"{r['p50']:.2f}x" if r else "—"
            if r and r.get("paired_n", 0) > 1:
                cell += f" ({r['p50_paired']:.2f}x)"
            cols.append(cell)
        lines.append(f"| {m} | {b} | {t} | " + " | ".join(cols) + " |")
    if failures:
        lines += ["", "Not measured (the engine's own error):", ""]
        for m, b, t, e, errs in failures:
            lines.append(f"- {NAMES.get(e, e)}, {m} batch {b}, {t} thread(s): {'; '.join(errs)}")
    return "\n".join(lines) + "\n"


def update_docs(path, md):
    with open(path) as f:
        text = f.read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"{path} has no '{BEGIN}' ... '{END}' section")
    text = text[: i + len(BEGIN)] + "\n" + md + text[j:]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results")
    p.add_argument("--update-docs", action="store_true")
    p.add_argument("--docs", default=os.path.join(ROOT, "docs", "performance.md"))
    args = p.parse_args()
    rows = aggregate.load(os.path.join(args.results, "raw.jsonl"))
    with open(os.path.join(args.results, "meta.json")) as f:
        meta = json.load(f)
    md = markdown(rows, meta)
    with open(os.path.join(args.results, "summary.md"), "w") as f:
        f.write(md)
    print(md)
    # One kiln summary per (model, batch, threads, engine) for `kiln report RESULTS_DIR`.
    written = summaries.write_summaries(args.results)
    print(f"[peers] {len(written)} summaries for kiln report written next to raw.jsonl")
    if args.update_docs:
        update_docs(args.docs, md)
        print(f"[peers] updated {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
