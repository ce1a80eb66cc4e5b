#!/usr/bin/python3
"""Unit tests of aggregate.py and report.py on synthetic rows: no engine, no model, no timing."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import aggregate  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402
import summaries  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def row(engine, p50, model="resnet50", batch=1, threads=2, repeat=0, **kw):
    r = {"engine": engine, "model": model, "batch": batch, "threads": threads, "p50_ms": p50,
         "p99_ms": p50 * 1.5, "images_per_s": batch * 1000.0 / p50, "iters": 100,
         "version": engine + " 1.0", "repeat": repeat}
    r.update(kw)
    return r


class AggregateTest(unittest.TestCase):
    def test_medians_and_spread(self):
        rows = [row("kiln", v, repeat=i) for i, v in enumerate([10.0, 12.0, 20.0])]
        s = aggregate.aggregate(rows)[("resnet50", 1, 2, "kiln")]
        self.assertEqual(s["n"], 3)
        self.assertAlmostEqual(s["p50_ms"], 12.0)
        self.assertAlmostEqual(s["p99_ms"], 18.0)
        self.assertAlmostEqual(s["spread_pct"], 100.0 * 10.0 / 12.0)
        self.assertEqual((s["p50_min"], s["p50_max"]), (10.0, 20.0))

    def test_errors_are_kept_apart(self):
        rows = [row("opencv", 50.0), {"engine": "opencv", "model": "resnet50", "batch": 1,
                                      "threads": 2, "error": "load: Mul shapes"}]
        s = aggregate.aggregate(rows)[("resnet50", 1, 2, "opencv")]
        self.assertEqual(s["n"], 1)
        self.assertEqual(s["errors"], ["load: Mul shapes"])
        self.assertEqual(s["n_errors"], 1)
        only_error = aggregate.aggregate(rows[1:])[("resnet50", 1, 2, "opencv")]
        self.assertNotIn("p50_ms", only_error)

    def test_ratios(self):
        rows = [row("kiln", 30.0), row("onnxruntime", 40.0), row("pytorch", 15.0),
                {"engine": "opencv", "model": "resnet50", "batch": 1, "threads": 2,
                 "error": "x"}, row("onnxruntime", 5.0, model="vit_tiny")]
        rat = aggregate.ratios(aggregate.aggregate(rows))
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "onnxruntime")]["p50"], 0.75)
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "onnxruntime")]["img_s"], 40.0 / 30.0)
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "pytorch")]["p50"], 2.0)
        self.assertNotIn(("resnet50", 1, 2, "opencv"), rat)  # no measurement
        self.assertNotIn(("vit_tiny", 1, 2, "onnxruntime"), rat)  # no kiln row

    def test_paired_ratios_take_each_repeat_on_its_own(self):
        # Medians 20 / 20 = 1.0; per repeat 0.5, 1.5, 0.5 -> 0.5. The failed repeat 3 pairs nothing.
        rows = [row("kiln", v, repeat=i) for i, v in enumerate([10.0, 30.0, 20.0])]
        rows += [row("onnxruntime", v, repeat=i) for i, v in enumerate([20.0, 20.0, 40.0])]
        rows += [{"engine": "kiln", "model": "resnet50", "batch": 1, "threads": 2, "repeat": 3,
                  "error": "x"}, row("onnxruntime", 10.0, repeat=3)]
        rat = aggregate.ratios(aggregate.aggregate(rows), rows)
        r = rat[("resnet50", 1, 2, "onnxruntime")]
        self.assertAlmostEqual(r["p50"], 1.0)
        self.assertAlmostEqual(r["p50_paired"], 0.5)
        self.assertEqual(r["paired_n"], 3)
        meta = {"date": "2026-01-01 00:00 UTC", "cpu": "Test CPU", "cores": 2, "repeats": 4,
                "kiln_commit": "abc", "iters": 100, "budget_s": 5.0, "min_iters": 10,
                "warmup_runs": 10, "warmup_s": 1.0}
        self.assertIn("| resnet50 | 1 | 2 | 1.00x (0.50x) |", report.markdown(rows, meta))

    def test_int8_ratios_pair_kiln_int8_with_the_int8_peer_and_kiln_fp32(self):
        rows = [row("kiln", 40.0), row("kiln-int8", 10.0), row("onnxruntime-qdq", 20.0),
                row("onnxruntime", 30.0), row("pytorch-int8", 8.0)]
        rat = aggregate.ratios(aggregate.aggregate(rows))
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "onnxruntime-qdq")]["p50"], 0.5)
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "pytorch-int8")]["p50"], 1.25)
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "kiln-int8")]["p50"], 0.25)
        self.assertAlmostEqual(rat[("resnet50", 1, 2, "onnxruntime")]["p50"], 40.0 / 30.0)
        self.assertNotIn(("resnet50", 1, 2, "kiln"), rat)
        meta = {"date": "2026-01-01 00:00 UTC", "cpu": "Test CPU", "cores": 2, "repeats": 1,
                "kiln_commit": "abc", "iters": 100, "budget_s": 5.0, "min_iters": 10,
                "warmup_runs": 10, "warmup_s": 1.0}
        md = report.markdown(rows, meta)
        self.assertIn("| resnet50 | 1 | 2 | kiln INT8 | 10.00", md)
        self.assertIn("| resnet50 | 1 | 2 | ONNX Runtime QDQ INT8 | 20.00", md)
        self.assertIn("kiln INT8/ONNX Runtime QDQ INT8", md)
        self.assertIn("| resnet50 | 1 | 2 | PyTorch INT8 | 8.00", md)
        self.assertIn("kiln INT8/PyTorch INT8", md)
        self.assertIn("| 0.50x |", md)
        self.assertIn("| 1.25x |", md)

    def test_cells_order(self):
        rows = [row("kiln", 1.0, model="b", batch=8), row("kiln", 1.0, model="b", threads=1),
                row("kiln", 1.0, model="a")]
        self.assertEqual(aggregate.cells(aggregate.aggregate(rows)),
                         [("b", 1, 1), ("b", 8, 2), ("a", 1, 2)])


class RunTest(unittest.TestCase):
    def test_cells_and_rotation(self):
        a = run.parse_args(["--models", "m1,m2", "--batches", "1", "--threads", "1,2",
                            "--extra", "m1:8:2", "--extra", "m1:1:2"])
        self.assertEqual(run.cells(a), [("m1", 1, 1), ("m1", 1, 2), ("m2", 1, 1), ("m2", 1, 2),
                                        ("m1", 8, 2)])
        self.assertEqual(run.rotated(["a", "b", "c"], 4), ["b", "c", "a"])

    def test_quick(self):
        a = run.parse_args(["--quick"])
        self.assertEqual(a.repeats, 1)
        self.assertLessEqual(a.budget_s, 1.0)


class ReportTest(unittest.TestCase):
    def test_markdown_and_docs_splice(self):
        rows = [row("kiln", 30.0, repeat=i) for i in range(3)]
        rows += [row("onnxruntime", 40.0 + i, repeat=i) for i in range(3)]
        rows += [{"engine": "opencv", "model": "resnet50", "batch": 1, "threads": 2,
                  "error": "load: bad opset", "repeat": 0}]
        meta = {"date": "2026-01-01 00:00 UTC", "cpu": "Test CPU", "cores": 2, "repeats": 3,
                "kiln_commit": "abc", "iters": 100, "budget_s": 5.0, "min_iters": 10,
                "warmup_runs": 10, "warmup_s": 1.0}
        md = report.markdown(rows, meta)
        self.assertIn("Test CPU", md)
        self.assertIn("| resnet50 | 1 | 2 | kiln | 30.00", md)
        self.assertIn("0.73x", md)  # kiln / onnxruntime p50: 30 / 41
        self.assertIn("load: bad opset", md)
        self.assertIn("failed x1", md)
        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "performance.md")
            with open(doc, "w") as f:
                f.write("head\n<!-- peers:begin -->\nold\n<!-- peers:end -->\ntail\n")
            report.update_docs(doc, md)
            with open(doc) as f:
                text = f.read()
            self.assertTrue(text.startswith("head\n<!-- peers:begin -->\n"))
            self.assertTrue(text.endswith("<!-- peers:end -->\ntail\n"))
            self.assertNotIn("old", text)
            self.assertIn("Test CPU", text)
            with open(doc, "w") as f:
                f.write("no markers\n")
            with self.assertRaises(ValueError):
                report.update_docs(doc, md)


def schema_errors(value, schema, root=None, path="$"):
    """The subset of JSON Schema the summary schema uses (tests/cli/json_schema.h's subset):
    type, properties, required, additionalProperties, items, enum, const, minimum, minLength,
    anyOf, $ref. Returns the violations as "<path>: <what>"."""
    root = root or schema
    if "$ref" in schema:
        return schema_errors(value, root["definitions"][schema["$ref"].split("/")[-1]], root, path)
    errors = []
    if "anyOf" in schema and all(schema_errors(value, s, root, path) for s in schema["anyOf"]):
        errors.append(f"{path}: matches no schema of anyOf")
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "number": (int, float), "integer": int}
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        ok = any(isinstance(value, kinds[t]) and not (isinstance(value, bool) and t in
                                                      ("number", "integer")) for t in types)
        if not ok:
            errors.append(f"{path}: {value!r} is not of type {types}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errors.append(f"{path}: {value} < {schema['minimum']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing '{key}'")
        props = schema.get("properties", {})
        for key, v in value.items():
            if key in props:
                errors += schema_errors(v, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}.{key}: unexpected key")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errors += schema_errors(v, schema["items"], root, f"{path}[{i}]")
    return errors


class SummariesTest(unittest.TestCase):
    META = {"date": "2026-11-25 18:07 UTC", "cpu": "Test CPU", "cores": 2, "kernel": "6.1",
            "repeats": 3, "iters": 100, "budget_s": 5.0, "min_iters": 10, "warmup_runs": 10,
            "warmup_s": 1.0}

    def rows(self):
        rows = [row("kiln", 30.0 + i, repeat=i, p90_ms=31.0 + i, mean_ms=30.5, min_ms=28.0 - i,
                    warmup_runs=4, max_abs_err=1e-5 * (i + 1)) for i in range(3)]
        rows += [row("onnxruntime", 40.0, batch=8, threads=1, repeat=i) for i in range(3)]
        rows += [{"engine": "opencv", "model": "resnet50", "batch": 1, "threads": 2,
                  "error": "load: bad opset", "repeat": 0}]
        return rows

    def test_one_summary_per_measured_cell_in_the_schema(self):
        with open(os.path.join(ROOT, "docs", "exec_summary.schema.json")) as f:
            schema = json.load(f)
        out = summaries.build(self.rows(), self.META)
        self.assertEqual(sorted(out), ["resnet50-fp32-b1-t2-kiln.json",
                                       "resnet50-fp32-b8-t1-onnxruntime.json"])  # opencv failed
        for name, s in out.items():
            self.assertEqual(schema_errors(s, schema), [], name)
        k = out["resnet50-fp32-b1-t2-kiln.json"]
        self.assertEqual(k["schema_version"], schema["properties"]["schema_version"]["const"])
        self.assertEqual(k["source"]["tool"], "kiln")
        self.assertEqual((k["model"]["name"], k["model"]["batch"]), ("resnet50", 1))
        self.assertEqual(k["execution"]["threads_per_stream"], 2)
        lat = k["results"]["latency_ms"]
        self.assertAlmostEqual(lat["median"], 31.0)
        self.assertAlmostEqual(lat["min"], 26.0)
        self.assertEqual([p["percentile"] for p in lat["percentiles"]], [90, 99])
        self.assertAlmostEqual(lat["percentiles"][0]["ms"], 32.0)
        self.assertEqual(k["results"]["queries"], 300)
        self.assertEqual(k["results"]["warmup_queries"], 12)
        self.assertAlmostEqual(k["accuracy"]["max_abs_err"], 3e-5)
        self.assertEqual(k["started_at"], "2026-11-25T18:07:00Z")
        o = out["resnet50-fp32-b8-t1-onnxruntime.json"]
        self.assertAlmostEqual(o["results"]["throughput_qps"] * 8, 200.0)  # images/s = qps x batch
        self.assertEqual([p["percentile"] for p in o["results"]["latency_ms"]["percentiles"]], [99])
        self.assertIsNone(o["results"]["latency_ms"]["min"])
        self.assertNotIn("accuracy", o)

    def test_written_next_to_raw_rows(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "raw.jsonl"), "w") as f:
                for r in self.rows():
                    f.write(json.dumps(r) + "\n")
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(self.META, f)
            paths = summaries.write_summaries(d)
            self.assertEqual(len(paths), 2)
            for p in paths:
                self.assertEqual(os.path.dirname(p), d)
                with open(p) as f:
                    self.assertEqual(json.load(f)["schema"], "kiln.exec.summary")
            self.assertFalse([n for n in os.listdir(d) if n.endswith(".tmp")])


if __name__ == "__main__":
    unittest.main()
