#pragma once
// `kiln compare`: runs kiln's reference executor on the imported, unoptimized ONNX graph and each
// engine on the same inputs, and reports per output (and with --all-layers per layer) how far the
// engine is from the reference, with tolerances that make the command fail for CI.
// docs/accuracy.md describes every figure.

#include <cstdint>
#include <iosfwd>
#include <string>

#include "base/status.h"
#include "image_flags.h"

namespace kiln::cli::compare {

struct CompareOptions {
  std::string onnx;
  std::string engines;      // a.plan[,b.plan...]
  std::string data;         // a .npy file or a folder
  std::string load_inputs;  // name:file.npy[,...]
  int64_t samples = 0;      // 0: all the data; random inputs: --batch, else 8
  int64_t batch = 0;        // 0: the largest every engine admits, at most 32
  std::string labels;       // int64 .npy, one label per sample
  bool all_layers = false;
  int top_layers = 10;  // layers printed by --all-layers
  // Tolerances as given (parsed and checked by the command, so errors name the flag).
  std::string atol, rtol, cosine, top1;
  std::string json;       // all figures
  std::string summaries;  // kiln exec --exportSummary files, one per engine: accuracy is set
  uint64_t seed = 0;
  int threads = 0;
  ImageFlags image;  // --data folders of images: kiln calibrate's preprocessing flags
};

// Errors (bad flags, missing files, an engine of another model) are Statuses. A violated tolerance
// is not an error: the table and the JSON are still written, every violation is printed as a FAIL
// line on `out` and summed up on `err`, and the result is false (`kiln` then exits with 2).
Result<bool> compare_command(const CompareOptions& o, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli::compare
