#include "kernels/cpu/resize.h"

#include <algorithm>

namespace kiln::kernels::cpu {
namespace {

// dst[0, width) = the weighted sum of the rows (`width` floats apart from `rows`) that output row
// oy's taps [t0, t1) read, t1 > t0.
void sum_tap_rows(const Resize2DParams& p, int64_t t0, int64_t t1, const float* rows, int64_t width,
                  float* dst) {
  const float w0 = p.rows.weight[t0];
  const float* s0 = rows + p.rows.index[t0] * width;
  for (int64_t i = 0; i < width; ++i) dst[i] = w0 * s0[i];
  for (int64_t t = t0 + 1; t < t1; ++t) {
    const float w = p.rows.weight[t];
    const float* st = rows + p.rows.index[t] * width;
    for (int64_t i = 0; i < width; ++i) dst[i] += w * st[i];
  }
}

// The input row output row `oy` reads: one input row in place, or the weighted sum of several in
// `scratch`. nullptr when the row has no taps.
const float* source_row(const Resize2DParams& p, const float* plane, int64_t oy, float* scratch) {
  const int64_t t0 = p.rows.start[oy];
  const int64_t t1 = p.rows.start[oy + 1];
  if (t1 == t0) return nullptr;
  if (t1 - t0 == 1 && p.rows.weight[t0] == 1.0f) return plane + p.rows.index[t0] * p.in_w;
  sum_tap_rows(p, t0, t1, plane, p.in_w, scratch);
  return scratch;
}

void interpolate_columns(const Resize2DParams& p, const float* src, float* dst) {
  const ResizeAxisTaps& c = p.cols;
  if (p.cols_gather) {
    for (int64_t ox = 0; ox < p.out_w; ++ox) dst[ox] = src[c.index[ox]];
    return;
  }
  for (int64_t ox = 0; ox < p.out_w; ++ox) {
    const int64_t t0 = c.start[ox];
    const int64_t t1 = c.start[ox + 1];
    float v = t1 == t0 ? p.extrapolation_value : 0.0f;
    for (int64_t t = t0; t < t1; ++t) v += c.weight[t] * src[c.index[t]];
    dst[ox] = v;
  }
}

// Output rows [row_begin, row_end) the columns first: each plane's input rows interpolated
// across columns into scratch once (in_h x out_w), then every output row is the weighted sum of
// its taps' scratch rows, whole contiguous rows that vectorize. DeepLabV3's 16x bilinear upsampling
// interpolated 16 times as many columns the other way round (1.75 ms on one thread).
void resize_columns_first(const Resize2DParams& p, const float* x, float* y, float* scratch,
                          int64_t row_begin, int64_t row_end) {
  int64_t ready = -1;  // the plane whose columns scratch holds
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t plane = row / p.out_h, oy = row % p.out_h;
    if (plane != ready) {
      for (int64_t iy = 0; iy < p.in_h; ++iy) {
        interpolate_columns(p, x + (plane * p.in_h + iy) * p.in_w, scratch + iy * p.out_w);
      }
      ready = plane;
    }
    float* yr = y + row * p.out_w;
    const int64_t t0 = p.rows.start[oy], t1 = p.rows.start[oy + 1];
    if (t1 == t0) {
      std::fill(yr, yr + p.out_w, p.extrapolation_value);
      continue;
    }
    sum_tap_rows(p, t0, t1, scratch, p.out_w, yr);
  }
}

}  // namespace

bool resize2d_columns_first(const Resize2DParams& p) {
  constexpr int64_t kMaxScratchFloats = 256 * 1024;
  if (p.out_h <= p.in_h || p.in_h * p.out_w > kMaxScratchFloats) return false;
  for (int64_t o = 0; o < p.out_w; ++o) {
    if (p.cols.start[o + 1] == p.cols.start[o]) return false;
  }
  return true;
}

bool single_unit_taps(const ResizeAxisTaps& taps, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    if (taps.start[o + 1] - taps.start[o] != 1 || taps.weight[taps.start[o]] != 1.0f) return false;
  }
  return true;
}

size_t resize2d_scratch_floats(const Resize2DParams& p) {
  return static_cast<size_t>(p.columns_first ? p.in_h * p.out_w : p.in_w);
}

void resize2d(const Resize2DParams& p, const float* x, float* y, float* scratch, int64_t row_begin,
              int64_t row_end) {
  if (p.columns_first) return resize_columns_first(p, x, y, scratch, row_begin, row_end);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t plane = row / p.out_h, oy = row % p.out_h;
    const float* src = source_row(p, x + plane * p.in_h * p.in_w, oy, scratch);
    float* yr = y + row * p.out_w;
    if (src == nullptr) {
      std::fill(yr, yr + p.out_w, p.extrapolation_value);
    } else {
      interpolate_columns(p, src, yr);
    }
  }
}

}  // namespace kiln::kernels::cpu
