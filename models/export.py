#!/usr/bin/python3
"""Exports kiln's model set from PyTorch with seeded random weights (no download is possible here).

Usage: export.py [--out DIR] [--opset N] [--force] MODEL [MODEL ...] | --list | --all
Each model is written to DIR/<name>.onnx with a dynamic batch axis, plus DIR/<name>.json describing
its input (name, shape used for export), and PyTorch's own output for a seeded input
(<name>.input.npy, <name>.output.npy) so tests can compare kiln against PyTorch. Every file is
written to a temporary name and renamed into place, and the .json is written last, so an interrupted
export never leaves a partial model set behind. Existing exports are kept (the cache between runs)
unless --force is given or they were made with a different opset, input shape or model code (a hash
of export.py and yolov8.py is recorded).

Needs Debian's PyTorch and torchvision (python3-torch, python3-torchvision): run it with
/usr/bin/python3, not a virtualenv or pyenv interpreter without them.
"""
import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Imported by import_deps(), so that --list and --help work without them.
np = None
torch = None
torchvision = None


def import_deps():
    """Imports NumPy, PyTorch and torchvision, exiting with an actionable message when missing."""
    global np, torch, torchvision
    if torch is not None:
        return
    try:
        import numpy as np_module
        import torch as torch_module
        import torchvision as torchvision_module
    except ImportError as e:
        sys.exit(f"export.py: {e} (interpreter: {sys.executable}).\n"
                 "Exporting needs NumPy, PyTorch and torchvision: install python3-numpy, "
                 "python3-torch and python3-torchvision (scripts/install_deps.sh) and run "
                 "/usr/bin/python3 models/export.py.")
    np, torch, torchvision = np_module, torch_module, torchvision_module


@dataclass(frozen=True)
class ModelSpec:
    build: object  # () -> torch.nn.Module, called after torch is imported and seeded
    shape: tuple  # input shape of the export and of the reference input (batch 1)
    description: str
    integer_input: int = 0  # when > 0: int64 token ids in [0, integer_input) instead of floats


def tiny_bert():
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

    return TinyEncoder()


def deeplabv3_mobilenet_v3_large():
    class OutOnly(torch.nn.Module):
        """torchvision's segmentation models return a dict; export only the main head's 'out'."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]

    seg = torchvision.models.segmentation
    return OutOnly(seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                    aux_loss=False))


def vit_tiny():
    # ViT-Tiny-like: torchvision's VisionTransformer at hidden 192 / 3 heads (as ViT-Ti), but only 4
    # layers (ViT-Ti has 12) so the reference executor test stays fast.
    model = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=4,
                                                 num_heads=3, hidden_dim=192, mlp_dim=768)
    # torchvision zero-initialises the classifier (and the class token), which makes the output
    # all zeros: give both random values, as a trained network has.
    with torch.no_grad():
        model.heads.head.weight.normal_(0.0, 192**-0.5)
        model.heads.head.bias.normal_(0.0, 0.1)
        model.class_token.normal_(0.0, 0.02)
    return model


def yolov8n():
    import yolov8

    return yolov8.yolov8n()


def torchvision_model(name):
    return lambda: getattr(torchvision.models, name)(weights=None)


IMAGE = (1, 3, 224, 224)
MODELS = {
    "resnet18": ModelSpec(torchvision_model("resnet18"), IMAGE, "torchvision ResNet-18"),
    "resnet50": ModelSpec(torchvision_model("resnet50"), IMAGE, "torchvision ResNet-50"),
    "mobilenet_v2": ModelSpec(torchvision_model("mobilenet_v2"), IMAGE,
                              "torchvision MobileNetV2"),
    "mobilenet_v3_large": ModelSpec(torchvision_model("mobilenet_v3_large"), IMAGE,
                                    "torchvision MobileNetV3-Large"),
    "efficientnet_b0": ModelSpec(torchvision_model("efficientnet_b0"), IMAGE,
                                 "torchvision EfficientNet-B0"),
    "yolov8n": ModelSpec(yolov8n, (1, 3, 320, 320),
                         "YOLOv8n-architecture detector (models/yolov8.py), output (N, 84, anchors)"),
    "deeplabv3_mobilenet_v3_large": ModelSpec(
        deeplabv3_mobilenet_v3_large, (1, 3, 256, 256),
        "torchvision DeepLabV3 with MobileNetV3-Large backbone, 21 classes, 'out' only"),
    "vit_tiny": ModelSpec(vit_tiny, IMAGE,
                          "torchvision VisionTransformer, patch 16, 4 layers, hidden 192, 3 heads"),
    "tiny_bert": ModelSpec(tiny_bert, (1, 32), "BERT-style encoder, 2 layers, hidden 128",
                           integer_input=1000),
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


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path next to `path`; renames it into place only if the block succeeds."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".",
                               prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_npy(path, array):
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # a file object: np.save adds no suffix
        np.save(f, array)


def source_hash():
    """Hash of the code that defines the models: a change to it invalidates the cache."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for f in ("export.py", "yolov8.py"):
        with open(os.path.join(here, f), "rb") as src:
            h.update(src.read())
    return h.hexdigest()[:16]


def cached(out_dir, name, opset, shape):
    files = [name + s for s in (".onnx", ".input.npy", ".output.npy", ".json")]
    if not all(os.path.exists(os.path.join(out_dir, f)) for f in files):
        return False
    try:
        with open(os.path.join(out_dir, name + ".json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return (meta.get("opset") == opset and meta.get("shape") == list(shape)
            and meta.get("source") == source_hash())


def make_input(spec):
    if spec.integer_input > 0:
        return torch.randint(0, spec.integer_input, spec.shape, dtype=torch.int64)
    return torch.rand(*spec.shape)


def export(name, out_dir, opset, force):
    spec = MODELS[name]
    path = os.path.join(out_dir, name + ".onnx")
    if not force and cached(out_dir, name, opset, spec.shape):
        print(f"[models] {path} exists (cached)")
        return
    import_deps()
    torch.manual_seed(0)
    model = spec.build()
    settle_batchnorm(model, spec.shape)
    model.eval()
    x = make_input(spec)
    with atomic_path(path) as tmp:
        torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                          output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    # PyTorch's own output on the same input: the oracle tests/models compares kiln against.
    with torch.no_grad():
        y = model(x)
    save_npy(os.path.join(out_dir, name + ".input.npy"), x.numpy())
    save_npy(os.path.join(out_dir, name + ".output.npy"), y.numpy())
    with atomic_path(os.path.join(out_dir, name + ".json")) as tmp, open(tmp, "w") as f:
        json.dump({"name": name, "input": "input", "shape": list(spec.shape), "opset": opset,
                   "output_shape": list(y.shape), "description": spec.description,
                   "source": source_hash()}, f)
    print(f"[models] exported {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help="models to export (see --list): " + ", ".join(MODELS))
    p.add_argument("--list", action="store_true", help="list the models and exit")
    p.add_argument("--all", action="store_true", help="export every model")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "cache"))
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--force", action="store_true", help="re-export even if cached")
    args = p.parse_args()
    if args.list:
        for name, spec in MODELS.items():
            print(f"{name:30} {'x'.join(map(str, spec.shape)):14} {spec.description}")
        return 0
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; choose from: {', '.join(MODELS)}")
    names = list(MODELS) if args.all else args.models
    if not names:
        p.error("name the models to export, or pass --all or --list")
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        export(name, args.out, args.opset, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
