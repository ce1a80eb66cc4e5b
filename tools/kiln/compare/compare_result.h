#pragma once
// What `kiln compare` measured: built by compare_run, printed and exported by compare_report.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/layer_compare.h"
#include "compare/metrics.h"

namespace kiln::cli::compare {

struct Bounds {
  Tolerance tol;                 // --atol/--rtol
  std::optional<double> cosine;  // --cosine: smallest cosine similarity allowed
  std::optional<double> top1;    // --top1: largest top-1 drop allowed, in points
};

struct OutputResult {
  std::string name;
  ErrorStats err;
  int64_t classes = 0;      // C of an output shaped [N, C] (classifier scores), else 0
  TopKAgreement agreement;  // with the reference's scores, when classes > 0
  int64_t correct = 0;      // samples whose top class is the label (the labelled output only)
  // Each sample's cosine similarity, in sample order: an average over many inputs can hide the
  // few an INT8 engine gets wrong.
  std::vector<double> sample_cosines;
  std::string not_comparable;
};

struct EngineResult {
  std::string path;
  std::vector<OutputResult> outputs;
  std::vector<LayerRecord> layers;  // --all-layers, in engine order
};

struct CompareResult {
  std::string onnx;
  std::string inputs;  // how the samples were made
  int64_t samples = 0, batch = 0;
  std::vector<std::string> graph_inputs;
  // --labels: the output they apply to (the first [N, C] output) and the reference's hits.
  bool labelled = false;
  std::string labelled_output;
  int64_t reference_correct = 0;
  std::vector<EngineResult> engines;
};

}  // namespace kiln::cli::compare
