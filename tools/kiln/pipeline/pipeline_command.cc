#include "pipeline/pipeline_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <cmath>
#include <ostream>

#include "io/file_util.h"
#include "io/image.h"
#include "pipeline/budget.h"
#include "pipeline/engine_runner.h"
#include "pipeline/image_folder.h"
#include "pipeline/pipeline_json.h"

namespace kiln::cli::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// What the stages need besides the image: fixed for the run.
struct Setup {
  const PipelineOptions* options = nullptr;
  io::ImagePreprocess preprocess;
  YoloShape yolo;  // --task=detect
};

Status postprocess(const Setup& s, std::span<const float> output, const io::Image& image,
                   ImageResult& r, std::vector<float>& scratch) {
  const PipelineOptions& o = *s.options;
  if (o.task == "classify") {
    softmax(output, scratch);
    r.top = top_k(scratch, static_cast<size_t>(o.top_k));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const io::ImageGeometry g,
                        io::preprocess_geometry(image.width, image.height, s.preprocess));
  std::vector<Detection> kept =
      nms(decode_yolo(output, s.yolo, static_cast<float>(o.conf)), static_cast<float>(o.iou),
          static_cast<size_t>(o.max_detections));
  for (Detection& d : kept) d.box = to_original(d.box, g);
  r.detections = std::move(kept);
  return Status::ok();
}

// Decode, preprocess, inference and postprocess of one image, each timed on its own.
Result<ImageResult> run_image(const Setup& s, EngineRunner& engine,
                              const std::filesystem::path& file, std::vector<float>& scratch) {
  ImageResult r;
  r.file = file.filename().string();
  const auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(const io::Image image, io::read_image(file));
  const auto t1 = Clock::now();
  Result<Tensor> sample = io::preprocess_image(image, s.preprocess);
  if (!sample.is_ok())
    return sample.status().with_context(fmt::format("image '{}'", file.string()));
  const auto t2 = Clock::now();
  Status ran = engine.run(*sample);
  if (!ran.is_ok()) return ran.with_context(fmt::format("image '{}'", file.string()));
  const auto t3 = Clock::now();
  KILN_RETURN_IF_ERROR(postprocess(s, engine.output(), image, r, scratch));
  const auto t4 = Clock::now();
  r.stage_ms = {elapsed_ms(t0, t1), elapsed_ms(t1, t2), elapsed_ms(t2, t3), elapsed_ms(t3, t4)};
  return r;
}

std::string result_line(const ImageResult& r, const std::vector<std::string>& labels) {
  auto name = [&](int64_t c) {
    return c >= 0 && static_cast<size_t>(c) < labels.size() ? fmt::format("{} ({})", labels[c], c)
                                                            : fmt::format("class {}", c);
  };
  std::string s = r.file + ":";
  if (!r.top.empty() || r.detections.empty()) {
    for (const ClassScore& c : r.top) s += fmt::format(" {} {:.4f};", name(c.index), c.score);
    if (r.top.empty()) s += " no detections";
    return s;
  }
  s += fmt::format(" {} detections", r.detections.size());
  for (size_t i = 0; i < std::min<size_t>(r.detections.size(), 3); ++i) {
    const Detection& d = r.detections[i];
    s += fmt::format("; {} {:.3f} [{:.0f}, {:.0f}, {:.0f}, {:.0f}]", name(d.cls), d.score, d.box.x1,
                     d.box.y1, d.box.x2, d.box.y2);
  }
  return s + (r.detections.size() > 3 ? "; ..." : "");
}

Result<Setup> make_setup(const PipelineOptions& o, const EngineRunner& engine) {
  Setup s;
  s.options = &o;
  const Dims sample = engine.sample_dims();
  if (!is_image_sample(o.image, sample)) {
    return unsupported(
        "engine '{}' input '{}' takes [{}] per image; kiln pipeline needs [3,H,W] "
        "(NCHW) or [H,W,3] (NHWC)",
        o.engine, engine.input_name(), dims_to_string(sample));
  }
  KILN_ASSIGN_OR_RETURN(s.preprocess,
                        image_spec(o.image, sample,
                                   o.task == "detect" ? PreprocessDefaults::kDetector
                                                      : PreprocessDefaults::kImageNet));
  if (o.task == "detect") {
    Result<YoloShape> y = yolo_shape(engine.output_name(), engine.output_dims());
    if (!y.is_ok()) return y.status().with_context(fmt::format("engine '{}'", o.engine));
    s.yolo = *y;
  }
  return s;
}

}  // namespace

