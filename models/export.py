#!/usr/bin/python3
"""Exports kiln's model set from PyTorch with seeded random weights (no download is possible here).

Usage: export.py [--out DIR] [--opset N] MODEL [MODEL ...]
Each model is written to DIR/<name>.onnx with a dynamic batch axis, plus DIR/<name>.json describing
its input (name, shape used for export) so tools and tests know how to feed it. Existing files are
kept unless --force is given (the cache between runs).
"""
import argparse
import json
import os
import sys
import tempfile

import torch
import torchvision


def resnet18():
    return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)


def mobilenet_v2():
    return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)


MODELS = {
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
}


def export(name, out_dir, opset, force):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path) and not force:
        print(f"[models] {path} exists (cached)")
        return
    torch.manual_seed(0)
    model, shape = MODELS[name]()
    model.eval()
    x = torch.rand(*shape)
    # Write to a temporary file first: an interrupted export never leaves a half model behind.
    fd, tmp = tempfile.mkstemp(dir=out_dir, suffix=".onnx.tmp")
    os.close(fd)
    torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump({"name": name, "input": "input", "shape": list(shape), "opset": opset}, f)
    print(f"[models] exported {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", choices=sorted(MODELS))
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "cache"))
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--force", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        export(name, args.out, args.opset, args.force)


if __name__ == "__main__":
    sys.exit(main())
