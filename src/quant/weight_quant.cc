#include "quant/weight_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::quant {
namespace {

Result<Tensor> as_float32(const Tensor& w) {
  if (w.dtype() == DType::kF32) return w;
  if (w.dtype() == DType::kF16) return cast_tensor(w, DType::kF32);
  return unsupported("INT8 weights are made from float32 or float16 weights, not {}", w.desc());
}

}  // namespace

Result<ChannelQuantized> quantize_per_channel(const Tensor& w, int axis, int qmax) {
  if (axis < 0 || axis >= w.rank()) {
    return invalid_argument("per-channel axis {} is out of range for weights {}", axis, w.desc());
  }
  if (qmax < 1 || qmax > 127) return invalid_argument("weight range [-{0}, {0}] is not int8", qmax);
  KILN_ASSIGN_OR_RETURN(const Tensor f, as_float32(w));
  const int64_t channels = f.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < f.rank(); ++d) inner *= f.dim(d);
  const int64_t outer = channels == 0 ? 0 : f.numel() / (channels * inner);
  const float* src = f.data<float>();
  // Element (o, c, i) sits at (o * channels + c) * inner + i.
  auto each_in_channel = [&](int64_t c, auto&& fn) {
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) fn(base + i);
    }
  };
  ChannelQuantized out{Tensor(DType::kI8, f.dims()), Tensor(DType::kF32, {channels})};
  int8_t* q = out.q.data<int8_t>();
  float* scales = out.scales.data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    float amax = 0;
    bool finite = true;
    each_in_channel(c, [&](int64_t k) {
      finite = finite && std::isfinite(src[k]);
      amax = std::max(amax, std::fabs(src[k]));
    });
    if (!finite) {
      return invalid_argument("weights {} have a NaN or infinity in channel {} (axis {})", w.desc(),
                              c, axis);
    }
    const auto top = static_cast<float>(qmax);
    const float scale = amax > 0 ? amax / top : 1.0f;
    scales[c] = scale;
    each_in_channel(c, [&](int64_t k) {
      const float v = std::nearbyint(src[k] / scale);
      q[k] = static_cast<int8_t>(std::clamp(v, -top, top));
    });
  }
  return out;
}

Result<ChannelQuantized> quantize_with_scales(const Tensor& w, const Tensor& scales, int axis) {
  if (axis < 0 || axis >= w.rank()) {
    return invalid_argument("per-channel axis {} is out of range for weights {}", axis, w.desc());
  }
  const int64_t channels = w.dim(axis);
  if (scales.dtype() != DType::kF32 || (scales.numel() != 1 && scales.numel() != channels)) {
    return invalid_argument("scales {} do not fit weights {} along axis {}", scales.desc(),
                            w.desc(), axis);
  }
  KILN_ASSIGN_OR_RETURN(const Tensor f, as_float32(w));
  int64_t inner = 1;
  for (int d = axis + 1; d < f.rank(); ++d) inner *= f.dim(d);
  ChannelQuantized out{Tensor(DType::kI8, f.dims()), Tensor(DType::kF32, {channels})};
  for (int64_t c = 0; c < channels; ++c) {
    const float s = scales.data<float>()[scales.numel() == 1 ? 0 : c];
    if (!(s > 0) || !std::isfinite(s)) {
      return invalid_argument("weight scale {} of channel {} is not a positive number", s, c);
    }
    out.scales.data<float>()[c] = s;
  }
  const float* src = f.data<float>();
  int8_t* q = out.q.data<int8_t>();
  for (int64_t k = 0; k < f.numel(); ++k) {
    const float s = out.scales.data<float>()[(k / inner) % std::max<int64_t>(channels, 1)];
    q[k] = static_cast<int8_t>(std::clamp(std::nearbyint(src[k] / s), -128.0f, 127.0f));
  }
  return out;
}

Result<Tensor> transpose_2d(const Tensor& t) {
  if (t.rank() != 2) return invalid_argument("transpose_2d needs a 2-D tensor, got {}", t.desc());
  const int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor out(t.dtype(), {cols, rows});
  const size_t es = dtype_size(t.dtype());
  const auto* src = static_cast<const char*>(t.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(dst + (c * rows + r) * es, src + (r * cols + c) * es, es);
    }
  }
  return out;
}

}  // namespace kiln::quant
