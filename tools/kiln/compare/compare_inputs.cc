#include "compare/compare_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <filesystem>

#include "calibrate/calib_data.h"
#include "io/npy.h"
#include "io/random_input.h"

namespace kiln::cli::compare {
namespace {

// The input's dims without the sample axis; symbolic dims (other than the first) become 1.
Result<Dims> per_sample_dims(const ir::Value& in) {
  if (!in.desc.has_rank() || in.desc.rank() < 1) {
    return unsupported("input '{}' is {}: kiln compare needs a leading sample (batch) axis",
                       in.name, in.desc.to_string());
  }
  Dims dims;
  for (int d = 1; d < in.desc.rank(); ++d) {
    dims.push_back(in.desc.dim(d).is_known() ? in.desc.dim(d).value : 1);
  }
  return dims;
}

// A whole-set tensor read from `path` checked against the model's input: same dtype and rank, and
// equal dims wherever the model's are known (except the sample axis).
Status check_against_input(const Tensor& t, const ir::Value& in, const std::string& path) {
  bool ok = t.dtype() == in.desc.dtype && t.rank() == in.desc.rank();
  for (int d = 1; ok && d < t.rank(); ++d) {
    ok = !in.desc.dim(d).is_known() || in.desc.dim(d).value == t.dim(d);
  }
  if (!ok) {
    return invalid_argument("'{}' holds {} {}; input '{}' needs {} (first axis: samples)", path,
                            dtype_name(t.dtype()), dims_to_string(t.dims()), in.name,
                            in.desc.to_string());
  }
  return Status::ok();
}

// --data: one .npy batch (or one sample without the batch axis), or a folder read as calibration
// data is, its images preprocessed by `image`.
Result<Tensor> read_data(const ir::Value& in, const std::string& data, const ImageFlags& image) {
  KILN_ASSIGN_OR_RETURN(const Dims sample, per_sample_dims(in));
  std::error_code ec;
  if (std::filesystem::is_directory(data, ec)) {
    if (in.desc.dtype != DType::kF32) {
      return unsupported("--data folders feed float32 inputs; input '{}' is {}", in.name,
                         in.desc.to_string());
    }
    KILN_ASSIGN_OR_RETURN(const io::ImagePreprocess pre, image_spec(image, sample));
    KILN_ASSIGN_OR_RETURN(auto folder, calibrate::CalibrationData::open({data, sample, pre}));
    return folder.batch(0, static_cast<int64_t>(folder.samples()));
  }
  KILN_ASSIGN_OR_RETURN(Tensor t, io::read_npy(data));
  if (t.dims() == sample && t.rank() + 1 == in.desc.rank()) {
    Dims one{1};
    one.insert(one.end(), sample.begin(), sample.end());
    t = t.reshaped(one);
  }
  KILN_RETURN_IF_ERROR(check_against_input(t, in, data));
  return t;
}

Tensor sample_rows(const Tensor& t, int64_t begin, int64_t n) {
  Dims dims = t.dims();
  dims[0] = n;
  Tensor out(t.dtype(), dims);
  const size_t row = t.dim(0) ? t.nbytes() / static_cast<size_t>(t.dim(0)) : 0;
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + begin * row, n * row);
  return out;
}

}  // namespace

Result<CompareInputs> CompareInputs::open(const ir::Graph& model, const InputSource& source) {
  std::vector<const ir::Value*> inputs;
  for (ir::ValueId v : model.inputs) {
    if (!model.value(v).initializer) inputs.push_back(&model.value(v));
  }
  if (!source.data.empty() && inputs.size() != 1) {
    return invalid_argument(
        "--data feeds models with one input; this one has {}: use "
        "--loadInputs=name:file.npy,...",
        inputs.size());
  }
  for (const auto& [name, path] : source.files) {
    const ir::ValueId v = model.find_value(name);
    if (v == ir::kNoValue || !model.value(v).is_graph_input) {
      return invalid_argument("--loadInputs: the model has no input '{}'", name);
    }
  }
  CompareInputs c;
  std::vector<std::string> parts;
  int64_t n = -1;  // samples of the data read so far
  for (const ir::Value* in : inputs) {
    Tensor t;
    if (!source.data.empty()) {
      KILN_ASSIGN_OR_RETURN(t, read_data(*in, source.data, source.image));
      parts.push_back(fmt::format("'{}' from {}", in->name, source.data));
    } else if (auto f = source.files.find(in->name); f != source.files.end()) {
      KILN_ASSIGN_OR_RETURN(t, io::read_npy(f->second));
      KILN_RETURN_IF_ERROR(check_against_input(t, *in, f->second));
      parts.push_back(fmt::format("'{}' from {}", in->name, f->second));
    } else {
      continue;
    }
    if (n >= 0 && t.dim(0) != n) {
      return invalid_argument("the input files disagree on the sample count: {} and {} ({})", n,
                              t.dim(0), fmt::join(parts, ", "));
    }
    n = t.dim(0);
    c.all_[in->name] = std::move(t);
  }
  if (n == 0)
    return invalid_argument("the input data holds no samples ({})", fmt::join(parts, ", "));
  c.samples_ = source.samples > 0 ? source.samples : (n > 0 ? n : source.random_samples);
  if (n > 0 && c.samples_ > n) {
    return invalid_argument("--samples={} but the data holds {} samples", c.samples_, n);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& in = *inputs[i];
    if (c.all_.count(in.name)) continue;
    KILN_ASSIGN_OR_RETURN(Dims dims, per_sample_dims(in));
    dims.insert(dims.begin(), c.samples_);
    KILN_ASSIGN_OR_RETURN(c.all_[in.name], io::random_tensor(in.desc.dtype, dims, source.seed + i));
    parts.push_back(
        fmt::format("'{}' random {} (seed {})", in.name, dims_to_string(dims), source.seed + i));
  }
  c.description_ = fmt::format("{} samples; {}", c.samples_, fmt::join(parts, ", "));
  return c;
}

runtime::NamedTensors CompareInputs::batch(int64_t begin, int64_t n) const {
  runtime::NamedTensors out;
  for (const auto& [name, t] : all_) out[name] = sample_rows(t, begin, n);
  return out;
}

}  // namespace kiln::cli::compare
