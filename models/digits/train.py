#!/usr/bin/python3
"""Trains kiln's digits CNN: a small model with real labels, for measuring accuracy (docs/accuracy.md).

Usage: /usr/bin/python3 models/digits/train.py [--out DIR]   (default: this script's folder)

Data: scikit-learn's bundled digits set (load_digits: 1797 grey 8x8 images, values 0..16, 10
classes; no download). Stratified split with fixed seeds: 60% train (1078), 15% calibration (269),
25% held-out test (450). Each image is upsampled to 1x16x16 (bilinear, align_corners=False) and
normalized as (pixel / 16 - 0.5) / 0.5, i.e. to [-1, 1]. 16x16 rather than 32x32 keeps the committed
.npy files under about 1 MB (the held-out set at 32x32 alone would be 1.8 MB).

Model (every block exercises a kiln fusion): Conv-BN-ReLU stem, a strided Conv-BN-ReLU, a residual
block (depthwise 3x3 Conv-BN-ReLU, pointwise Conv-BN, Add, ReLU), a strided Conv-BN-ReLU,
GlobalAveragePool, Flatten, Gemm. BatchNormalization is kept in the ONNX file (not folded by the
exporter) so that kiln's own Conv+BN folding is what removes it.

Writes: digits.onnx (opset 13, dynamic batch "batch", input "input" [N,1,16,16] float32, output
"logits" [N,10]), calib_x.npy, test_x.npy (float32 NCHW), test_y.npy (int64) and digits.json with
the held-out top-1 PyTorch measured (tests/models check kiln's reference executor reproduces it).

Deterministic: fixed seeds, torch.use_deterministic_algorithms(True), one thread. Trains on the CPU
in a few seconds. Needs Debian's python3-torch, python3-onnx and python3-sklearn.
"""
import argparse
import json
import os
import sys
import warnings

try:
    import numpy as np
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError as e:
    sys.exit(f"train.py: {e}. Needs python3-numpy, python3-torch and python3-sklearn "
             "(Debian packages; run with /usr/bin/python3).")

SEED = 0
SIZE = 16
EPOCHS = 30
BATCH = 64


def conv_bn_relu(cin, cout, stride=1, groups=1, relu=True, kernel=3):
    layers = [torch.nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              torch.nn.BatchNorm2d(cout)]
    if relu:
        layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class Residual(torch.nn.Module):
    """Depthwise 3x3 then pointwise 1x1, added to the block's input (MobileNet-style)."""

    def __init__(self, c):
        super().__init__()
        self.dw = conv_bn_relu(c, c, groups=c)
        self.pw = conv_bn_relu(c, c, relu=False, kernel=1)

    def forward(self, x):
        return torch.relu(x + self.pw(self.dw(x)))


class DigitsNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            conv_bn_relu(1, 16), conv_bn_relu(16, 32, stride=2), Residual(32),
            conv_bn_relu(32, 64, stride=2))
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def prepare(images):
    """8x8 images (0..16) -> float32 [N, 1, SIZE, SIZE] in [-1, 1]."""
    x = torch.from_numpy(images.astype(np.float32) / 16.0).unsqueeze(1)
    x = torch.nn.functional.interpolate(x, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
    return ((x - 0.5) / 0.5).contiguous()


def split():
    d = load_digits()
    idx = np.arange(len(d.target))
    train, rest = train_test_split(idx, test_size=0.40, stratify=d.target, random_state=SEED)
    calib, test = train_test_split(rest, test_size=0.625, stratify=d.target[rest],
                                   random_state=SEED)
    return d, train, calib, test


def top1(model, x, y):
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean()) * 100.0


def train(model, x, y):
    g = torch.Generator().manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    for _ in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(y), generator=g)
        for b in range(0, len(y), BATCH):
            i = perm[b:b + BATCH]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[i]), y[i])
            loss.backward()
            opt.step()
        sched.step()
    model.eval()


def save_npy(path, array):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = p.parse_args()
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    d, tr, ca, te = split()
    x_all = prepare(d.images)
    y_all = torch.from_numpy(d.target.astype(np.int64))
    model = DigitsNet()
    train(model, x_all[tr], y_all[tr])
    acc = top1(model, x_all[te], y_all[te])
    print(f"[digits] train {len(tr)}, calibration {len(ca)}, test {len(te)}; "
          f"held-out top-1 {acc:.2f}% ({round(acc * len(te) / 100)}/{len(te)})")
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, "digits.onnx")
    tmp = onnx_path + ".tmp"
    # PRESERVE keeps BatchNormalization nodes (the model is in eval mode, so they are inference
    # BatchNormalization); constant folding is then safe and its warning is noise.
    warnings.filterwarnings("ignore", message=".*constant folding.*")
    torch.onnx.export(model, x_all[te[:1]], tmp, opset_version=13, input_names=["input"],
                      output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    os.replace(tmp, onnx_path)
    save_npy(os.path.join(args.out, "calib_x.npy"), x_all[ca].numpy())
    save_npy(os.path.join(args.out, "test_x.npy"), x_all[te].numpy())
    save_npy(os.path.join(args.out, "test_y.npy"), y_all[te].numpy())
    correct = int((model(x_all[te]).argmax(1) == y_all[te]).sum())
    meta = {"dataset": "sklearn load_digits", "split": {"train": len(tr), "calibration": len(ca),
                                                        "test": len(te)},
            "seed": SEED, "input": "input", "input_shape": [1, SIZE, SIZE], "output": "logits",
            "normalization": "(pixel / 16 - 0.5) / 0.5 after bilinear upsampling to 16x16",
            "opset": 13, "test_top1_percent": round(acc, 4), "test_correct": correct}
    with open(os.path.join(args.out, "digits.json.tmp"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    os.replace(os.path.join(args.out, "digits.json.tmp"), os.path.join(args.out, "digits.json"))
    print(f"[digits] wrote {onnx_path} and the .npy sets to {args.out}")


if __name__ == "__main__":
    main()
