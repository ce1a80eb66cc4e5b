#pragma once
// Calibration data for one model input: a folder of images (decoded and preprocessed as the spec
// says) or of .npy files (each one sample, or one batch with the batch axis first), cut into
// batches. Files are taken in name order so that a run is reproducible; the data hash covers their
// names, their bytes and the preprocessing.

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "io/image.h"

namespace kiln::cli::calibrate {

struct DataSpec {
  std::filesystem::path folder;
  Dims sample_dims;  // the input's dims without the batch axis
  io::ImagePreprocess preprocess;
};

class CalibrationData {
 public:
  // Lists the folder; an empty folder or one with files of neither kind is an error naming it.
  static Result<CalibrationData> open(DataSpec spec);

  size_t samples() const { return samples_; }
  // Batches of `batch` samples, the last one possibly shorter; at most `max_batches` (0: all).
  size_t batch_count(int64_t batch, size_t max_batches) const;
  // Batch `index` as one tensor [n, sample dims...].
  Result<Tensor> batch(size_t index, int64_t batch) const;
  const std::string& hash() const { return hash_; }
  std::string describe() const;

 private:
  Result<Tensor> sample(size_t i) const;

  DataSpec spec_;
  std::vector<std::filesystem::path> files_;
  bool images_ = false;
  // A .npy file may hold several samples: the (file, offset) of every sample.
  std::vector<std::pair<size_t, int64_t>> index_;
  size_t samples_ = 0;
  std::string hash_;
};

}  // namespace kiln::cli::calibrate
