#!/usr/bin/python3
"""Renders a `kiln report` in headless Chromium (Debian's chromium package) and checks the page a
reader would see: every table present with rows and no empty cell, every chart an <svg> with bars
or lines, names with <>&" shown as text, and no "NaN", "Infinity" or "undefined" anywhere.

Usage: report_render_test.py KILN_BINARY

Without chromium the test fails under CI (CI is set: scripts/install_deps.sh installs it) and is
skipped (exit 77) elsewhere, saying so.
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import summaries  # noqa: E402  (bench/peers' summary writer: a schema-valid summary to edit)

SKIP = 77
ODD_LAYER = 'conv<1>&"relu"'
META = {"date": "2026-11-25 18:07 UTC", "cpu": "Test CPU", "cores": 2, "repeats": 1,
        "iters": 100, "budget_s": 5.0, "min_iters": 10, "warmup_runs": 10, "warmup_s": 1.0}


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def summary(tool, precision, batch, p50, threads=2):
    agg = {"p50_ms": p50, "p90_ms": p50 * 1.1, "p99_ms": p50 * 1.3, "mean_ms": p50,
           "min_ms": p50 * 0.9, "images_per_s": 1000.0 * batch / p50, "n": 1, "errors": [],
           "n_errors": 0, "spread_pct": 3.0, "p50_min": p50, "p50_max": p50, "iters": [50],
           "version": f"{tool} 1.0"}
    s = summaries.summary(("resnet50", batch, threads, tool), agg, META)
    s["source"]["tool"] = "kiln exec" if tool == "kiln" else tool
    s["build"]["precision"] = precision
    return s


def write_fixture(folder):
    """kiln at fp32 and int8 over three batches (a profile, an int8 accuracy with per-layer
    errors), ONNX Runtime and PyTorch at batch 1, and a file that is not a summary."""
    runs = []
    for b in (1, 2, 4):
        runs.append(("kiln", "fp32", b, 10.0 * b ** 0.8))
        runs.append(("kiln", "int8", b, 4.0 * b ** 0.8))
    runs += [("onnxruntime", "fp32", 1, 8.0), ("pytorch", "fp32", 1, 14.0)]
    for tool, precision, b, p50 in runs:
        s = summary(tool, precision, b, p50)
        if (tool, precision, b) == ("kiln", "fp32", 1):
            layers = [{"name": n, "timeMs": t * 10, "averageMs": t, "medianMs": t,
                       "percentage": 100 * t / 10} for n, t in
                      [(ODD_LAYER, 3.0), ("/layer1/conv", 2.0), ("/fc/Gemm", 0.5)] +
                      [(f"/layer4/block{i}/conv", 0.25) for i in range(18)]]
            s["profile"] = {"source": "separate profiling run", "iterations": 10,
                            "total_ms": 100, "average_ms": 10, "median_ms": 10, "layers": layers}
        if (tool, precision, b) == ("kiln", "int8", 1):
            s["accuracy"] = {"reference": "the fp32 engine", "samples": 100,
                             "metric": "top1_percent", "value": 75.1, "reference_value": 75.5,
                             "delta": -0.4, "max_abs_err": 0.2,
                             "layers": [{"name": ODD_LAYER, "rel_err": 0.004},
                                        {"name": "/layer1/conv", "rel_err": 0.02},
                                        {"name": "/fc/Gemm", "rel_err": 0.06}]}
        sub = "peers" if tool != "kiln" else "kiln"
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
        with open(os.path.join(folder, sub, f"{tool}-{precision}-b{b}.json"), "w") as f:
            json.dump(s, f)
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("not a summary\n")


class Page(html.parser.HTMLParser):
    """Tables (rows of cell texts), SVGs (tag counts by class) and the visible text."""

    def __init__(self):
        super().__init__()
        self.tables, self.svgs, self.text = [], [], []
        self._row = self._cell = None
        self._svg = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"id": a.get("id", ""), "rows": []})
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "svg":
            self._svg = {"rect.bar": 0, "path.series": 0, "circle.point": 0, "text": 0}
            self.svgs.append(self._svg)
        elif self._svg is not None:
            key = f"{tag}.{a.get('class', '')}"
            if key in self._svg:
                self._svg[key] += 1
            if tag == "text":
                self._svg["text"] += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1]["rows"].append(self._row)
            self._row = None
        elif tag == "svg":
            self._svg = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def fail(message):
    print(f"FAIL: {message}")
    return 1


def check(page):
    errors = []
    ids = [t["id"] for t in page.tables]
    if ids != ["table-results", "table-peers", "table-runs"]:
        errors.append(f"tables {ids}, expected results, peers, runs")
    for t in page.tables:
        body = t["rows"][1:]
        if not body:
            errors.append(f"{t['id']} has no rows")
        for r in body:
            if any(c == "" for c in r) or len(r) != len(t["rows"][0]):
                errors.append(f"{t['id']}: incomplete row {r}")
    if len(page.svgs) != 4:  # latency, throughput, per-layer time, per-layer error
        errors.append(f"{len(page.svgs)} charts, expected 4")
    for i, s in enumerate(page.svgs):
        if s["rect.bar"] + s["path.series"] == 0 or s["text"] < 5:
            errors.append(f"chart {i} is empty: {s}")
    text = "".join(page.text)
    for bad in ("NaN", "Infinity", "undefined", "nan ms"):
        if bad in text:
            errors.append(f'"{bad}" on the page')
    if ODD_LAYER not in text:
        errors.append(f"the layer name {ODD_LAYER!r} is not shown as text")
    return errors


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    kiln = sys.argv[1]
    chromium = find_chromium()
    if chromium is None:
        message = ("chromium is not installed: `bash scripts/install_deps.sh` installs Debian's "
                   "chromium package, which this test needs to render the report")
        if os.environ.get("CI"):
            return fail(message)
        print(f"SKIP: {message}")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="kiln-report-render-") as d:
        results = os.path.join(d, "results")
        write_fixture(results)
        out = os.path.join(d, "report.html")
        r = subprocess.run([kiln, "report", results, "-o", out, "--title", "render <test> & more"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return fail(f"kiln report exited {r.returncode}: {r.stdout}{r.stderr}")
        profile = os.path.join(d, "chromium-profile")
        os.makedirs(profile)
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--user-data-dir={profile}", "--dump-dom", "file://" + out],
                             capture_output=True, text=True, timeout=90)
        if dom.returncode != 0 or "<body" not in dom.stdout:
            return fail(f"chromium exited {dom.returncode}: {dom.stderr[-2000:]}")
        page = Page()
        page.feed(dom.stdout)
        errors = check(page)
        for e in errors:
            print(f"FAIL: {e}")
        if errors:
            return 1
        print(f"report rendered by {chromium}: {len(page.tables)} tables "
              f"({', '.join(str(len(t['rows']) - 1) for t in page.tables)} rows), "
              f"{len(page.svgs)} charts")
        return 0


if __name__ == "__main__":
    sys.exit(main())
