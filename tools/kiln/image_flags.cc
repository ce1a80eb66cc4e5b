#include "image_flags.h"

#include <CLI/CLI.hpp>
#include <array>
#include <cmath>

#include "options.h"

namespace kiln::cli {
namespace {

Result<std::array<float, 3>> three_floats(const std::string& flag, const std::string& text,
                                          std::array<float, 3> fallback) {
  if (text.empty()) return fallback;
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> items, split_list(flag, text));
  if (items.size() != 3) {
    return invalid_argument("{} needs three comma-separated values (R,G,B), got '{}'", flag, text);
  }
  std::array<float, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(const double v, parse_real(flag, items[i]));
    out[i] = static_cast<float>(v);
  }
  return out;
}

std::string layout_of(const ImageFlags& f, const Dims& sample) {
  if (!f.layout.empty()) return f.layout;
  return sample.size() == 3 && sample[2] == 3 && sample[0] != 3 ? "NHWC" : "NCHW";
}

}  // namespace

void add_image_flags(CLI::App& c, ImageFlags& o) {
  c.add_option("--resize", o.resize,
               "Images: resize the shorter side to this (default: 256/224 of the input size; "
               "kiln pipeline --task=detect: the input size)");
  c.add_option("--mean", o.mean,
               "Images: per-channel mean after scaling, R,G,B "
               "(default ImageNet's 0.485,0.456,0.406; detect: 0,0,0)");
  c.add_option("--std", o.stddev,
               "Images: per-channel std, R,G,B (default 0.229,0.224,0.225; detect: 1,1,1)");
  c.add_option("--scale", o.scale, "Images: factor applied to 0..255 first")->capture_default_str();
  c.add_option("--channelOrder", o.channel_order, "Images: RGB or BGR")->capture_default_str();
  c.add_option("--layout", o.layout, "Images: NCHW or NHWC (default: from the input's shape)");
}

bool is_image_sample(const ImageFlags& f, const Dims& sample) {
  const bool nhwc = layout_of(f, sample) == "NHWC";
  return sample.size() == 3 && sample[nhwc ? 2 : 0] == 3;
}

Result<io::ImagePreprocess> image_spec(const ImageFlags& o, const Dims& sample,
                                       PreprocessDefaults defaults) {
  const std::string layout = layout_of(o, sample);
  if (layout != "NCHW" && layout != "NHWC") {
    return invalid_argument("--layout must be NCHW or NHWC, got '{}'", layout);
  }
  if (o.channel_order != "RGB" && o.channel_order != "BGR") {
    return invalid_argument("--channelOrder must be RGB or BGR, got '{}'", o.channel_order);
  }
  if (!std::isfinite(o.scale) || o.scale <= 0) {
    return invalid_argument("--scale must be a positive number, got {}", o.scale);
  }
  const bool nhwc = layout == "NHWC";
  if (!is_image_sample(o, sample)) return io::ImagePreprocess{};
  const int h = static_cast<int>(sample[nhwc ? 0 : 1]), w = static_cast<int>(sample[nhwc ? 1 : 2]);
  io::ImagePreprocess p = io::imagenet_preprocess(h, w, nhwc);
  if (defaults == PreprocessDefaults::kDetector) {
    p.resize_shorter = std::min(h, w);
    p.mean = {0, 0, 0};
    p.stddev = {1, 1, 1};
  }
  if (o.resize >= 0) p.resize_shorter = o.resize;
  p.scale = static_cast<float>(o.scale);
  KILN_ASSIGN_OR_RETURN(p.mean, three_floats("--mean", o.mean, p.mean));
  KILN_ASSIGN_OR_RETURN(p.stddev, three_floats("--std", o.stddev, p.stddev));
  for (float s : p.stddev) {
    if (s == 0) return invalid_argument("--std has a zero: '{}'", o.stddev);
  }
  p.bgr = o.channel_order == "BGR";
  return p;
}

}  // namespace kiln::cli
