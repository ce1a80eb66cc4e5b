#include "kernels/ref/conv.h"

#include <cassert>
#include <cstddef>

#include "kernels/ref/index_util.h"
#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// Flat offset into a spatial volume of `dims` of the point `base + k * dilation` (per dim), or -1
// when that point lies in the padding.
int64_t spatial_offset(const std::vector<int64_t>& base, const std::vector<int64_t>& kcoord,
                       const std::vector<int64_t>& dilations, const std::vector<int64_t>& dims) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t c = base[d] + kcoord[d] * dilations[d];
    if (c < 0 || c >= dims[d]) return -1;
    offset = offset * dims[d] + c;
  }
  return offset;
}

}  // namespace

template <typename T>
void conv(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  const size_t rank = p.in_dims.size();
  assert(p.out_dims.size() == rank && p.kernel.size() == rank);
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  const int64_t k_size = product(p.kernel);
  const int64_t cin_g = p.in_channels / p.group;    // input channels per group
  const int64_t cout_g = p.out_channels / p.group;  // output channels per group
  std::vector<int64_t> ocoord(rank), base(rank), kcoord(rank);

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      for (int64_t m = g * cout_g; m < (g + 1) * cout_g; ++m) {
        const T* w_m = w + m * cin_g * k_size;  // W[m, :, ...]
        T* y_m = y + (n * p.out_channels + m) * out_size;
        for (int64_t o = 0; o < out_size; ++o) {
          unflatten(o, p.out_dims, ocoord);
          for (size_t d = 0; d < rank; ++d) base[d] = ocoord[d] * p.strides[d] - p.pads_begin[d];
          double acc = bias != nullptr ? static_cast<double>(bias[m]) : 0.0;
          for (int64_t k = 0; k < k_size; ++k) {
            unflatten(k, p.kernel, kcoord);
            const int64_t offset = spatial_offset(base, kcoord, p.dilations, p.in_dims);
            if (offset < 0) continue;  // zero padding
            for (int64_t c = 0; c < cin_g; ++c) {
              const T* x_c = x + (n * p.in_channels + g * cin_g + c) * in_size;
              acc += static_cast<double>(x_c[offset]) * static_cast<double>(w_m[c * k_size + k]);
            }
          }
          y_m[o] = static_cast<T>(acc);
        }
      }
    }
  }
}

template <typename T>
void conv_transpose(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  const size_t rank = p.in_dims.size();
  assert(p.out_dims.size() == rank && p.kernel.size() == rank);
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  const int64_t k_size = product(p.kernel);
  const int64_t cin_g = p.in_channels / p.group;
  const int64_t cout_g = p.out_channels / p.group;
  std::vector<int64_t> icoord(rank), base(rank), kcoord(rank);
  std::vector<double> acc(static_cast<size_t>(out_size));

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      for (int64_t mg = 0; mg < cout_g; ++mg) {
        const int64_t m = g * cout_g + mg;
        acc.assign(acc.size(), bias != nullptr ? static_cast<double>(bias[m]) : 0.0);
        // Every input element scatters into the outputs its kernel window covers.
        for (int64_t c = g * cin_g; c < (g + 1) * cin_g; ++c) {
          const T* x_c = x + (n * p.in_channels + c) * in_size;
          const T* w_cm = w + (c * cout_g + mg) * k_size;  // W[c, mg, ...]
          for (int64_t i = 0; i < in_size; ++i) {
            unflatten(i, p.in_dims, icoord);
            for (size_t d = 0; d < rank; ++d) base[d] = icoord[d] * p.strides[d] - p.pads_begin[d];
            const double xv = static_cast<double>(x_c[i]);
            for (int64_t k = 0; k < k_size; ++k) {
              unflatten(k, p.kernel, kcoord);
              const int64_t offset = spatial_offset(base, kcoord, p.dilations, p.out_dims);
              if (offset >= 0)
                acc[static_cast<size_t>(offset)] += xv * static_cast<double>(w_cm[k]);
            }
          }
        }
        T* y_m = y + (n * p.out_channels + m) * out_size;
        for (int64_t o = 0; o < out_size; ++o) y_m[o] = static_cast<T>(acc[static_cast<size_t>(o)]);
      }
    }
  }
}

