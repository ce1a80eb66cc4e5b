// kiln command line: one subcommand per job. Each subcommand's work lives in its own file; this
// file only declares flags and reports errors.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "build_command.h"
#include "calibrate/calibrate_command.h"
#include "compare/compare_command.h"
#include "debug/debug_precision_command.h"
#include "doctor_command.h"
#include "exec/exec_command.h"
#include "exec/sweep_command.h"
#include "image_flags.h"
#include "inspect_command.h"
#include "kiln/version.h"
#include "list_ops.h"
#include "parallel/openmp_wait.h"
#include "pipeline/pipeline_command.h"
#include "quantize/quantize_command.h"
#include "report/parse_trtexec_command.h"
#include "report/report_command.h"
#include "run_command.h"

namespace {

void add_run(CLI::App& app, kiln::cli::RunOptions& o) {
  auto* run = app.add_subcommand(
      "run", "Run an ONNX model with the reference executor, or an engine built by kiln build");
  auto* onnx = run->add_option("--onnx", o.onnx, "ONNX model file (reference executor)");
  auto* engine = run->add_option("--loadEngine", o.load_engine, "Engine file from kiln build");
  onnx->excludes(engine);
  run->add_option("--shapes", o.shapes, "Input shapes: name:1x3x224x224[,name2:...]");
  run->add_option("--loadInputs", o.load_inputs,
                  "Input files: name:file.npy or name:raw.bin[,...]");
  run->add_option("--exportOutput", o.export_output, "Write outputs as JSON (trtexec's format)");
  run->add_option("--iterations", o.iterations, "Timed runs")->capture_default_str();
  run->add_option("--seed", o.seed, "Seed for random inputs")->capture_default_str();
  run->add_option("--threads", o.threads, "Threads of the engine's context (0: every core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run->add_option("--printValues", o.print_values, "Values printed per output")
      ->capture_default_str();
}

void add_build(CLI::App& app, kiln::cli::BuildOptions& o, bool& list_passes) {
  auto* b = app.add_subcommand("build", "Optimize an ONNX model and save an engine");
  b->add_option("--onnx", o.onnx, "ONNX model file");
  b->add_option("--saveEngine", o.save_engine, "Engine file to write");
  b->add_option("--shapes", o.shapes, "Static input shapes: name:1x3x224x224[,...]");
  b->add_option("--minShapes", o.min_shapes,
                "Smallest input shapes of a profile (repeat the three flags per profile)");
  b->add_option("--optShapes", o.opt_shapes, "Shapes to optimize a profile for");
  b->add_option("--maxShapes", o.max_shapes, "Largest input shapes of a profile");
  b->add_option("--disablePasses", o.disable_passes, "Graph passes to skip: name[,name...]");
  b->add_flag("--verbose", o.verbose, "Print the whole build log (fusions, tactics)");
  b->add_option("--builderOptimizationLevel", o.optimization_level,
                "0: no tactic timing; 1-5: time every candidate tactic, more repeats per level")
      ->check(CLI::Range(0, 5))
      ->capture_default_str();
  b->add_option("--buildBudget", o.build_budget_s,
                "Seconds of tactic timing allowed; later layers use cached times or the "
                "preference order")
      ->check(CLI::PositiveNumber);
  b->add_option("--tacticSources", o.tactic_sources,
                "Enable/disable tactic sources, trtexec's syntax: -onednn,+kiln");
  b->add_option("--timingCacheFile", o.timing_cache_file,
                "Timing cache read before and written after the build");
  b->add_option("--threads", o.threads,
                "Threads the engine will run with; tactics are timed with as many (0: every core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  b->add_flag("--int8", o.precision.int8,
              "Run convolutions and GEMMs in INT8 where a range is known (see --calib)");
  b->add_flag("--fp16", o.precision.fp16,
              "FP16 weights for convolutions and GEMMs (arithmetic stays FP32)");
  b->add_flag("--best", o.precision.best, "Every precision kiln has: --int8 and --fp16");
  b->add_option("--calib", o.precision.calib,
                "INT8 ranges: a kiln calibration file or a TensorRT calibration cache; without "
                "it --int8 uses placeholder ranges (speed only)");
  b->add_option("--int8WeightBits", o.precision.int8_weight_bits,
                "8, or 7: weights in [-63, 63], which CPUs without VNNI run about 1.3x faster "
                "(vpmaddubsw) at half the weights' resolution")
      ->capture_default_str();
  b->add_option("--layerPrecisions", o.layer_precisions,
                "Per-layer precision, name:fp32|fp16|int8[,...], one '*' wildcard per name");
  b->add_option("--precisionConstraints", o.precision.constraints,
                "none (ignore --layerPrecisions), prefer (warn when unmet) or obey (fail)")
      ->capture_default_str();
  b->add_flag("--listPasses", list_passes, "List the graph passes and exit");
}

void add_calibrate(CLI::App& app, kiln::cli::calibrate::CalibrateOptions& o) {
  auto* c = app.add_subcommand(
      "calibrate",
      "Gather INT8 calibration statistics over data: kiln calibrate --onnx=m.onnx "
      "--data=dir/ -o m.calib");
  c->add_option("--onnx", o.onnx, "ONNX model file")->required();
  c->add_option("--data", o.data,
                "A .npy batch, or a folder of images (.jpg/.png/.bmp) or .npy files")
      ->required();
  c->add_option("-o,--output", o.output, "Calibration file to write")->required();
  c->add_option("--algo", o.algo, "entropy (TensorRT's KL), minmax or percentile")
      ->check(CLI::IsMember({"entropy", "minmax", "percentile"}))
      ->capture_default_str();
  c->add_option("--percentile", o.percentile, "For --algo=percentile: the |x| percentile kept")
      ->capture_default_str();
  c->add_option("--batch", o.batch, "Samples per batch (models with a dynamic batch)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--batches", o.max_batches, "At most this many batches (default: all the data)");
  c->add_option("--export-trt-cache", o.export_trt_cache,
                "Also write the scales as a TensorRT calibration cache");
  c->add_option("--trt-version", o.trt_version,
                "TensorRT version in the cache header (8601 = 8.6.1, 100300 = 10.3.0)")
      ->capture_default_str();
  c->add_option("--threads", o.threads, "Threads (0: every core)")->capture_default_str();
  kiln::cli::add_image_flags(*c, o.image);
}

void add_quantize(CLI::App& app, kiln::cli::quantize::QuantizeOptions& o) {
  auto* c = app.add_subcommand(
      "quantize",
      "Write a QDQ ONNX model (for kiln, ONNX Runtime, TensorRT) from a model and its "
      "calibration: kiln quantize --onnx=m.onnx --calib=m.calib -o m.qdq.onnx");
  c->add_option("--onnx", o.onnx, "ONNX model file (float)")->required();
  c->add_option("--calib", o.calib, "Calibration: kiln calibrate's file or a TensorRT cache")
      ->required();
  c->add_option("-o,--output", o.output, "QDQ model to write")->required();
  c->add_option("--activationType", o.activation_type,
                "int8 (symmetric, zero point 0: TensorRT and ONNX Runtime) or uint8 (kiln's "
                "encodings: ONNX Runtime and kiln only)")
      ->capture_default_str();
  c->add_option("--layerPrecisions", o.layer_precisions,
                "Per-layer precision, name:fp32|int8[,...]: fp32 layers get no Q/DQ");
  c->add_option("--precisionConstraints", o.constraints,
                "none (ignore --layerPrecisions), prefer or obey, as kiln build")
      ->capture_default_str();
}

void add_debug_precision(CLI::App& app, kiln::cli::debug::DebugPrecisionOptions& o) {
  auto* debug = app.add_subcommand("debug", "Debugging tools: kiln debug precision");
  debug->require_subcommand(1);
  auto* c = debug->add_subcommand(
      "precision",
      "Find the INT8 layers to keep in FP32 for a tolerance: kiln debug precision "
      "--onnx=m.onnx --calib=m.calib --cosine=0.99 (docs/accuracy.md)");
  c->add_option("--onnx", o.onnx, "ONNX model")->required();
  c->add_option("--calib", o.calib,
                "INT8 ranges (kiln calibration or TensorRT cache); without: placeholders");
  auto* data = c->add_option("--data", o.data, "A .npy batch or a folder (as kiln compare)");
  auto* files =
      c->add_option("--loadInputs", o.load_inputs, "Per-input .npy batches: name:file.npy[,...]");
  data->excludes(files);
  c->add_option("--samples", o.samples, "Samples (default: all the data; random: 8)");
  c->add_option("--batch", o.batch, "Samples per run (default: all, at most 32)");
  c->add_option("--cosine", o.cosine, "Smallest cosine similarity per output (default 0.99)");
  c->add_option("--atol", o.atol, "|engine - ref| <= atol + rtol*|ref| everywhere");
  c->add_option("--rtol", o.rtol, "See --atol");
  c->add_option("--seed", o.seed, "Seed of random inputs")->capture_default_str();
  c->add_option("--threads", o.threads, "Threads (0: every core)")->capture_default_str();
  kiln::cli::add_image_flags(*c, o.image);
}

void add_compare(CLI::App& app, kiln::cli::compare::CompareOptions& o) {
  auto* c = app.add_subcommand(
      "compare",
      "Compare engines with the reference executor on the same inputs: kiln compare "
      "--onnx=m.onnx --engines=a.plan[,b.plan] (docs/accuracy.md)");
  c->add_option("--onnx", o.onnx, "ONNX model: the reference (imported, not optimized)")
      ->required();
  c->add_option("--engines", o.engines, "Engine files built from it: a.plan[,b.plan...]")
      ->required();
  auto* data = c->add_option("--data", o.data,
                             "A .npy batch (first axis: samples), or a folder of .npy files or "
                             "images (one-input models)");
  auto* files =
      c->add_option("--loadInputs", o.load_inputs, "Per-input .npy batches: name:file.npy[,...]");
  data->excludes(files);
  c->add_option("--samples", o.samples,
                "Samples compared (default: all the data; random: --batch, else 8)");
  c->add_option("--batch", o.batch,
                "Samples per run (default: the largest every engine admits, at most 32)");
  c->add_option("--labels", o.labels, "int64 .npy, one label per sample: top-1 accuracy");
  c->add_flag("--all-layers", o.all_layers,
              "Also compare every tensor the engine shares with the model, ranked by added error");
  c->add_option("--topLayers", o.top_layers, "Layers printed by --all-layers")
      ->capture_default_str();
  c->add_option("--atol", o.atol, "Fail when |engine - ref| > atol + rtol*|ref| (numpy.allclose)");
  c->add_option("--rtol", o.rtol, "See --atol");
  c->add_option("--cosine", o.cosine, "Fail when an output's cosine similarity is below this");
  c->add_option("--top1", o.top1,
                "Fail when top-1 drops more than this many points (labels; else top-1 agreement)");
  c->add_option("--json", o.json, "Write every figure as JSON");
  c->add_option("--summaries", o.summaries,
                "kiln exec --exportSummary files, one per engine: their `accuracy` is set");
  c->add_option("--seed", o.seed, "Seed of random inputs")->capture_default_str();
  c->add_option("--threads", o.threads, "Threads per engine (0: every core)")
      ->capture_default_str();
  kiln::cli::add_image_flags(*c, o.image);
}

void add_parse_trtexec(CLI::App& app, kiln::cli::report::ParseTrtexecOptions& o) {
  auto* p =
      app.add_subcommand("parse-trtexec",
                         "Read a TensorRT trtexec log (7.x to 11.x) into kiln's summary JSON: "
                         "kiln parse-trtexec log.txt -o summary.json");
  p->add_option("log", o.log, "trtexec's output, as saved")->required();
  p->add_option("-o,--output", o.output, "Summary JSON to write")->required();
  p->add_option("--model", o.model, "Model name when the log's command line names no model file");
  p->add_option("--precision", o.precision,
                "Precision when the log has no command line (fp32, fp16, int8, best, ...)");
  p->add_option("--batch", o.batch, "Batch when the command line has neither --batch nor --shapes")
      ->check(CLI::PositiveNumber);
}

void add_report(CLI::App& app, kiln::cli::report::ReportOptions& o) {
  auto* r = app.add_subcommand(
      "report",
      "Tables and charts from a folder of benchmark summaries (kiln exec/sweep, parse-trtexec, "
      "bench/peers): kiln report results/ -o report.html");
  r->add_option("folder", o.folder, "Folder of summary JSON files (read recursively)")->required();
  r->add_option("-o,--output", o.output, "Report file to write (.html, or .md)")->required();
  r->add_option("--format", o.format, "html (one self-contained file) or md (charts as SVG files)")
      ->check(CLI::IsMember({"html", "md"}));
  r->add_option("--title", o.title, "The report's title")->capture_default_str();
}

void add_pipeline(CLI::App& app, kiln::cli::pipeline::PipelineOptions& o) {
  auto* p = app.add_subcommand(
      "pipeline",
      "Time a whole image application per stage (decode, preprocess, inference, postprocess): "
      "kiln pipeline --engine=m.plan --images=dir/ [--budget=33ms]");
  p->add_option("--engine", o.engine, "Engine file from kiln build")->required();
  p->add_option("--images", o.images, "Folder of images (.jpg/.jpeg/.png/.bmp)")->required();
  p->add_option("--task", o.task, "classify (softmax + top-k) or detect (YOLOv8 decode + NMS)")
      ->capture_default_str();
  p->add_option("--budget", o.budget,
                "Latency target per image: 33ms, 33.3 (ms), 500us, 0.033s or 30fps");
  p->add_option("--topk", o.top_k, "Classes reported per image (classify)")->capture_default_str();
  p->add_option("--labels", o.labels, "Class names, one per line (line i names class i)");
  p->add_option("--conf", o.conf, "Confidence threshold (detect)")->capture_default_str();
  p->add_option("--iou", o.iou, "IoU above which NMS suppresses a box of the same class (detect)")
      ->capture_default_str();
  p->add_option("--maxDetections", o.max_detections, "Detections kept per image (detect)")
      ->capture_default_str();
  p->add_option("--warmUp", o.warm_up, "Images run first and left out of the statistics")
      ->capture_default_str();
  p->add_option("--repeat", o.repeat, "Timed passes over the folder")->capture_default_str();
  p->add_option("--threads", o.threads, "Threads of the engine's context (0: every core)")
      ->capture_default_str();
  p->add_option("--json", o.json, "Write every image's times and results and the statistics");
  kiln::cli::add_image_flags(*p, o.image);
}

void add_inspect(CLI::App& app, kiln::cli::InspectOptions& o) {
  auto* i = app.add_subcommand("inspect", "Describe an engine: layers, tactics, memory, profiles");
  i->add_option("engine", o.engine, "Engine file")->required();
  i->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
}

}  // namespace

int run_cli(int argc, char** argv);

// Last line of defence: anything thrown past the Status channel (out of memory, a library's
// exception) is reported as a message and exit code 1, never an abort.
int main(int argc, char** argv) {
  kiln::parallel::reexec_with_openmp_wait(argv);
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "kiln: error: out of memory\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln: error: Internal: {}\n", e.what());
  }
  return 1;
}

