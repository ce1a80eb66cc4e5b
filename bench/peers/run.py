#!/usr/bin/python3
"""Runs kiln and its peers on this machine, interleaved, and writes bench/results/<date>/raw.jsonl.

Every measurement is one subprocess (a runner: kiln_peers_kiln, kiln_peers_ort, kiln_peers_opencv,
torch_runner.py) so that thread settings and allocator state never leak from one to the next.
All engines run one (model, batch, threads) cell before the next cell starts, in an engine order
rotated per cell and per repeat, and the whole comparison is repeated --repeats times: on a noisy
machine this spreads slow phases over every engine instead of one. Then aggregate.py and
report.py summarise the rows (summary.md next to raw.jsonl; --update-docs also rewrites the
peers section of docs/performance.md).
Normally started by run.sh, which installs the peers, builds the runners and exports the models.
"""
import argparse
import datetime
import itertools
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ENGINES = ("kiln", "onnxruntime", "pytorch", "opencv")
# INT8, on request (--engines=...,kiln-int8,onnxruntime-qdq,pytorch-int8): kiln's INT8 engine from
# <int8-dir>/<model>.calib, ONNX Runtime on the QDQ model `kiln quantize` wrote from the same
# calibration (<int8-dir>/<model>.qdq.onnx), and PyTorch's own post-training quantization
# calibrated on the same photos (<int8-dir>/photos); run.sh --int8 makes all three. kiln-int8-w7:
# kiln's INT8 engine from the same calibration with 7-bit weights (--int8WeightBits=7, what CPUs
# without VNNI run with vpmaddubsw).
INT8_ENGINES = ("kiln-int8", "kiln-int8-w7", "onnxruntime-qdq")
KILN_INT8 = ("kiln-int8", "kiln-int8-w7")
DEFAULT_MODELS = "resnet50,mobilenet_v2,efficientnet_b0,vit_tiny"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--extra", action="append", default=[], metavar="MODEL:BATCH[:THREADS]",
                   help="add a cell (threads default: every --threads value); repeatable")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--iters", type=int, default=100, help="timed runs per measurement, at most")
    p.add_argument("--budget-s", type=float, default=5.0, help="timed seconds per measurement")
    p.add_argument("--min-iters", type=int, default=10)
    p.add_argument("--warmup-runs", type=int, default=10)
    p.add_argument("--warmup-s", type=float, default=1.0)
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 1 repeat, 1 s budget, 3 warm-up runs")
    p.add_argument("--timeout", type=float, default=600, help="seconds per subprocess")
    p.add_argument("--model-dir", default=os.environ.get("KILN_MODEL_DIR",
                                                         os.path.join(ROOT, "models", "cache")))
    p.add_argument("--cv-dir", default=os.path.join(ROOT, "bench", ".cache", "cv"))
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--ort-lib", default=os.environ.get("ORT_LIB", ""))
    p.add_argument("--int8-dir", default=os.path.join(ROOT, "bench", ".cache", "int8"),
                   help="<model>.calib and <model>.qdq.onnx for the INT8 engines")
    p.add_argument("--out", default="", help="results dir (default bench/results/<UTC time>)")
    p.add_argument("--update-docs", action="store_true")
    a = p.parse_args(argv)
    if a.quick:
        a.repeats, a.budget_s, a.warmup_runs, a.warmup_s, a.min_iters = 1, 1.0, 3, 0.3, 5
    return a


def cells(args):
    out = []
    threads = [int(t) for t in args.threads.split(",")]
    for m, b, t in itertools.product(args.models.split(","), args.batches.split(","), threads):
        out.append((m, int(b), t))
    for e in args.extra:
        parts = e.split(":")
        for t in ([int(parts[2])] if len(parts) > 2 else threads):
            out.append((parts[0], int(parts[1]), t))
    seen, unique = set(), []
    for c in out:
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def rotated(engines, k):
    k %= len(engines)
    return engines[k:] + engines[:k]


