#include "kernels/cpu/conv.h"

#include <algorithm>
#include <cstring>

#include "base/int_math.h"
#include "kernels/cpu/gemm.h"

namespace kiln::kernels::cpu {
namespace {

// Output columns per register tile.
constexpr int64_t kOwb = 8;

// Output channels per register tile: 4 shares each input load between four channels; a group with
// fewer output channels (depthwise) takes them one at a time rather than computing padding.
int64_t channel_block(const Conv2DParams& p) { return p.out_c / p.group >= 4 ? 4 : 1; }

// The zero-padded copy of one image: every tap of every output lands inside it.
struct Padded {
  int64_t h, w;   // padded extents
  int64_t slack;  // floats after the last row: the last tile's unused lanes read them
};

Padded padded_dims(const Conv2DParams& p) {
  Padded d;
  d.h = std::max(p.in_h + p.pad_top, (p.out_h - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1);
  d.w = std::max(p.in_w + p.pad_left, (p.out_w - 1) * p.stride_w + (p.k_w - 1) * p.dil_w + 1);
  d.slack = (kOwb - 1) * p.stride_w;
  return d;
}

void pad_image(const Conv2DParams& p, const Padded& d, const float* x, float* out) {
  for (int64_t c = 0; c < p.in_c; ++c) {
    const float* xc = x + c * p.in_h * p.in_w;
    float* oc = out + c * d.h * d.w;
    for (int64_t r = 0; r < d.h; ++r) {
      float* orow = oc + r * d.w;
      const int64_t ih = r - p.pad_top;
      if (ih < 0 || ih >= p.in_h) {
        std::fill(orow, orow + d.w, 0.0f);
        continue;
      }
      std::fill(orow, orow + p.pad_left, 0.0f);
      std::memcpy(orow + p.pad_left, xc + ih * p.in_w, static_cast<size_t>(p.in_w) * sizeof(float));
      std::fill(orow + p.pad_left + p.in_w, orow + d.w, 0.0f);
    }
  }
  std::fill(out + p.in_c * d.h * d.w, out + p.in_c * d.h * d.w + d.slack, 0.0f);
}

// Geometry of one group's tap loop in the padded image.
struct TapLoop {
  int64_t cg, k_h, k_w;
  int64_t chan_stride;  // floats between channels
  int64_t row_step;     // floats between kernel rows (dil_h rows)
  int64_t dil_w;
  int64_t stride_w;
};

// acc[mb][o] = sum over (kh, kw, c) of w[kh][kw][c][mb] * x[c][kh * dil_h][o * stride + kw * dil_w]
// with x at the tile's top-left input position. The channel loop is innermost: it is the long one
// (a 3x3 kernel has 9 taps, a layer hundreds of channels). With one channel per group (depthwise,
// kOneChannel) it is dropped: a loop of one iteration per tap would only cost. kStride 0 means
// "read t.stride_w".
template <int64_t kMb, int64_t kStride, bool kOneChannel>
void conv_tile(const TapLoop& t, const float* x, const float* w, float (&acc)[kMb][kOwb]) {
  float s[kMb][kOwb] = {};
  const int64_t stride = kStride != 0 ? kStride : t.stride_w;
  const int64_t cg = kOneChannel ? 1 : t.cg;
  for (int64_t r = 0; r < t.k_h; ++r) {
    for (int64_t q = 0; q < t.k_w; ++q) {
      const float* xq = x + r * t.row_step + q * t.dil_w;
      for (int64_t c = 0; c < cg; ++c) {
        const float* xv = xq + c * t.chan_stride;
        for (int64_t mb = 0; mb < kMb; ++mb) {
          const float wm = w[mb];
          for (int64_t o = 0; o < kOwb; ++o) s[mb][o] += wm * xv[o * stride];
        }
        w += kMb;
      }
    }
  }
  for (int64_t mb = 0; mb < kMb; ++mb) {
    for (int64_t o = 0; o < kOwb; ++o) acc[mb][o] = s[mb][o];
  }
}

// Where a tile's results go.
struct TileOut {
  float* y;               // y at (n, first channel of the block, oh, ow0)
  const float* residual;  // same offset into the residual, or null
  const float* bias;      // bias at the block's first channel, or null
  int64_t plane;          // floats between output channels
  int64_t channels;       // valid channels in the block
  int64_t width;          // valid columns in the tile
};

// Reads the residual element before writing y there: the residual may be y itself (in place).
template <int64_t kMb>
void store_tile(const TileOut& o, const float (&acc)[kMb][kOwb]) {
  for (int64_t mb = 0; mb < o.channels; ++mb) {
    float* yr = o.y + mb * o.plane;
    const float b = o.bias != nullptr ? o.bias[mb] : 0.0f;
    if (o.residual != nullptr) {
      const float* rr = o.residual + mb * o.plane;
      for (int64_t j = 0; j < o.width; ++j) yr[j] = acc[mb][j] + b + rr[j];
    } else {
      for (int64_t j = 0; j < o.width; ++j) yr[j] = acc[mb][j] + b;
    }
  }
}

// One group of one image: every output row, channel block and column tile.
template <int64_t kMb, int64_t kStride, bool kOneChannel>
void conv_group(const Conv2DParams& p, const Padded& d, const float* xg, const float* wg,
                const ConvEpilogue& ep, int64_t n, int64_t g, float* y) {
  const int64_t mg = p.out_c / p.group;
  const int64_t cg = p.in_c / p.group;
  const TapLoop t{cg, p.k_h, p.k_w, d.h * d.w, p.dil_h * d.w, p.dil_w, p.stride_w};
  const int64_t plane = p.out_h * p.out_w;
  const int64_t block_w = cg * p.k_h * p.k_w * kMb;  // packed floats per channel block
  float acc[kMb][kOwb];
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    const float* xrow = xg + oh * p.stride_h * d.w;
    for (int64_t b = 0; b * kMb < mg; ++b) {
      const int64_t m0 = g * mg + b * kMb;
      const int64_t offset = ((n * p.out_c + m0) * p.out_h + oh) * p.out_w;
      TileOut out{y + offset,
                  ep.residual != nullptr ? ep.residual + offset : nullptr,
                  ep.bias != nullptr ? ep.bias + m0 : nullptr,
                  plane,
                  std::min(kMb, mg - b * kMb),
                  0};
      for (int64_t ow0 = 0; ow0 < p.out_w; ow0 += kOwb) {
        conv_tile<kMb, kStride, kOneChannel>(t, xrow + ow0 * p.stride_w, wg + b * block_w, acc);
        out.width = std::min(kOwb, p.out_w - ow0);
        store_tile<kMb>(out, acc);
        out.y += kOwb;
        if (out.residual != nullptr) out.residual += kOwb;
      }
      if (ep.activate != nullptr) {
        for (int64_t mb = 0; mb < out.channels; ++mb) {
          ep.activate(y + offset + mb * plane, p.out_w, ep.activate_ctx);
        }
      }
    }
  }
}

// conv_group specialised for the common strides.
template <int64_t kMb, bool kOneChannel>
void conv_group_any_stride(const Conv2DParams& p, const Padded& d, const float* xg, const float* wg,
                           const ConvEpilogue& ep, int64_t n, int64_t g, float* y) {
  switch (p.stride_w) {
    case 1:
      return conv_group<kMb, 1, kOneChannel>(p, d, xg, wg, ep, n, g, y);
    case 2:
      return conv_group<kMb, 2, kOneChannel>(p, d, xg, wg, ep, n, g, y);
    default:
      return conv_group<kMb, 0, kOneChannel>(p, d, xg, wg, ep, n, g, y);
  }
}

template <int64_t kMb>
void conv_direct_with(const Conv2DParams& p, const float* x, const float* packed_w,
                      const ConvEpilogue& ep, float* y, float* scratch) {
  const Padded d = padded_dims(p);
  const int64_t mg = p.out_c / p.group;
  const int64_t cg = p.in_c / p.group;
  const int64_t group_w = ceil_div(mg, kMb) * cg * p.k_h * p.k_w * kMb;
  for (int64_t n = 0; n < p.batch; ++n) {
    pad_image(p, d, x + n * p.in_c * p.in_h * p.in_w, scratch);
    for (int64_t g = 0; g < p.group; ++g) {
      const float* xg = scratch + g * cg * d.h * d.w;
      const float* wg = packed_w + g * group_w;
      if (cg == 1) {
        conv_group_any_stride<kMb, true>(p, d, xg, wg, ep, n, g, y);
      } else {
        conv_group_any_stride<kMb, false>(p, d, xg, wg, ep, n, g, y);
      }
    }
  }
}

}  // namespace

size_t conv2d_direct_packed_weights_floats(const Conv2DParams& p) {
  const int64_t mb = channel_block(p);
  const int64_t mg = p.out_c / p.group;
  return static_cast<size_t>(p.group * ceil_div(mg, mb) * mb * (p.in_c / p.group) * p.k_h * p.k_w);
}

void conv2d_direct_pack_weights(const Conv2DParams& p, const float* w, float* packed) {
  // Layout: [group][channel block][kh][kw][c][mb], channels past the group's end zero.
  const int64_t mb_n = channel_block(p);
  const int64_t mg = p.out_c / p.group;
  const int64_t cg = p.in_c / p.group;
  const int64_t taps = p.k_h * p.k_w;
  for (int64_t g = 0; g < p.group; ++g) {
    for (int64_t b = 0; b < ceil_div(mg, mb_n); ++b) {
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t c = 0; c < cg; ++c) {
          for (int64_t mb = 0; mb < mb_n; ++mb) {
            const int64_t m = b * mb_n + mb;
            // OIHW: w[g * mg + m][c][t]
            *packed++ = m < mg ? w[((g * mg + m) * cg + c) * taps + t] : 0.0f;
          }
        }
      }
    }
  }
}

