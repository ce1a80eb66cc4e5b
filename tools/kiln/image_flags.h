#pragma once
// The image preprocessing flags `kiln calibrate` and `kiln pipeline` share (resize, mean/std,
// scale, channel order, layout): one definition of the flags and one parser, so that a pipeline
// run feeds its engine exactly what the calibrator fed the model.

#include <string>

#include "base/status.h"
#include "base/tensor.h"
#include "io/image.h"

namespace CLI {
class App;
}

namespace kiln::cli {

struct ImageFlags {
  // Empty/negative values take the defaults of the input's size (see PreprocessDefaults).
  int resize = -1;
  std::string mean, stddev;
  double scale = 1.0 / 255.0;
  std::string channel_order = "RGB";
  std::string layout;  // NCHW or NHWC; default from the input's shape
};

// kImageNet: resize the shorter side to 256/224 of the input, center crop, torchvision's mean/std.
// kDetector: resize the shorter side to the input's shorter side, center crop, mean 0 and std 1
// (YOLO-style models take 0..1 pixels).
enum class PreprocessDefaults { kImageNet, kDetector };

// Declares --resize, --mean, --std, --scale, --channelOrder and --layout on `cmd`.
void add_image_flags(CLI::App& cmd, ImageFlags& flags);

// The preprocessing for a model input whose dims without the batch axis are `sample`. A sample
// that is not an image ([3,H,W] or [H,W,3]) gives an empty spec (only .npy data can feed it).
Result<io::ImagePreprocess> image_spec(const ImageFlags& flags, const Dims& sample,
                                       PreprocessDefaults defaults = PreprocessDefaults::kImageNet);

// True when `sample` (dims without the batch axis) is [3,H,W] or [H,W,3] under `flags`' layout.
bool is_image_sample(const ImageFlags& flags, const Dims& sample);

}  // namespace kiln::cli
