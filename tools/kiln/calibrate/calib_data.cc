#include "calibrate/calib_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "io/npy.h"
#include "quant/calibration_file.h"

namespace kiln::cli::calibrate {
namespace {

bool has_extension(const std::filesystem::path& p, std::initializer_list<const char*> exts) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::any_of(exts.begin(), exts.end(), [&](const char* x) { return e == x; });
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

Result<CalibrationData> CalibrationData::open(DataSpec spec) {
  std::error_code ec;
  CalibrationData d;
  std::vector<std::filesystem::path> images, arrays;
  // One .npy file holding a batch of samples is data too (kiln compare takes the same).
  if (std::filesystem::is_regular_file(spec.folder, ec) && has_extension(spec.folder, {".npy"})) {
    arrays.push_back(spec.folder);
  } else if (!std::filesystem::is_directory(spec.folder, ec)) {
    return not_found("calibration data '{}' is neither a folder nor a .npy file",
                     spec.folder.string());
  } else {
    for (const auto& e : std::filesystem::directory_iterator(spec.folder)) {
      if (!e.is_regular_file()) continue;
      if (has_extension(e.path(), {".jpg", ".jpeg", ".png", ".bmp"})) images.push_back(e.path());
      if (has_extension(e.path(), {".npy"})) arrays.push_back(e.path());
    }
  }
  if (!images.empty() && !arrays.empty()) {
    return invalid_argument("calibration data folder '{}' mixes images and .npy files",
                            spec.folder.string());
  }
  if (images.empty() && arrays.empty()) {
    return invalid_argument(
        "calibration data folder '{}' has no images (.jpg, .jpeg, .png, .bmp) or .npy files",
        spec.folder.string());
  }
  d.images_ = !images.empty();
  d.files_ = d.images_ ? std::move(images) : std::move(arrays);
  std::sort(d.files_.begin(), d.files_.end());
  std::string hashed = d.images_ ? spec.preprocess.describe() : "npy";
  for (size_t f = 0; f < d.files_.size(); ++f) {
    const std::string bytes = file_bytes(d.files_[f]);
    hashed += d.files_[f].filename().string() + '\0' + bytes;
    int64_t count = 1;
    if (!d.images_) {
      KILN_ASSIGN_OR_RETURN(Tensor t, io::parse_npy(bytes, d.files_[f].string()));
      if (t.dtype() != DType::kF32) {
        return invalid_argument("'{}' holds {}; calibration needs float32", d.files_[f].string(),
                                dtype_name(t.dtype()));
      }
      const bool one = t.dims() == spec.sample_dims;
      const bool many = t.rank() == static_cast<int>(spec.sample_dims.size()) + 1 &&
                        Dims(t.dims().begin() + 1, t.dims().end()) == spec.sample_dims;
      if (!one && !many) {
        return invalid_argument("'{}' is {}; the model's input needs {} (one sample) or Nx{}",
                                d.files_[f].string(), dims_to_string(t.dims()),
                                dims_to_string(spec.sample_dims), dims_to_string(spec.sample_dims));
      }
      count = one ? 1 : t.dim(0);
    }
    for (int64_t k = 0; k < count; ++k) d.index_.emplace_back(f, k);
  }
  d.samples_ = d.index_.size();
  d.hash_ = quant::content_hash(hashed);
  d.spec_ = std::move(spec);
  return d;
}

size_t CalibrationData::batch_count(int64_t batch, size_t max_batches) const {
  const size_t n = (samples_ + static_cast<size_t>(batch) - 1) / static_cast<size_t>(batch);
  return max_batches == 0 ? n : std::min(n, max_batches);
}

Result<Tensor> CalibrationData::sample(size_t i) const {
  const auto [file, offset] = index_[i];
  if (images_) {
    KILN_ASSIGN_OR_RETURN(io::Image img, io::read_image(files_[file]));
    KILN_ASSIGN_OR_RETURN(Tensor t, io::preprocess_image(img, spec_.preprocess));
    if (t.dims() != spec_.sample_dims) {
      return invalid_argument("'{}' preprocesses to [{}] but the model's input needs [{}] ({})",
                              files_[file].string(), dims_to_string(t.dims()),
                              dims_to_string(spec_.sample_dims), spec_.preprocess.describe());
    }
    return t;
  }
  KILN_ASSIGN_OR_RETURN(Tensor t, io::read_npy(files_[file]));
  if (t.dims() == spec_.sample_dims) return t;
  Tensor one(DType::kF32, spec_.sample_dims);
  std::memcpy(one.raw_data(), static_cast<const char*>(t.raw_data()) + offset * one.nbytes(),
              one.nbytes());
  return one;
}

Result<Tensor> CalibrationData::batch(size_t index, int64_t batch) const {
  const size_t begin = index * static_cast<size_t>(batch);
  const size_t n = std::min(samples_ - begin, static_cast<size_t>(batch));
  Dims dims{static_cast<int64_t>(n)};
  dims.insert(dims.end(), spec_.sample_dims.begin(), spec_.sample_dims.end());
  Tensor out(DType::kF32, dims);
  for (size_t k = 0; k < n; ++k) {
    KILN_ASSIGN_OR_RETURN(Tensor s, sample(begin + k));
    std::memcpy(static_cast<char*>(out.raw_data()) + k * s.nbytes(), s.raw_data(), s.nbytes());
  }
  return out;
}

std::string CalibrationData::describe() const {
  return fmt::format("{} {} in {} ({} samples{})", files_.size(), images_ ? "images" : ".npy files",
                     spec_.folder.string(), samples_,
                     images_ ? "; " + spec_.preprocess.describe() : "");
}

}  // namespace kiln::cli::calibrate
