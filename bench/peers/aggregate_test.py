#!/usr/bin/python3
"""Unit tests of aggregate.py and report.py on synthetic rows: no engine, no model, no timing."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import aggregate  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
