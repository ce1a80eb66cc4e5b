#!/usr/bin/python3
"""PyTorch eager peer runner: the same protocol and output as the C++ runners (runner_common.h).

The model is built from the definitions models/export.py exports (same seed, same BatchNorm
settling: random weights, which is all speed needs), put in eval mode and run under
torch.inference_mode() with torch.set_num_threads(--threads). Both the default memory format and
channels_last are timed (each with its own warm-up) and the faster by p50 is reported, with both
in "layouts". Before anything, a 512x512 float32 matmul is timed and the BLAS library torch loaded
is named: Debian's torch falls back to the reference BLAS (about 100x slower matmuls) unless
OpenBLAS is installed (run.sh installs libopenblas0-pthread).

With --calib-dir (run.py's pytorch-int8 engine) the model is quantized first, as a PyTorch user
would: FX graph mode post-training static quantization (torch.ao.quantization prepare_fx /
convert_fx) with the 'onednn' engine and its default qconfig (Debian's torch has onednn and
qnnpack, not fbgemm), calibrated on the same photos kiln calibrates on, preprocessed as kiln
calibrate does by default (shorter side to 256/224 of the input size, center crop, ImageNet
mean/std, RGB). A model FX cannot trace (torchvision's ViT) gets dynamic quantization of its
Linear layers instead, named in "version".
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))

import numpy as np  # noqa: E402
import torch  # noqa: E402


def percentile(v, q):
    return float(np.percentile(np.asarray(v), q))  # linear interpolation, as runner_common.h


def time_runs(args, run):
    """Warm-up (warmup_runs runs or warmup_s seconds, at least one), then the timed loop."""
    w0 = time.perf_counter()
    warm = 0
    while warm < args.warmup_runs and (warm < 1 or time.perf_counter() - w0 < args.warmup_s):
        run()
        warm += 1
    ms = []
    t0 = time.perf_counter()
    for i in range(args.iters):
        if i >= args.min_iters and time.perf_counter() - t0 > args.budget_s:
            break
        r0 = time.perf_counter()
        run()
        ms.append((time.perf_counter() - r0) * 1e3)
    return warm, ms, time.perf_counter() - t0


def blas_library():
    """The BLAS shared object this process mapped (torch loads it at import)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and ".so" in line}
    except OSError:
        return "unknown"
    real = sorted({os.path.realpath(p) for p in libs})
    return ", ".join(real) if real else "none mapped"


def matmul_gflops(threads):
    a, b = torch.rand(512, 512), torch.rand(512, 512)
    torch.mm(a, b)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.3:
        torch.mm(a, b)
        n += 1
    return 2 * 512**3 * n / (time.perf_counter() - t0) / 1e9


def build_model(name):
    import export  # models/export.py

    export.import_deps()
    spec = export.MODELS[name]
    torch.manual_seed(0)
    model = spec.build()
    export.settle_batchnorm(model, spec.shape)
    return model.eval()


def photo_batch(folder, shape):
    """The folder's PNG/JPEG photos as one float32 NCHW batch of the model's input size."""
    from PIL import Image

    _, _, h, w = shape
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.lower().endswith((".png", ".jpg", ".jpeg")):
            continue
        img = Image.open(os.path.join(folder, name))
        img = (img.convert("RGBA") if img.mode == "P" else img).convert("RGB")  # alpha dropped
        short = round(256 * min(h, w) / 224)
        s = short / min(img.size)
        img = img.resize((max(w, round(img.size[0] * s)), max(h, round(img.size[1] * s))),
                         Image.BILINEAR)
        left, top = (img.size[0] - w) // 2, (img.size[1] - h) // 2
        a = np.asarray(img.crop((left, top, left + w, top + h)), np.float32) / 255.0
        out.append((a.transpose(2, 0, 1) - mean) / std)
    if not out:
        raise SystemExit(f"torch_runner: no photos in {folder}")
    return torch.from_numpy(np.stack(out))


def quantize(model, example, folder):
    """FX post-training static quantization on the onednn engine, calibrated on `folder`, and the
    method's name. A model FX cannot trace (torchvision's ViT) gets what PyTorch offers
    transformers instead: dynamic quantization of its Linear layers."""
    from torch.ao.quantization import get_default_qconfig_mapping, quantize_dynamic
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    torch.backends.quantized.engine = "onednn"
    try:
        prepared = prepare_fx(model, get_default_qconfig_mapping("onednn"),
                              example_inputs=(example,))
    except torch.fx.proxy.TraceError:
        return quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8), "dynamic INT8 Linear"
    photos = photo_batch(folder, tuple(example.shape))
    with torch.inference_mode():
        for i in range(0, len(photos), 8):
            prepared(photos[i:i + 8])
    return convert_fx(prepared), "FX PTQ INT8"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--onnx", default="")  # accepted for a uniform command line; unused
    p.add_argument("--input", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup-runs", type=int, default=10)
    p.add_argument("--warmup-s", type=float, default=1.0)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--budget-s", type=float, default=5.0)
    p.add_argument("--min-iters", type=int, default=10)
    p.add_argument("--layouts", default="default,channels_last")
    p.add_argument("--calib-dir", default="", help="quantize to INT8, calibrating on these photos")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    blas = blas_library()
    gflops = matmul_gflops(args.threads)

    one = np.load(args.input)
    x = torch.from_numpy(np.repeat(one, args.batch, axis=0))
    model = build_model(args.model)
    method = ""
    if args.calib_dir:
        if x.dim() != 4:
            raise SystemExit(f"torch_runner: --calib-dir takes image models; {args.model} is not")
        model, method = quantize(model, x[:1], args.calib_dir)
    layouts = {}
    for layout in args.layouts.split(","):
        if layout == "channels_last" and x.dim() != 4:
            continue  # token models have no image layout
        fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
        m = model.to(memory_format=fmt)
        xi = x.contiguous(memory_format=fmt)
        with torch.inference_mode():
            warm, ms, total = time_runs(args, lambda: m(xi))
        layouts[layout] = {"warmup_runs": warm, "ms": ms, "total_s": total}
    ref_path = args.input[: -len(".input.npy")] + ".output.npy"
    check = {}
    if args.input.endswith(".input.npy") and os.path.exists(ref_path):
        ref = np.load(ref_path)
        with torch.inference_mode():
            y = model(x).float().numpy()[:1]
        check = {"max_abs_err": float(np.max(np.abs(y - ref))),
                 "ref_max_abs": float(np.max(np.abs(ref)))}
    best = min(layouts, key=lambda k: percentile(layouts[k]["ms"], 50))
    ms, total = layouts[best]["ms"], layouts[best]["total_s"]
    row = {
        "engine": "pytorch-int8" if args.calib_dir else "pytorch", "model": args.model, "batch": args.batch, "threads": args.threads,
        "p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
        "mean_ms": float(np.mean(ms)), "min_ms": float(np.min(ms)),
        "images_per_s": args.batch * len(ms) / total, "iters": len(ms),
        "warmup_runs": layouts[best]["warmup_runs"],
        "version": f"pytorch {torch.__version__} "
                   f"({method + ', onednn, ' if args.calib_dir else ''}eager, {best})",
        "layout": best,
        "layouts": {k: {"p50_ms": percentile(v["ms"], 50), "p99_ms": percentile(v["ms"], 99),
                        "images_per_s": args.batch * len(v["ms"]) / v["total_s"]}
                    for k, v in layouts.items()},
        "blas": blas, "matmul512_gflops": round(gflops, 1),
    }
    row.update(check)
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
