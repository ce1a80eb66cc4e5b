#pragma once
// Graph -> engine plan: optimization passes, layer kinds, tactic choice, profiles and memory
// plans. The builder's every decision is recorded in Plan::build_log.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/plan.h"
#include "kiln/profile.h"
#include "passes/pipeline.h"
#include "quant/calibration_file.h"
#include "quant/layer_precision.h"

namespace kiln::engine {

// One optimization profile as the user gives it: ranges for the inputs with dynamic dims.
using ProfileSpec = OptimizationProfile;

struct BuildOptions {
  // Empty: one profile, with every dynamic dim set to 1 (as trtexec does), logged as a warning.
  std::vector<ProfileSpec> profiles;
  passes::PipelineOptions passes;
  // Tactic selection (see tuner/tuner.h): the level (0 = no timing), a budget in seconds for
  // measuring (0 = none), "+name"/"-name" source switches, the threads layers are timed with
  // (0 = one per core), and a timing cache file read before and written after the build.
  int optimization_level = 3;
  double budget_s = 0;
  std::vector<std::string> tactic_sources;
  int threads = 0;
  std::string timing_cache_path;
  // Reduced precision. With int8, convolutions and GEMMs whose input has a range run in INT8
  // (quant/quantize_layers.h): ranges from `calibration`, or trtexec's placeholders without one
  // (logged as a warning: such an engine is for measuring speed).
  bool int8 = false;
  // 8, or 7: weights kiln quantizes itself (not a QDQ model's) land in [-63, 63], whose pairs
  // vpmaddubsw sums exactly, so CPUs without VNNI run the faster AVX2 INT8 kernels on them
  // (ONNX Runtime's reduce_range), at half the weights' resolution.
  int int8_weight_bits = 8;
  // With fp16, the convolutions and GEMMs with constant float32 weights that do not run in INT8
  // become FP16 layers: weights rounded to binary16 and stored so in the engine, activations and
  // arithmetic float32 (engine/fp16_weights.h). int8 and fp16 together are trtexec's --best.
  bool fp16 = false;
  std::optional<quant::Calibration> calibration;
  std::vector<quant::LayerPrecisionRule> layer_precisions;
  quant::PrecisionConstraints precision_constraints = quant::PrecisionConstraints::kNone;
  // Called after each layer's tactic is chosen (`done` of `total` run layers), for progress bars.
  std::function<void(size_t done, size_t total, std::string_view layer)> progress;
  // Tests: the tuner's host speed probe, in us (tuner::TunerOptions::host_probe_us).
  std::function<double()> host_probe_us;
};

// `graph` comes from the importer (checked, shapes inferred).
Result<Plan> build_plan(ir::Graph graph, const BuildOptions& options);

}  // namespace kiln::engine
