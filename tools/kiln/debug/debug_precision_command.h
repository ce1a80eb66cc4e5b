#pragma once
// `kiln debug precision`: which INT8 layers must stay in FP32 for the model to meet a tolerance?
// Builds the INT8 engine, ranks its INT8 layers by the error each adds (kiln compare
// --all-layers), bisects over that ranking building engines with --layerPrecisions=...:fp32, and
// prints the --layerPrecisions line that meets the tolerance. docs/accuracy.md describes it.

#include <cstdint>
#include <iosfwd>
#include <string>

#include "base/status.h"
#include "image_flags.h"

namespace kiln::cli::debug {

struct DebugPrecisionOptions {
  std::string onnx;
  std::string calib;               // kiln calibration or TensorRT cache; empty: placeholder ranges
  std::string data;                // a .npy file or a folder (as kiln compare)
  std::string load_inputs;         // name:file.npy[,...]
  int64_t samples = 0;             // 0: all the data; random inputs: 8
  int64_t batch = 0;               // 0: all the samples, at most 32
  std::string cosine, atol, rtol;  // the tolerance; none given: --cosine=0.99
  uint64_t seed = 0;
  int threads = 0;
  ImageFlags image;  // --data folders of images: kiln calibrate's preprocessing flags
};

// True when a set of FP32 layers meets the tolerance (printed with the --layerPrecisions line);
// false when even the FP32 engine misses it. Errors are Statuses.
Result<bool> debug_precision_command(const DebugPrecisionOptions& o, std::ostream& out);

}  // namespace kiln::cli::debug
