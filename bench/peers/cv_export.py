#!/usr/bin/python3
"""Writes OpenCV-4.6-readable copies of the model set into bench/.cache/cv/<model>.b<B>.onnx.

OpenCV 4.6's ONNX importer cannot read kiln's exports (opset 17, dynamic batch): it fails shape
assertions on the dynamic batch axis and parses only the opset-6 attribute form of Clip. So each
model is exported again by PyTorch from the same definitions and seed as models/export.py, at a
fixed batch and opset 11, and then only re-encoded (the computation is unchanged):
- Identity nodes that read an initializer (torch emits them for shared weights) become
  initializers;
- Clip's constant min/max inputs become the min/max attributes.
Usage: cv_export.py --out DIR --batches 1,8 MODEL [MODEL ...]. Existing files are kept.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))

OPSET = 11


def constant_values(model):
    """name -> numpy array for initializers and Constant node outputs."""
    from onnx import numpy_helper

    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    values[n.output[0]] = numpy_helper.to_array(a.t)
    return values


def make_compatible(model):
    from onnx import helper, numpy_helper

    g = model.graph
    values = constant_values(model)
    keep = []
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in values:
            t = numpy_helper.from_array(values[n.input[0]], n.output[0])
            g.initializer.append(t)
            values[n.output[0]] = values[n.input[0]]
            continue
        if n.op_type == "Clip" and len(n.input) > 1:
            attrs = []
            for i, name in ((1, "min"), (2, "max")):
                if i < len(n.input) and n.input[i]:
                    if n.input[i] not in values:
                        raise ValueError(f"Clip '{n.name}': {name} is not a constant")
                    attrs.append(helper.make_attribute(name, float(values[n.input[i]])))
            del n.input[1:]
            n.attribute.extend(attrs)
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    return model


def export(name, batch, out_dir):
    path = os.path.join(out_dir, f"{name}.b{batch}.onnx")
    if os.path.exists(path):
        print(f"[cv_export] {path} exists (cached)")
        return
    import export as model_set  # models/export.py
    import onnx
    import torch

    model_set.import_deps()
    spec = model_set.MODELS[name]
    torch.manual_seed(0)
    model = spec.build()
    model_set.settle_batchnorm(model, spec.shape)
    model.eval()
    shape = (batch,) + tuple(spec.shape[1:])
    x = (torch.randint(0, spec.integer_input, shape) if spec.integer_input else torch.rand(*shape))
    tmp = path + ".tmp"
    torch.onnx.export(model, x, tmp, opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    m = make_compatible(onnx.load(tmp))
    onnx.save(m, tmp)
    os.replace(tmp, path)
    print(f"[cv_export] wrote {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--batches", default="1,8")
    p.add_argument("models", nargs="+")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in args.models:
        for b in (int(v) for v in args.batches.split(",")):
            try:
                export(name, b, args.out)
            except Exception as e:  # one model that does not export must not stop the others
                print(f"[cv_export] {name} batch {b}: {type(e).__name__}: {e}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
