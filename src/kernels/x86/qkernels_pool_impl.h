#pragma once
// uint8 max pooling with AVX-512 BW behind qkernels.h (qmax_pool_run): included only by
// qkernels_vnni.cc. See qkernels.h for the method.

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "base/int_math.h"
#include "kernels/x86/qkernels.h"

namespace kiln::kernels::x86 {
namespace {

inline __mmask64 qpool_lanes(int64_t n) {
  return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
}

// buf[pad_left + c] = the max of input column c over the window's valid rows (0 when none).
inline void qpool_rows_max(const cpu::Pool2DParams& p, const uint8_t* xp, int64_t oh,
                           uint8_t* buf) {
  const int64_t h0 = oh * p.stride_h - p.pad_top;
  const int64_t kh_lo = h0 >= 0 ? 0 : ceil_div(-h0, p.dil_h);
  const int64_t kh_hi = std::min(p.k_h, ceil_div(p.in_h - h0, p.dil_h));
  for (int64_t c = 0; c < p.in_w; c += 64) {
    const __mmask64 m = qpool_lanes(p.in_w - c);
    __m512i v = _mm512_setzero_si512();
    for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
      v = _mm512_max_epu8(v, _mm512_maskz_loadu_epi8(m, xp + (h0 + kh * p.dil_h) * p.in_w + c));
    }
    _mm512_storeu_si512(buf + p.pad_left + c, v);
  }
}

// even[i] = buf[2 i], odd[i] = buf[2 i + 1] for i < n (a multiple of 64).
inline void qpool_split_phases(const uint8_t* buf, int64_t n, uint8_t* even, uint8_t* odd) {
  const __m512i low = _mm512_set1_epi16(0x00FF);
  // packus interleaves its sources per 128-bit lane; the qword permutation restores the order.
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (int64_t i = 0; i < n; i += 64) {
    const __m512i a = _mm512_loadu_si512(buf + 2 * i);
    const __m512i b = _mm512_loadu_si512(buf + 2 * i + 64);
    const __m512i e = _mm512_packus_epi16(_mm512_and_si512(a, low), _mm512_and_si512(b, low));
    const __m512i o = _mm512_packus_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8));
    _mm512_storeu_si512(even + i, _mm512_permutexvar_epi64(order, e));
    _mm512_storeu_si512(odd + i, _mm512_permutexvar_epi64(order, o));
  }
}

// Rows go through the three steps (vertical max, phase split, taps) kQPoolGroup at a time, each
// step for the whole group before the next: a step's loads then read buffers stored a group of
// rows earlier. Row by row, the split's aligned loads met the vertical pass's stores (offset by
// pad_left) still in the store buffer, which cannot forward to them: ResNet-50's max pool spent
// a third of its time on that one load (perf annotate, 2026-12-07).
inline constexpr int64_t kQPoolGroup = 8;

void qmax_pool_rows(const cpu::Pool2DParams& p, const uint8_t* x, uint8_t* y, int64_t begin,
                    int64_t end) {
  const int64_t bytes = qmax_pool_buf_bytes(p), half = bytes / 2;
  alignas(64) uint8_t buf[kQPoolGroup * kQMaxPoolBufBytes];
  alignas(64) uint8_t even[kQPoolGroup * kQMaxPoolBufBytes / 2];
  alignas(64) uint8_t odd[kQPoolGroup * kQMaxPoolBufBytes / 2];
  std::memset(buf, 0, static_cast<size_t>(kQPoolGroup * bytes));  // the padding, for good
  const int64_t reach = (p.k_w - 1) * p.dil_w;
  const int64_t halves = round_up(round_up(p.out_w, 64) + reach / 2 + 1, 64);
  for (int64_t r0 = begin; r0 < end; r0 += kQPoolGroup) {
    const int64_t n = std::min(kQPoolGroup, end - r0);
    for (int64_t g = 0; g < n; ++g) {
      const int64_t r = r0 + g;
      qpool_rows_max(p, x + (r % p.planes) * p.in_h * p.in_w, r / p.planes, buf + g * bytes);
    }
    if (p.stride_w == 2) {
      for (int64_t g = 0; g < n; ++g) {
        qpool_split_phases(buf + g * bytes, halves, even + g * half, odd + g * half);
      }
    }
    for (int64_t g = 0; g < n; ++g) {
      const int64_t r = r0 + g, plane = r % p.planes, oh = r / p.planes;
      uint8_t* yr = y + (plane * p.out_h + oh) * p.out_w;
      const uint8_t *row = buf + g * bytes, *ev = even + g * half, *od = odd + g * half;
      for (int64_t o = 0; o < p.out_w; o += 64) {
        __m512i v = _mm512_setzero_si512();
        for (int64_t kw = 0; kw < p.k_w; ++kw) {
          const int64_t at = kw * p.dil_w;
          const uint8_t* src =
              p.stride_w == 1 ? row + o + at : (at % 2 == 0 ? ev : od) + o + at / 2;
          v = _mm512_max_epu8(v, _mm512_loadu_si512(src));
        }
        _mm512_mask_storeu_epi8(yr + o, qpool_lanes(p.out_w - o), v);
      }
    }
  }
}

// Channels-last: an output pixel is the max over its window's pixels of C bytes each, 64
// channels a vector. Rows are (image, output row) pairs.
void qmax_pool_nhwc_rows(const cpu::Pool2DParams& p, int64_t channels, const uint8_t* x, uint8_t* y,
                         int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t n = r / p.out_h, oh = r % p.out_h;
    const int64_t ih0 = oh * p.stride_h - p.pad_top;
    const cpu::Range rows = cpu::valid_taps(ih0, p.dil_h, p.k_h, 0, p.in_h);
    const uint8_t* xn = x + n * p.in_h * p.in_w * channels;
    uint8_t* yr = y + (n * p.out_h + oh) * p.out_w * channels;
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      const int64_t iw0 = ow * p.stride_w - p.pad_left;
      const cpu::Range cols = cpu::valid_taps(iw0, p.dil_w, p.k_w, 0, p.in_w);
      for (int64_t c = 0; c < channels; c += 64) {
        const __mmask64 m = qpool_lanes(channels - c);
        __m512i v = _mm512_setzero_si512();
        for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
          const uint8_t* xr = xn + (ih0 + kh * p.dil_h) * p.in_w * channels + c;
          for (int64_t kw = cols.lo; kw < cols.hi; ++kw) {
            v = _mm512_max_epu8(v,
                                _mm512_maskz_loadu_epi8(m, xr + (iw0 + kw * p.dil_w) * channels));
          }
        }
        _mm512_mask_storeu_epi8(yr + ow * channels + c, m, v);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
