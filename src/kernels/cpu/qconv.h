#pragma once
// The integer half of kiln.QConv and kiln.QGemm, portable: exact int32 sums of
// (x - x_zero) * w, written so that the compiler vectorizes the loops over output columns. The
// caller (tactics/builtin_quant.cc) applies the float epilogue (kernels/ref/qconv.h's
// quant_epilogue) to each run of sums. No allocation: the caller passes the accumulators.

#include <cstdint>

#include "kernels/cpu/conv.h"

namespace kiln::kernels::cpu {

// acc[oh * out_w + ow] for output channel m of one image (x: the image's first channel), over the
// 2-D geometry p (1-D: in_h = k_h = out_h = 1); w: W[m] ([in_c / group, k_h, k_w]). Positions in
// the padding add nothing (they read as x_zero).
void qconv2d_channel_acc(const Conv2DParams& p, const uint8_t* x, int32_t x_zero, const int8_t* w,
                         int64_t m, int32_t* acc);

// acc[j] = sum_p (a[p] - a_zero) * b[p * n + j] for j < n: one row of A [., k] against B [k, n].
void qgemm_row_acc(int64_t k, int64_t n, const uint8_t* a, int32_t a_zero, const int8_t* b,
                   int32_t* acc);

}  // namespace kiln::kernels::cpu