def command(args, engine, model, batch, threads):
    """The runner's command line, or (None, reason) when this engine cannot run the cell."""
    onnx = os.path.join(args.model_dir, model + ".onnx")
    npy = os.path.join(args.model_dir, model + ".input.npy")
    bench = os.path.join(args.build_dir, "bench")
    extra = []
    if engine in INT8_ENGINES:
        made = os.path.join(args.int8_dir, model + (".calib" if engine in KILN_INT8
                                                      else ".qdq.onnx"))
        if not os.path.exists(made):
            return None, f"no {made} (run.sh --int8 calibrates and quantizes the models)"
        if engine in KILN_INT8:
            extra = ["--calib", made]
            if engine == "kiln-int8-w7":
                extra += ["--int8-weight-bits", "7"]
        else:
            onnx = made
    if engine in ("kiln",) + KILN_INT8:
        cmd = [os.path.join(bench, "kiln_peers_kiln")]
    elif engine in ("onnxruntime", "onnxruntime-qdq"):
        cmd = [os.path.join(bench, "kiln_peers_ort")]
    elif engine == "opencv":
        onnx = os.path.join(args.cv_dir, f"{model}.b{batch}.onnx")
        if not os.path.exists(onnx):
            return None, f"no OpenCV-compatible export ({onnx}): cv_export.py failed for it"
        cmd = [os.path.join(bench, "kiln_peers_opencv")]
    elif engine == "pytorch":
        cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_runner.py")]
    elif engine == "pytorch-int8":
        photos = os.path.join(args.int8_dir, "photos")
        if not os.path.isdir(photos):
            return None, f"no {photos} (run.sh --int8 links the calibration photos there)"
        cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_runner.py")]
        extra = ["--calib-dir", photos]
    else:
        return None, f"unknown engine {engine}"
    if not engine.startswith("pytorch") and not os.path.exists(cmd[0]):
        return None, f"runner {cmd[0]} is not built"
    cmd += ["--model", model, "--onnx", onnx, "--input", npy, "--batch", str(batch),
            "--threads", str(threads), "--warmup-runs", str(args.warmup_runs),
            "--warmup-s", str(args.warmup_s), "--iters", str(args.iters),
            "--budget-s", str(args.budget_s), "--min-iters", str(args.min_iters)] + extra
    return cmd, None


def measure(args, engine, model, batch, threads):
    base = {"engine": engine, "model": model, "batch": batch, "threads": threads}
    cmd, why = command(args, engine, model, batch, threads)
    if cmd is None:
        return dict(base, error=why)
    env = dict(os.environ)
    # Every library's own pool gets the cell's thread count, whichever it reads.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["ORT_LIB"] = args.ort_lib
    load = loadavg()
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return dict(base, error=f"timed out after {args.timeout:.0f} s")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    row = None
    if lines:
        try:
            row = json.loads(lines[-1])
        except ValueError:
            row = None
    if row is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        row = dict(base, error=f"exit {proc.returncode}: {tail[:300]}")
    row["engine"] = engine  # the runner names its library; INT8 rows share kiln's and ORT's runner
    row["wall_s"] = round(time.time() - t0, 2)
    row["loadavg1"] = load  # other processes on the machine: the noise this row ran in
    return row


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "unknown"
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "kiln_commit": commit}


def main(argv=None):
    args = parse_args(argv)
    now = datetime.datetime.now(datetime.timezone.utc)
    out = args.out or os.path.join(ROOT, "bench", "results", now.strftime("%Y%m%dT%H%M%SZ"))
    os.makedirs(out, exist_ok=True)
    engines = args.engines.split(",")
    todo = cells(args)
    meta = dict(machine(), date=now.strftime("%Y-%m-%d %H:%M UTC"), repeats=args.repeats,
                engines=engines, cells=todo, iters=args.iters, budget_s=args.budget_s,
                min_iters=args.min_iters, warmup_runs=args.warmup_runs, warmup_s=args.warmup_s)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    raw = os.path.join(out, "raw.jsonl")
    total = args.repeats * len(todo) * len(engines)
    done = 0
    t_start = time.time()
    with open(raw, "a") as f:
        for r in range(args.repeats):
            for ci, (model, batch, threads) in enumerate(todo):
                for engine in rotated(engines, r + ci):
                    row = measure(args, engine, model, batch, threads)
                    row.update(repeat=r, order=done)
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    done += 1
                    state = row.get("error") or f"p50 {row['p50_ms']:.2f} ms"
                    print(f"[peers {done}/{total} {time.time() - t_start:5.0f}s] rep {r} "
                          f"{model} b{batch} t{threads} {engine}: {state}", flush=True)
    print(f"[peers] raw rows: {raw}")
    report_cmd = ["/usr/bin/python3", os.path.join(HERE, "report.py"), out]
    if args.update_docs:
        report_cmd.append("--update-docs")
    return subprocess.call(report_cmd)


if __name__ == "__main__":
    sys.exit(main())