template <typename TX, typename TW>
void conv_integer(const ConvParams& p, const ConvZeroPoints& zero, const TX* x, const TW* w,
                  int32_t* y) {
  const size_t rank = p.in_dims.size();
  assert(p.out_dims.size() == rank && p.kernel.size() == rank);
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  const int64_t k_size = product(p.kernel);
  const int64_t cin_g = p.in_channels / p.group;
  const int64_t cout_g = p.out_channels / p.group;
  std::vector<int64_t> ocoord(rank), base(rank), kcoord(rank);

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      for (int64_t m = g * cout_g; m < (g + 1) * cout_g; ++m) {
        const TW* w_m = w + m * cin_g * k_size;
        const int64_t w_zero = zero.w_at(m);
        int32_t* y_m = y + (n * p.out_channels + m) * out_size;
        for (int64_t o = 0; o < out_size; ++o) {
          unflatten(o, p.out_dims, ocoord);
          for (size_t d = 0; d < rank; ++d) base[d] = ocoord[d] * p.strides[d] - p.pads_begin[d];
          // Each product is at most 255 * 255 in magnitude: an int64 sum of them is exact.
          int64_t acc = 0;
          for (int64_t k = 0; k < k_size; ++k) {
            unflatten(k, p.kernel, kcoord);
            const int64_t offset = spatial_offset(base, kcoord, p.dilations, p.in_dims);
            if (offset < 0) continue;  // padding: x_zero, which contributes 0
            for (int64_t c = 0; c < cin_g; ++c) {
              const TX* x_c = x + (n * p.in_channels + g * cin_g + c) * in_size;
              acc += (static_cast<int64_t>(x_c[offset]) - zero.x) *
                     (static_cast<int64_t>(w_m[c * k_size + k]) - w_zero);
            }
          }
          y_m[o] = static_cast<int32_t>(acc);  // modular (C++20): a 32-bit accumulator's result
        }
      }
    }
  }
}

template <typename TX, typename TW, typename TY>
void qlinear_conv(const ConvParams& p, const ConvZeroPoints& zero, const ConvQuantScales& scales,
                  const TX* x, const TW* w, const int32_t* bias, TY y_zero, TY* y) {
  const int64_t out_size = product(p.out_dims);
  std::vector<int32_t> acc(static_cast<size_t>(p.batch * p.out_channels * out_size));
  conv_integer<TX, TW>(p, zero, x, w, acc.data());
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t m = 0; m < p.out_channels; ++m) {
      const float w_scale = scales.w[scales.w.size() == 1 ? 0 : static_cast<size_t>(m)];
      const float multiplier = scales.x * w_scale / scales.y;
      const int32_t b = bias != nullptr ? bias[m] : 0;
      const int64_t base = (n * p.out_channels + m) * out_size;
      for (int64_t o = base; o < base + out_size; ++o) {
        // int32 wrap of acc + bias, as the 32-bit accumulator it models.
        const auto sum =
            static_cast<int32_t>(static_cast<int64_t>(acc[static_cast<size_t>(o)]) + b);
        const float scaled = static_cast<float>(sum) * multiplier;
        y[o] = round_saturate<TY>(static_cast<double>(scaled) + static_cast<double>(y_zero));
      }
    }
  }
}

#define KILN_INSTANTIATE_QCONV(TX, TW)                                                      \
  template void conv_integer<TX, TW>(const ConvParams&, const ConvZeroPoints&, const TX*,   \
                                     const TW*, int32_t*);                                  \
  template void qlinear_conv<TX, TW, uint8_t>(const ConvParams&, const ConvZeroPoints&,     \
                                              const ConvQuantScales&, const TX*, const TW*, \
                                              const int32_t*, uint8_t, uint8_t*);           \
  template void qlinear_conv<TX, TW, int8_t>(const ConvParams&, const ConvZeroPoints&,      \
                                             const ConvQuantScales&, const TX*, const TW*,  \
                                             const int32_t*, int8_t, int8_t*);
KILN_INSTANTIATE_QCONV(uint8_t, uint8_t)
KILN_INSTANTIATE_QCONV(uint8_t, int8_t)
KILN_INSTANTIATE_QCONV(int8_t, uint8_t)
KILN_INSTANTIATE_QCONV(int8_t, int8_t)
#undef KILN_INSTANTIATE_QCONV

template void conv<float>(const ConvParams&, const float*, const float*, const float*, float*);
template void conv<double>(const ConvParams&, const double*, const double*, const double*, double*);
template void conv_transpose<float>(const ConvParams&, const float*, const float*, const float*,
                                    float*);
template void conv_transpose<double>(const ConvParams&, const double*, const double*, const double*,
                                     double*);

}  // namespace kiln::kernels::ref
