#!/usr/bin/python3
"""Exports kiln's model set from PyTorch with seeded random weights (no download is possible here).

Usage: export.py [--out DIR] [--opset N] MODEL [MODEL ...]
Each model is written to DIR/<name>.onnx with a dynamic batch axis, plus DIR/<name>.json describing
its input (name, shape used for export), and PyTorch's own output for a seeded input
(<name>.input.npy, <name>.output.npy) so tests can compare kiln against PyTorch. Existing files are
kept unless --force is given (the cache between runs).
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import torch
import torchvision


class TinyEncoder(torch.nn.Module):
    """A BERT-style encoder (2 layers, hidden 128, 4 heads, GELU) over token embeddings."""

    def __init__(self, vocab=1000, hidden=128, heads=4, layers=2, seq=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=4 * hidden,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=False)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(hidden, 2)

    def forward(self, ids):
        x = self.embed(ids) + self.pos[:, : ids.shape[1]]
        return self.head(self.encoder(x)[:, 0])


def tiny_bert():
    return TinyEncoder(), (1, 32)


def resnet18():
    return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)


def mobilenet_v2():
    return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)


def mobilenet_v3_large():
    return torchvision.models.mobilenet_v3_large(weights=None), (1, 3, 224, 224)


MODELS = {
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v3_large": mobilenet_v3_large,
    "tiny_bert": tiny_bert,
}


def settle_batchnorm(model, shape):
    """Gives BatchNorm layers non-trivial affine parameters and running statistics measured on random
    data, as a trained network has. With torchvision's fresh init the activations of deep networks
    vanish (MobileNet outputs ~1e-10), which would make every numeric comparison meaningless."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    if not bns:
        return
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.1)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the batches below
        model.train()
        for _ in range(4):
            model(torch.rand(8, *shape[1:]))
    model.eval()


def export(name, out_dir, opset, force):
    path = os.path.join(out_dir, name + ".onnx")
    meta = os.path.join(out_dir, name + ".json")  # written last: marks a complete export
    if os.path.exists(meta) and os.path.exists(path) and not force:
        print(f"[models] {path} exists (cached)")
        return
    torch.manual_seed(0)
    model, shape = MODELS[name]()
    settle_batchnorm(model, shape)
    model.eval()
    if name == "tiny_bert":
        x = torch.randint(0, 1000, shape, dtype=torch.int64)
    else:
        x = torch.rand(*shape)
    # Write to a temporary file first: an interrupted export never leaves a half model behind.
    fd, tmp = tempfile.mkstemp(dir=out_dir, suffix=".onnx.tmp")
    os.close(fd)
    torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.chmod(tmp, 0o644)
    # PyTorch's own output on the same input: the oracle tests/models compares kiln against.
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy())
    np.save(os.path.join(out_dir, name + ".output.npy"), y.numpy())
    os.replace(tmp, path)
    with open(meta, "w") as f:
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
