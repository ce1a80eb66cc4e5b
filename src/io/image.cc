#include "io/image.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

namespace kiln::io {

Result<Image> read_image(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("image '{}' cannot be opened", path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  int w = 0, h = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                            static_cast<int>(bytes.size()), &w, &h, &channels, 3),
      stbi_image_free);
  if (!pixels) {
    return invalid_argument("image '{}' cannot be decoded: {}", path.string(),
                            stbi_failure_reason());
  }
  Image img{w, h, {}};
  img.rgb.assign(pixels.get(), pixels.get() + static_cast<size_t>(w) * h * 3);
  return img;
}

std::string ImagePreprocess::describe() const {
  return fmt::format("resize_shorter={} crop={}x{} scale={} mean={} std={} order={} layout={}",
                     resize_shorter, crop_height, crop_width, scale, fmt::join(mean, ","),
                     fmt::join(stddev, ","), bgr ? "BGR" : "RGB", nhwc ? "NHWC" : "NCHW");
}

Result<ImageGeometry> preprocess_geometry(int width, int height, const ImagePreprocess& p) {
  ImageGeometry g{width, height, width, height, 0, 0, 0, 0};
  if (p.resize_shorter > 0) {
    const double f = static_cast<double>(p.resize_shorter) / std::min(width, height);
    g.resized_width = std::max(1, static_cast<int>(std::lround(width * f)));
    g.resized_height = std::max(1, static_cast<int>(std::lround(height * f)));
  }
  g.crop_height = p.crop_height > 0 ? p.crop_height : g.resized_height;
  g.crop_width = p.crop_width > 0 ? p.crop_width : g.resized_width;
  if (g.crop_height > g.resized_height || g.crop_width > g.resized_width) {
    return invalid_argument("a {}x{} crop does not fit the {}x{} image (after resizing: {})",
                            g.crop_height, g.crop_width, g.resized_height, g.resized_width,
                            p.describe());
  }
  g.top = (g.resized_height - g.crop_height) / 2;
  g.left = (g.resized_width - g.crop_width) / 2;
  return g;
}

Result<Tensor> preprocess_image(const Image& image, const ImagePreprocess& p) {
  KILN_ASSIGN_OR_RETURN(const ImageGeometry g, preprocess_geometry(image.width, image.height, p));
  Image src = image;
  if (p.resize_shorter > 0) {
    const int w = g.resized_width, h = g.resized_height;
    src = Image{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
    if (!stbir_resize_uint8(image.rgb.data(), image.width, image.height, 0, src.rgb.data(), w, h, 0,
                            3)) {
      return internal_error("resizing a {}x{} image to {}x{} failed", image.width, image.height, w,
                            h);
    }
  }
  const int ch = g.crop_height, cw = g.crop_width, top = g.top, left = g.left;
  Tensor t(DType::kF32, p.nhwc ? Dims{ch, cw, 3} : Dims{3, ch, cw});
  float* out = t.data<float>();
  for (int y = 0; y < ch; ++y) {
    for (int x = 0; x < cw; ++x) {
      const uint8_t* px = &src.rgb[(static_cast<size_t>(top + y) * src.width + left + x) * 3];
      for (int c = 0; c < 3; ++c) {
        const int from = p.bgr ? 2 - c : c;  // output channel c reads this input channel
        const float v = (px[from] * p.scale - p.mean[from]) / p.stddev[from];
        const size_t idx = p.nhwc ? (static_cast<size_t>(y) * cw + x) * 3 + c
                                  : (static_cast<size_t>(c) * ch + y) * cw + x;
        out[idx] = v;
      }
    }
  }
  return t;
}

ImagePreprocess imagenet_preprocess(int height, int width, bool nhwc) {
  ImagePreprocess p;
  p.resize_shorter = static_cast<int>(std::lround(std::min(height, width) * 256.0 / 224.0));
  p.crop_height = height;
  p.crop_width = width;
  p.mean = {0.485f, 0.456f, 0.406f};
  p.stddev = {0.229f, 0.224f, 0.225f};
  p.nhwc = nhwc;
  return p;
}

}  // namespace kiln::io
