#pragma once
// `kiln pipeline`: the whole application's time for an image model, per image and per stage —
// decode (stb), preprocess (the calibrator's io::ImagePreprocess), inference (one execution
// context, batch 1) and postprocess (softmax + top-k, or YOLOv8 decode + class-aware NMS) — with
// p50/p99/mean and share per stage, images/s, a latency budget verdict and a JSON export.
// See docs/pipeline.md.

#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "image_flags.h"

namespace kiln::cli::pipeline {

struct PipelineOptions {
  std::string engine;
  std::string images;
  std::string task = "classify";  // or "detect"
  std::string budget;             // empty: no budget
  int top_k = 5;
  std::string labels;
  double conf = 0.25, iou = 0.45;
  int max_detections = 300;
  int warm_up = 0;  // images run before the timed passes, not in the statistics
  int repeat = 1;   // timed passes over the folder
  int threads = 0;  // of the execution context (0: every core)
  std::string json;
  ImageFlags image;
};

// Checks the options that do not need the engine (task, thresholds, counts, budget).
Status check_pipeline_options(const PipelineOptions& o);

// `command` is the arguments after `kiln pipeline`, recorded in the JSON. Results and statistics
// go to `out`; nothing goes to `err` unless a run fails.
Status pipeline_command(const PipelineOptions& o, const std::vector<std::string>& command,
                        std::ostream& out);

}  // namespace kiln::cli::pipeline