int run_cli(int argc, char** argv) {
  // `kiln exec` and `kiln sweep` parse trtexec's syntax themselves (--flag=value, trtexec's flag
  // names, suggestions for unknown flags), so their arguments bypass CLI11.
  if (argc >= 2 && std::string_view(argv[1]) == "exec") {
    const std::vector<std::string> args(argv + 2, argv + argc);
    return kiln::cli::exec::exec_main(args, std::cout, std::cerr);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "sweep") {
    const std::vector<std::string> args(argv + 2, argv + argc);
    return kiln::cli::exec::sweep_main(args, std::cout, std::cerr);
  }
  CLI::App app{"kiln: ONNX models to fast CPU inference engines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("kiln {} ({})", kiln::kVersion, kiln::kGitCommit));
  kiln::cli::RunOptions run_opts;
  add_run(app, run_opts);
  kiln::cli::BuildOptions build_opts;
  bool list_passes = false;
  add_build(app, build_opts, list_passes);
  kiln::cli::InspectOptions inspect_opts;
  add_inspect(app, inspect_opts);
  kiln::cli::calibrate::CalibrateOptions calibrate_opts;
  add_calibrate(app, calibrate_opts);
  kiln::cli::compare::CompareOptions compare_opts;
  add_compare(app, compare_opts);
  kiln::cli::quantize::QuantizeOptions quantize_opts;
  add_quantize(app, quantize_opts);
  kiln::cli::debug::DebugPrecisionOptions debug_precision_opts;
  add_debug_precision(app, debug_precision_opts);
  kiln::cli::report::ParseTrtexecOptions parse_trtexec_opts;
  add_parse_trtexec(app, parse_trtexec_opts);
  kiln::cli::report::ReportOptions report_opts;
  add_report(app, report_opts);
  kiln::cli::pipeline::PipelineOptions pipeline_opts;
  add_pipeline(app, pipeline_opts);
  app.add_subcommand(
      "exec", "Benchmark an engine like trtexec: kiln exec --onnx=m.onnx (kiln exec --help)");
  app.add_subcommand("doctor",
                     "What this CPU gives kiln: FP32/INT8/FP16 kernel paths, measured INT8 gain, "
                     "threads");
  std::string list_format = "text";
  auto* list = app.add_subcommand("list-ops", "List the supported operators and versions");
  list->add_option("--format", list_format, "text or md")->check(CLI::IsMember({"text", "md"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  kiln::Status status;
  if (app.got_subcommand("doctor")) {
    status = kiln::cli::doctor_command(std::cout);
  } else if (app.got_subcommand("run")) {
    status = kiln::cli::run_command(run_opts, std::cout);
  } else if (app.got_subcommand("build")) {
    if (list_passes) {
      std::cout << kiln::cli::list_passes();
    } else {
      status = kiln::cli::build_command(build_opts, std::cout, kiln::cli::stderr_progress());
    }
  } else if (app.got_subcommand("calibrate")) {
    status = kiln::cli::calibrate::calibrate_command(calibrate_opts, std::cout,
                                                     kiln::cli::stderr_progress());
  } else if (app.got_subcommand("quantize")) {
    status = kiln::cli::quantize::quantize_command(quantize_opts, std::cout);
  } else if (app.got_subcommand("compare")) {
    // Exit 2: the comparison ran but a tolerance failed (the FAIL lines say which); 1: an error.
    kiln::Result<bool> passed =
        kiln::cli::compare::compare_command(compare_opts, std::cout, std::cerr);
    if (passed.is_ok() && !*passed) return 2;
    if (!passed.is_ok()) status = passed.status();
  } else if (app.got_subcommand("debug")) {
    // Exit 2: no set of FP32 layers meets the tolerance (the FP32 engine itself misses it).
    kiln::Result<bool> found =
        kiln::cli::debug::debug_precision_command(debug_precision_opts, std::cout);
    if (found.is_ok() && !*found) return 2;
    if (!found.is_ok()) status = found.status();
  } else if (app.got_subcommand("parse-trtexec")) {
    status = kiln::cli::report::parse_trtexec_command(parse_trtexec_opts, std::cout);
  } else if (app.got_subcommand("report")) {
    status = kiln::cli::report::report_command(report_opts, std::cout);
  } else if (app.got_subcommand("pipeline")) {
    const std::vector<std::string> command(argv + 2, argv + argc);
    status = kiln::cli::pipeline::pipeline_command(pipeline_opts, command, std::cout);
  } else if (app.got_subcommand("inspect")) {
    status = kiln::cli::inspect_command(inspect_opts, std::cout);
  } else if (app.got_subcommand("list-ops")) {
    std::cout << (list_format == "md" ? kiln::cli::list_ops_markdown()
                                      : kiln::cli::list_ops_text());
  }
  if (!status.is_ok()) {
    std::cout.flush();
    fmt::print(stderr, "kiln: error: {}\n", status.to_string());
    return 1;
  }
  return 0;
}
