#!/usr/bin/python3
"""Summarises raw.jsonl rows: per (model, batch, threads, engine) the medians over repeats and
their spread, and per cell kiln's p50 (and img/s) relative to each peer.

spread = (max - min) / median of the per-repeat p50s, in percent: with 3 repeats it is the whole
range, so a ratio is only meaningful when it is further from 1 than the spreads of both rows.
"""
import json
import statistics
import sys

KEY = ("model", "batch", "threads", "engine")


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _spread(values):
    med = statistics.median(values)
    return 100.0 * (max(values) - min(values)) / med if med > 0 else 0.0


def aggregate(rows):
    """{(model, batch, threads, engine): summary}; a summary has p50/p99/img_s medians, spread_pct,
    n (repeats that measured), version, extra fields, and errors (distinct messages of the rest)."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in KEY), []).append(r)
    out = {}
    for key, rs in groups.items():
        ok = [r for r in rs if "error" not in r]
        errors = sorted({r["error"] for r in rs if "error" in r})
        s = {"n": len(ok), "errors": errors, "n_errors": len(rs) - len(ok)}
        if ok:
            p50 = [r["p50_ms"] for r in ok]
            s.update(p50_ms=statistics.median(p50), p99_ms=statistics.median(r["p99_ms"] for r in ok),
                     images_per_s=statistics.median(r["images_per_s"] for r in ok),
                     spread_pct=_spread(p50), p50_min=min(p50), p50_max=max(p50),
                     iters=sorted(r.get("iters", 0) for r in ok),
                     version=ok[0].get("version", ""))
            # The other figures the runners print, when every repeat has them (summaries.py).
            for field in ("p90_ms", "mean_ms"):
                if all(field in r for r in ok):
                    s[field] = statistics.median(r[field] for r in ok)
            if all("min_ms" in r for r in ok):
                s["min_ms"] = min(r["min_ms"] for r in ok)
            if all("warmup_runs" in r for r in ok):
                s["warmup_runs"] = sum(r["warmup_runs"] for r in ok)
            errs = [r["max_abs_err"] for r in ok if "max_abs_err" in r]
            if errs:  # the output check: max |output - PyTorch's reference| over the repeats
                s["max_abs_err"] = max(errs)
            layouts = sorted({r["layout"] for r in ok if "layout" in r})
            if layouts:
                s["layout"] = "/".join(layouts)
            if "blas" in ok[0]:
                s["blas"] = ok[0]["blas"]
                s["matmul512_gflops"] = statistics.median(r.get("matmul512_gflops", 0) for r in ok)
        out[key] = s
    return out


# The ratio shown for each engine: (numerator, denominator) p50s. The FP32 peers against kiln's
# FP32 engine, the INT8 peers against kiln's INT8 engine, and kiln's INT8 engine against its own
# FP32 one (its speed-up). Below 1: the numerator, a kiln engine, is faster.
RATIO_OF = {"onnxruntime": ("kiln", "onnxruntime"), "pytorch": ("kiln", "pytorch"),
            "opencv": ("kiln", "opencv"), "onnxruntime-qdq": ("kiln-int8", "onnxruntime-qdq"),
            "kiln-int8": ("kiln-int8", "kiln"), "pytorch-int8": ("kiln-int8", "pytorch-int8"),
            "kiln-int8-w7": ("kiln-int8-w7", "onnxruntime-qdq")}


def paired_ratios(rows):
    """{(model, batch, threads, engine): (median, count)} of num p50 / den p50 within each repeat,
    (num, den) = RATIO_OF[engine], over the repeats where both measured. On a host whose speed
    drifts between repeats this is steadier than the ratio of the medians, whose numerator and
    denominator may come from different repeats."""
    p50 = {}
    for r in rows:
        if "error" not in r and "p50_ms" in r:
            p50[(r["model"], r["batch"], r["threads"], r.get("repeat"), r["engine"])] = r["p50_ms"]
    per = {}
    for (m, b, t, rep, e) in p50:
        for peer, (num, den) in RATIO_OF.items():
            if e == num and (m, b, t, rep, den) in p50:
                per.setdefault((m, b, t, peer), []).append(p50[(m, b, t, rep, num)] /
                                                           p50[(m, b, t, rep, den)])
    return {k: (statistics.median(v), len(v)) for k, v in per.items()}


def ratios(agg, rows=None):
    """{(model, batch, threads, engine): {"p50": num p50 / den p50, "img_s": num img/s / den img/s}}
    with (num, den) = RATIO_OF[engine], for every cell where both measured; given the rows, also
    "p50_paired" and "paired_n" (paired_ratios)."""
    paired = paired_ratios(rows) if rows is not None else {}
    out = {}
    for (m, b, t, e), s in agg.items():
        if e not in RATIO_OF:
            continue
        num, den = (agg.get((m, b, t, x)) for x in RATIO_OF[e])
        if not num or not den or "p50_ms" not in num or "p50_ms" not in den:
            continue
        out[(m, b, t, e)] = {"p50": num["p50_ms"] / den["p50_ms"],
                             "img_s": num["images_per_s"] / den["images_per_s"]}
        if (m, b, t, e) in paired:
            out[(m, b, t, e)]["p50_paired"], out[(m, b, t, e)]["paired_n"] = paired[(m, b, t, e)]
    return out


def cells(agg):
    """The (model, batch, threads) cells in first-seen order of models, then batch, then threads."""
    models = []
    for (m, _, _, _) in agg:
        if m not in models:
            models.append(m)
    keys = {(m, b, t) for (m, b, t, _) in agg}
    return sorted(keys, key=lambda c: (models.index(c[0]), c[1], c[2]))


def main():
    rows = load(sys.argv[1])
    agg = aggregate(rows)
    rat = ratios(agg)
    for key in sorted(agg, key=str):
        print(key, json.dumps(agg[key]))
    for key in sorted(rat, key=str):
        print("/".join(RATIO_OF[key[3]]), key[:3], json.dumps(rat[key]))


if __name__ == "__main__":
    main()