Status check_pipeline_options(const PipelineOptions& o) {
  if (o.engine.empty()) return invalid_argument("--engine is required (an engine from kiln build)");
  if (o.images.empty()) return invalid_argument("--images is required (a folder of images)");
  if (o.task != "classify" && o.task != "detect") {
    return invalid_argument("--task must be classify or detect, got '{}'", o.task);
  }
  if (o.top_k < 1) return invalid_argument("--topk must be >= 1, got {}", o.top_k);
  if (!(o.conf >= 0 && o.conf <= 1)) {
    return invalid_argument("--conf must be in [0, 1], got {}", o.conf);
  }
  if (!(o.iou >= 0 && o.iou <= 1))
    return invalid_argument("--iou must be in [0, 1], got {}", o.iou);
  if (o.max_detections < 1) {
    return invalid_argument("--maxDetections must be >= 1, got {}", o.max_detections);
  }
  if (o.warm_up < 0) return invalid_argument("--warmUp must be >= 0, got {}", o.warm_up);
  if (o.repeat < 1) return invalid_argument("--repeat must be >= 1, got {}", o.repeat);
  if (o.threads < 0) return invalid_argument("--threads must be >= 0, got {}", o.threads);
  if (!o.budget.empty()) KILN_RETURN_IF_ERROR(parse_budget_ms(o.budget).status());
  return Status::ok();
}

Status pipeline_command(const PipelineOptions& o, const std::vector<std::string>& command,
                        std::ostream& out) {
  KILN_RETURN_IF_ERROR(check_pipeline_options(o));
  std::optional<double> budget_ms;
  if (!o.budget.empty()) {
    KILN_ASSIGN_OR_RETURN(budget_ms, parse_budget_ms(o.budget));
  }
  KILN_ASSIGN_OR_RETURN(const auto files, list_images(o.images));
  std::vector<std::string> labels;
  if (!o.labels.empty()) {
    KILN_ASSIGN_OR_RETURN(labels, read_labels(o.labels));
  }
  KILN_ASSIGN_OR_RETURN(EngineRunner engine, EngineRunner::open(o.engine, o.threads));
  KILN_ASSIGN_OR_RETURN(const Setup setup, make_setup(o, engine));
  fmt::print(out, "[I] engine: {}, input '{}' {}, output '{}' {}, {} threads\n", o.engine,
             engine.input_name(), dims_to_string(engine.input_dims()), engine.output_name(),
             dims_to_string(engine.output_dims()), engine.threads());
  fmt::print(out, "[I] {} images in {}; {}; task {}\n", files.size(), o.images,
             setup.preprocess.describe(), o.task);
  std::vector<float> scratch;
  for (int i = 0; i < o.warm_up; ++i) {
    KILN_RETURN_IF_ERROR(run_image(setup, engine, files[i % files.size()], scratch).status());
  }
  std::vector<ImageResult> timed;
  const auto start = Clock::now();
  for (int pass = 0; pass < o.repeat; ++pass) {
    for (const auto& f : files) {
      KILN_ASSIGN_OR_RETURN(ImageResult r, run_image(setup, engine, f, scratch));
      r.pass = pass;
      timed.push_back(std::move(r));
    }
  }
  const double wall_ms = elapsed_ms(start, Clock::now());
  for (size_t i = 0; i < files.size(); ++i) fmt::print(out, "{}\n", result_line(timed[i], labels));
  const PipelineStats stats = summarize(timed, wall_ms, budget_ms);
  for (const std::string& l : stats_lines(stats)) fmt::print(out, "{}\n", l);
  if (!o.json.empty()) {
    const RunInfo info{o.engine, o.images,  o.task,   setup.preprocess.describe(),
                       command,  o.warm_up, o.repeat, engine.threads()};
    KILN_RETURN_IF_ERROR(
        io::write_file_atomic(o.json, pipeline_json(info, timed, stats, labels).dump(2) + "\n"));
    fmt::print(out, "[I] results written to {}\n", o.json);
  }
  return Status::ok();
}

}  // namespace kiln::cli::pipeline
