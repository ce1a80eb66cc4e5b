#pragma once
// Calibration results, kept in a file between `kiln calibrate` and `kiln build --int8 --calib=`:
// per tensor the chosen absolute max (scale = amax / 127) and the statistics it came from, with the
// method, the model's hash and the calibration data's hash, so a stale file is recognised.
//
// Two formats are read, told apart by their first bytes:
//   kiln's JSON (docs/calibration.md):
//     {"format": "kiln-calibration", "version": 1, "method": {"algo": "entropy",
//     "percentile": 99.99},
//      "model_hash": "fnv1a64:...", "data_hash": "fnv1a64:...", "samples": 64,
//      "tensors": {"<name>": {"amax": 2.5, "min": -1.2, "max": 2.5, "non_finite": 0,
//                             "histogram": {"range": 2.6, "bins": [[index, count], ...]}}}}
//     (histogram bins are sparse: only non-zero bins are listed)
//   TensorRT's calibration cache (ANCHORS.md 1.4): "TRT-<version>-<Algorithm>" then one
//     "<tensor name>: <hex of the float32 scale>" line per tensor; imported tensors have an amax
//     (127 x scale) and no histogram.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "quant/calibrator.h"
#include "quant/histogram.h"

namespace kiln::quant {

struct TensorCalibration {
  double amax = 0;
  std::optional<AbsHistogram> stats;  // absent for an imported TensorRT cache
};

struct Calibration {
  CalibrationMethod method;
  std::string origin = "kiln";  // or the TensorRT cache's header line
  std::string model_hash;       // empty when unknown (a TensorRT cache)
  std::string data_hash;
  int64_t samples = 0;
  std::map<std::string, TensorCalibration, std::less<>> tensors;
};

Result<Calibration> read_calibration(const std::filesystem::path& path);
Status write_calibration(const Calibration& c, const std::filesystem::path& path);

// TensorRT's text format. `trt_version` is the number in the header (8601 = TensorRT 8.6.1).
std::string trt_cache_text(const Calibration& c, int trt_version = 8601);
Result<Calibration> parse_trt_cache(std::string_view text, std::string_view what);
// The float32 bit pattern of `scale` in lowercase hex without leading zeros, as TensorRT prints it.
std::string trt_scale_hex(float scale);

// "fnv1a64:<16 hex digits>" of some bytes: the model and data hashes.
std::string content_hash(std::string_view bytes);

}  // namespace kiln::quant
