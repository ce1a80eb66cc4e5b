#pragma once
// `kiln calibrate`: runs an FP32 engine of the model over calibration data, gathers per-tensor
// statistics (|x| histograms, min/max) on the graph input and every layer output, chooses each
// tensor's INT8 range with the requested calibrator and writes a calibration file (and, on request,
// a TensorRT calibration cache) for `kiln build --int8 --calib=`. See docs/calibration.md.

#include <iosfwd>
#include <string>

#include "base/status.h"
#include "image_flags.h"
#include "progress.h"

namespace kiln::cli::calibrate {

struct CalibrateOptions {
  std::string onnx;
  std::string data;
  std::string output;
  std::string algo = "entropy";
  double percentile = 99.99;
  int64_t batch = 8;       // used when the model's batch is dynamic
  size_t max_batches = 0;  // 0: every sample in the folder
  std::string export_trt_cache;
  int trt_version = 8601;
  int threads = 0;
  ImageFlags image;  // preprocessing of image data (shared with kiln pipeline)
};

// Progress (one step per batch) goes to `progress`, never to `out`.
Status calibrate_command(const CalibrateOptions& o, std::ostream& out, ProgressTarget progress);

}  // namespace kiln::cli::calibrate
