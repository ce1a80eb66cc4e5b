#include "kernels/cpu/qconv.h"

#include <algorithm>

namespace kiln::kernels::cpu {

void qconv2d_channel_acc(const Conv2DParams& p, const uint8_t* x, int32_t x_zero, const int8_t* w,
                         int64_t m, int32_t* acc) {
  const int64_t cg = p.in_c / p.group, mg = p.out_c / p.group, g = m / mg;
  std::fill(acc, acc + p.out_h * p.out_w, 0);
  for (int64_t c = 0; c < cg; ++c) {
    const uint8_t* xc = x + (g * cg + c) * p.in_h * p.in_w;
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      for (int64_t kw = 0; kw < p.k_w; ++kw) {
        const int32_t wv = w[(c * p.k_h + kh) * p.k_w + kw];
        if (wv == 0) continue;
        // Output columns whose input column ow * s - pad + kw * d is inside the row.
        const int64_t shift = kw * p.dil_w - p.pad_left;
        const int64_t lo = shift >= 0 ? 0 : (-shift + p.stride_w - 1) / p.stride_w;
        const int64_t hi =
            p.in_w - 1 - shift < 0 ? 0 : std::min(p.out_w, (p.in_w - 1 - shift) / p.stride_w + 1);
        for (int64_t oh = 0; oh < p.out_h; ++oh) {
          const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
          if (ih < 0 || ih >= p.in_h) continue;
          const uint8_t* row = xc + ih * p.in_w;
          int32_t* a = acc + oh * p.out_w;
          if (p.stride_w == 1) {
            for (int64_t ow = lo; ow < hi; ++ow) a[ow] += wv * (row[ow + shift] - x_zero);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) {
              a[ow] += wv * (row[ow * p.stride_w + shift] - x_zero);
            }
          }
        }
      }
    }
  }
}

void qgemm_row_acc(int64_t k, int64_t n, const uint8_t* a, int32_t a_zero, const int8_t* b,
                   int32_t* acc) {
  std::fill(acc, acc + n, 0);
  for (int64_t p = 0; p < k; ++p) {
    const int32_t av = a[p] - a_zero;
    if (av == 0) continue;
    const int8_t* bp = b + p * n;
    for (int64_t j = 0; j < n; ++j) acc[j] += av * bp[j];
  }
}

}  // namespace kiln::kernels::cpu