size_t conv2d_direct_scratch_floats(const Conv2DParams& p) {
  const Padded d = padded_dims(p);
  return static_cast<size_t>(p.in_c * d.h * d.w + d.slack);
}

void conv2d_direct(const Conv2DParams& p, const float* x, const float* packed_w,
                   const ConvEpilogue& ep, float* y, float* scratch) {
  if (channel_block(p) == 4) {
    conv_direct_with<4>(p, x, packed_w, ep, y, scratch);
  } else {
    conv_direct_with<1>(p, x, packed_w, ep, y, scratch);
  }
}

bool conv2d_is_pointwise(const Conv2DParams& p) {
  return p.k_h == 1 && p.k_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
}

size_t conv2d_pointwise_packed_weights_floats(const Conv2DParams& p) {
  return static_cast<size_t>(p.group) * gemm_packed_a_floats(p.out_c / p.group, p.in_c / p.group);
}

void conv2d_pointwise_pack_weights(const Conv2DParams& p, const float* w, float* packed) {
  const int64_t mg = p.out_c / p.group;
  const int64_t cg = p.in_c / p.group;
  const size_t per_group = gemm_packed_a_floats(mg, cg);
  for (int64_t g = 0; g < p.group; ++g) {
    gemm_pack_a(MatrixRef{w + g * mg * cg, cg, 1}, mg, cg, packed + g * per_group);
  }
}

