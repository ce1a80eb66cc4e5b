#include "kernels/cpu/resize.h"

#include <algorithm>

namespace kiln::kernels::cpu {
namespace {

// The input row output row `oy` reads: one input row in place, or the weighted sum of several in
// `scratch`. nullptr when the row has no taps.
const float* source_row(const Resize2DParams& p, const float* plane, int64_t oy, float* scratch) {
  const int64_t t0 = p.rows.start[oy];
  const int64_t t1 = p.rows.start[oy + 1];
  if (t1 == t0) return nullptr;
  if (t1 - t0 == 1 && p.rows.weight[t0] == 1.0f) return plane + p.rows.index[t0] * p.in_w;
  std::fill(scratch, scratch + p.in_w, 0.0f);
  for (int64_t t = t0; t < t1; ++t) {
    const float w = p.rows.weight[t];
    const float* src = plane + p.rows.index[t] * p.in_w;
    for (int64_t i = 0; i < p.in_w; ++i) scratch[i] += w * src[i];
  }
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

}  // namespace

bool single_unit_taps(const ResizeAxisTaps& taps, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    if (taps.start[o + 1] - taps.start[o] != 1 || taps.weight[taps.start[o]] != 1.0f) return false;
  }
  return true;
}

size_t resize2d_scratch_floats(const Resize2DParams& p) { return static_cast<size_t>(p.in_w); }

void resize2d(const Resize2DParams& p, const float* x, float* y, float* scratch, int64_t row_begin,
              int64_t row_end) {
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
