#pragma once
// Images as model inputs: decoding (JPEG, PNG, BMP, via stb_image) and the usual classification
// preprocessing — resize the shorter side, center crop, scale, per-channel mean/std, RGB or BGR,
// NCHW or NHWC — spelled out so a calibration or accuracy run can say exactly what it fed.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // height x width x 3
};

// Any JPEG/PNG/BMP/GIF stb_image reads; grey and RGBA become RGB. The error names the file.
Result<Image> read_image(const std::filesystem::path& path);

struct ImagePreprocess {
  int resize_shorter = 0;               // shorter side after resizing (bilinear); 0: no resize
  int crop_height = 0, crop_width = 0;  // center crop; 0: the resized image
  float scale = 1.0f / 255.0f;          // applied to the 0..255 values first
  std::array<float, 3> mean{0, 0, 0};   // subtracted after scaling, in RGB order
  std::array<float, 3> stddev{1, 1, 1};
  bool bgr = false;              // channel order of the output
  bool nhwc = false;             // output layout [H, W, 3]; default [3, H, W]
  std::string describe() const;  // one line, for logs and the data hash
};

// Where preprocessing puts the original pixels: the image is resized to resized_width x
// resized_height, then the crop_width x crop_height window at (left, top) is kept. A point (x, y)
// of the model input is the original's ((x + left) * width / resized_width, ...), which is how
// detections are mapped back.
struct ImageGeometry {
  int width = 0, height = 0;                  // the original image
  int resized_width = 0, resized_height = 0;  // after resizing (the original when no resize)
  int left = 0, top = 0;                      // the crop's corner in the resized image
  int crop_width = 0, crop_height = 0;
};

// The geometry `p` gives an image of width x height; the error says why a crop does not fit.
Result<ImageGeometry> preprocess_geometry(int width, int height, const ImagePreprocess& p);

// The float32 tensor [3, H, W] (or [H, W, 3]) of `image` after `p`; the error says why a crop does
// not fit.
Result<Tensor> preprocess_image(const Image& image, const ImagePreprocess& p);

// ImageNet's convention for a model input of `height` x `width`: resize the shorter side to
// 256/224 of the crop, center crop, torchvision's mean and std, RGB.
ImagePreprocess imagenet_preprocess(int height, int width, bool nhwc);

}  // namespace kiln::io
