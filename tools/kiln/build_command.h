#pragma once
// `kiln build`: import an ONNX model, optimize it, choose tactics, plan memory and save the engine
// (trtexec --onnx=... --saveEngine=...).

#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "precision_flags.h"

namespace kiln::cli {

struct BuildOptions {
  std::string onnx;                     // --onnx
  std::string save_engine;              // --saveEngine
  std::string shapes;                   // --shapes: one profile with min = opt = max
  std::vector<std::string> min_shapes;  // --minShapes, one per profile
  std::vector<std::string> opt_shapes;  // --optShapes
  std::vector<std::string> max_shapes;  // --maxShapes
  std::string disable_passes;           // --disablePasses=a,b
  bool verbose = false;                 // --verbose: the whole build log
  int optimization_level = 3;           // --builderOptimizationLevel
  double build_budget_s = 0;            // --buildBudget (seconds; 0: none)
  std::string tactic_sources;           // --tacticSources=-onednn,+kiln
  std::string timing_cache_file;        // --timingCacheFile
  int threads = 0;                      // --threads the engine is tuned for (0: every core)
  // --int8, --fp16, --best, --calib, --precisionConstraints; --layerPrecisions as given.
  PrecisionFlags precision;
  std::string layer_precisions;
};

// The profiles the flags describe (empty when no shape flag was given).
Result<std::vector<engine::ProfileSpec>> profiles_from_flags(const BuildOptions& opts);

Status build_command(const BuildOptions& opts, std::ostream& out);

// One line per pass, for --listPasses.
std::string list_passes();

}  // namespace kiln::cli
