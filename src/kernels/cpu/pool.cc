#include "kernels/cpu/pool.h"

#include <algorithm>
#include <limits>

#include "base/int_math.h"
#include "kernels/cpu/vec_util.h"

namespace kiln::kernels::cpu {

Range valid_outputs(int64_t offset, int64_t stride, int64_t begin, int64_t end, int64_t outs) {
  const int64_t lo = std::max<int64_t>(0, ceil_div(begin - offset, stride));
  const int64_t hi = std::min<int64_t>(outs, floor_div(end - 1 - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

Range valid_taps(int64_t start, int64_t dil, int64_t kernel, int64_t begin, int64_t end) {
  const int64_t lo = std::max<int64_t>(0, ceil_div(begin - start, dil));
  const int64_t hi = std::min<int64_t>(kernel, ceil_div(end - start, dil));
  return {lo, std::max(lo, hi)};
}

namespace {

// Folds every valid tap of output row oh into yr with `op`.
template <typename T, typename Op>
void pool_row(const Pool2DParams& p, const T* xp, int64_t oh, T* yr, Op op) {
  const int64_t start_h = oh * p.stride_h - p.pad_top;
  const Range rows = valid_taps(start_h, p.dil_h, p.k_h, 0, p.in_h);
  for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
    const T* xr = xp + (start_h + kh * p.dil_h) * p.in_w;
    for (int64_t kw = 0; kw < p.k_w; ++kw) {
      const int64_t offset = kw * p.dil_w - p.pad_left;  // iw = ow * stride + offset
      const Range cols = valid_outputs(offset, p.stride_w, 0, p.in_w, p.out_w);
      const T* xs = xr + offset;
      if (p.stride_w == 1) {
        for (int64_t ow = cols.lo; ow < cols.hi; ++ow) yr[ow] = op(yr[ow], xs[ow]);
      } else {
        const int64_t s = p.stride_w;
        for (int64_t ow = cols.lo; ow < cols.hi; ++ow) yr[ow] = op(yr[ow], xs[ow * s]);
      }
    }
  }
}

}  // namespace

namespace {

// The running max of pooling: a NaN input never wins (the reference's rule), so no NaN reaches
// the row buffer and the taps' order does not matter.
template <typename T>
T max_op(T acc, T v) {
  return acc < v ? v : acc;
}

// y[o] = the max of buf[o * stride + kw * dil_w] over the taps kw, for o < n. S: the stride as a
// compile-time constant, or 0 for `stride`.
template <typename T, int S>
void max_over_taps(const Pool2DParams& p, const T* buf, int64_t n, int64_t stride, T* y) {
  const int64_t s = S > 0 ? S : stride;
  for (int64_t o = 0; o < n; ++o) y[o] = buf[o * s];
  for (int64_t kw = 1; kw < p.k_w; ++kw) {
    const T* b = buf + kw * p.dil_w;
    for (int64_t o = 0; o < n; ++o) y[o] = max_op(y[o], b[o * s]);
  }
}

// The separable form of max pooling for output row oh, columns [o0, o1): the max over the
// window's valid input rows into `buf` (input column o0 * stride - pad_left + i at i; lowest()
// outside the input), then each output's max over its taps along buf. Both loops run over
// contiguous or evenly strided elements, which the compiler vectorizes (the tap-by-tap form
// read one strided element per comparison: 8x slower on ResNet-50's uint8 stem pooling).
template <typename T>
void max_pool_segment(const Pool2DParams& p, const T* xp, int64_t oh, int64_t o0, int64_t o1,
                      T* buf, T* yr) {
  const int64_t span = (o1 - 1 - o0) * p.stride_w + (p.k_w - 1) * p.dil_w + 1;
  const int64_t c0 = o0 * p.stride_w - p.pad_left;
  const int64_t i_lo = std::clamp<int64_t>(-c0, 0, span);
  const int64_t i_hi = std::clamp<int64_t>(p.in_w - c0, i_lo, span);
  std::fill(buf, buf + span, std::numeric_limits<T>::lowest());
  const int64_t start_h = oh * p.stride_h - p.pad_top;
  const Range rows = valid_taps(start_h, p.dil_h, p.k_h, 0, p.in_h);
  for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
    const T* xr = xp + (start_h + kh * p.dil_h) * p.in_w + c0;
    for (int64_t i = i_lo; i < i_hi; ++i) buf[i] = max_op(buf[i], xr[i]);
  }
  const int64_t n = o1 - o0;
  T* y = yr + o0;
  switch (p.stride_w) {  // a constant stride vectorizes (1 and 2 cover the CNNs)
    case 1:
      return max_over_taps<T, 1>(p, buf, n, 1, y);
    case 2:
      return max_over_taps<T, 2>(p, buf, n, 2, y);
    default:
      return max_over_taps<T, 0>(p, buf, n, p.stride_w, y);
  }
}

template <typename T>
void max_pool2d_typed(const Pool2DParams& p, const T* x, T* y, int64_t row_begin, int64_t row_end) {
  constexpr int64_t kBuf = 4096 / sizeof(T);  // elements of the row buffer on the stack
  const int64_t extent = (p.k_w - 1) * p.dil_w + 1;
  alignas(64) T buf[kBuf];
  const int64_t seg = (kBuf - extent) / p.stride_w + 1;  // outputs per segment
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r % p.planes, oh = r / p.planes;  // see max_pool2d
    const T* xp = x + plane * p.in_h * p.in_w;
    T* yr = y + (plane * p.out_h + oh) * p.out_w;
    if (extent > kBuf) {  // a window wider than the buffer: tap by tap
      std::fill(yr, yr + p.out_w, std::numeric_limits<T>::lowest());
      pool_row(p, xp, oh, yr, max_op<T>);
      continue;
    }
    for (int64_t o0 = 0; o0 < p.out_w; o0 += seg) {
      max_pool_segment(p, xp, oh, o0, std::min(p.out_w, o0 + seg), buf, yr);
    }
  }
}

}  // namespace

void max_pool2d(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                int64_t row_end) {
  max_pool2d_typed(p, x, y, row_begin, row_end);
}
void max_pool2d(const Pool2DParams& p, const uint8_t* x, uint8_t* y, int64_t row_begin,
                int64_t row_end) {
  max_pool2d_typed(p, x, y, row_begin, row_end);
}

size_t avg_pool2d_table_floats(const Pool2DParams& p) {
  return static_cast<size_t>(p.out_h + p.out_w);
}

void avg_pool2d_table(const Pool2DParams& p, bool count_include_pad, float* table) {
  const auto fill = [&](int64_t outs, int64_t stride, int64_t pad, int64_t pad_end, int64_t dil,
                        int64_t kernel, int64_t in, float* out) {
    for (int64_t o = 0; o < outs; ++o) {
      const int64_t start = o * stride - pad;
      const Range r = count_include_pad ? valid_taps(start, dil, kernel, -pad, in + pad_end)
                                        : valid_taps(start, dil, kernel, 0, in);
      const int64_t count = r.hi - r.lo;
      out[o] = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
    }
  };
  fill(p.out_h, p.stride_h, p.pad_top, p.pad_bottom, p.dil_h, p.k_h, p.in_h, table);
  fill(p.out_w, p.stride_w, p.pad_left, p.pad_right, p.dil_w, p.k_w, p.in_w, table + p.out_h);
}

void avg_pool2d(const Pool2DParams& p, const float* table, const float* x, float* y,
                int64_t row_begin, int64_t row_end) {
  const auto add_op = [](float acc, float v) { return acc + v; };
  const float* col_factor = table + p.out_h;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oh = r % p.out_h;
    float* yr = y + r * p.out_w;
    std::fill(yr, yr + p.out_w, 0.0f);
    pool_row(p, x + (r / p.out_h) * p.in_h * p.in_w, oh, yr, add_op);
    const float row_factor = table[oh];
    for (int64_t ow = 0; ow < p.out_w; ++ow) yr[ow] *= row_factor * col_factor[ow];
  }
}

void global_avg_pool(int64_t planes, int64_t size, const float* x, float* y) {
  const float inv = size > 0 ? 1.0f / static_cast<float>(size) : 0.0f;
  for (int64_t i = 0; i < planes; ++i) y[i] = sum_f32(x + i * size, size) * inv;
}

void global_max_pool(int64_t planes, int64_t size, const float* x, float* y) {
  for (int64_t i = 0; i < planes; ++i) y[i] = max_f32(x + i * size, size);
}

}  // namespace kiln::kernels::cpu
