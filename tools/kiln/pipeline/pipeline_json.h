#pragma once
// `kiln pipeline --json=`: every timed image (stage times, top-k or detections) and the
// statistics with the budget verdict, in the schema of docs/pipeline.schema.json.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/stage_stats.h"

namespace kiln::cli::pipeline {

inline constexpr const char* kPipelineSchema = "kiln.pipeline";
inline constexpr int kPipelineSchemaVersion = 1;

struct RunInfo {
  std::string engine, images, task;
  std::string preprocess;  // io::ImagePreprocess::describe()
  std::vector<std::string> command;
  int warm_up = 0, repeat = 1, threads = 0;
};

// `labels` may be empty (indices only) or shorter than the classes (the rest have no label).
nlohmann::json pipeline_json(const RunInfo& info, const std::vector<ImageResult>& timed,
                             const PipelineStats& stats, const std::vector<std::string>& labels);

}  // namespace kiln::cli::pipeline