size_t conv2d_pointwise_scratch_floats(const Conv2DParams& p) {
  const GemmShape s{p.out_c / p.group, p.in_h * p.in_w, p.in_c / p.group, 1.0f, p.in_h * p.in_w};
  return gemm_scratch_floats(s, /*a_packed=*/true, /*b_packed=*/false);
}

void conv2d_pointwise(const Conv2DParams& p, const float* x, const float* packed_w,
                      const ConvEpilogue& ep, float* y, float* scratch) {
  const int64_t mg = p.out_c / p.group;
  const int64_t cg = p.in_c / p.group;
  const int64_t hw = p.in_h * p.in_w;
  const GemmShape s{mg, hw, cg, 1.0f, hw};
  const size_t per_group = gemm_packed_a_floats(mg, cg);
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.group; ++g) {
      const int64_t y_offset = (n * p.out_c + g * mg) * hw;
      GemmOperand a{{}, packed_w + g * per_group};
      GemmOperand b{MatrixRef{x + (n * p.in_c + g * cg) * hw, hw, 1}, nullptr};
      GemmEpilogue gep;
      gep.row_bias = ep.bias != nullptr ? ep.bias + g * mg : nullptr;
      if (ep.residual != nullptr) {
        gep.addend = ep.residual + y_offset;
        gep.addend_rs = hw;
        gep.addend_cs = 1;
      }
      gep.activate = ep.activate;
      gep.activate_ctx = ep.activate_ctx;
      gemm(s, a, b, y + y_offset, gep, scratch);
    }
  }
}

}  // namespace kiln::kernels::cpu
