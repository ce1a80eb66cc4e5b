#pragma once
// The samples `kiln compare` feeds to the reference and to every engine: random (io/random_input:
// uniform in [-1, 1) for floats, digits 0..9 for integers; seeded), one .npy batch or a folder of
// .npy files / images (calibrate/calib_data, for one-input models), or explicit per-input files
// (--loadInputs). Every input's first axis is the sample axis; all samples are held in memory and
// cut into batches.

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "image_flags.h"
#include "ir/graph.h"
#include "runtime/input_check.h"

namespace kiln::cli::compare {

struct InputSource {
  std::string data;                          // --data: a .npy file or a folder
  std::map<std::string, std::string> files;  // --loadInputs: input name -> .npy
  int64_t samples = 0;                       // --samples; 0: all the data (random: one batch)
  int64_t random_samples = 8;                // samples of random inputs when --samples is not given
  uint64_t seed = 0;
  ImageFlags image;  // how a folder's images become samples (kiln calibrate's flags)
};

class CompareInputs {
 public:
  // Reads or draws the samples of every input of `model` (the imported ONNX graph).
  static Result<CompareInputs> open(const ir::Graph& model, const InputSource& source);

  int64_t samples() const { return samples_; }
  // Samples [begin, begin + n) of every input.
  runtime::NamedTensors batch(int64_t begin, int64_t n) const;
  const std::string& describe() const { return description_; }

 private:
  runtime::NamedTensors all_;
  int64_t samples_ = 0;
  std::string description_;
};

}  // namespace kiln::cli::compare
