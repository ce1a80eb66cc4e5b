#pragma once
// Portable kernels on the blocked nChw16c layout (kernels/ref/layout.h): the reorders at the
// layout's boundaries, and for the layers between blocked convolutions a squeeze-and-excitation's
// pooling and channel scale. Loops over whole
// 16-lane blocks, which the compiler vectorizes; ranges of planes (one image's channel block) so
// that callers split them over threads.
#include <cstdint>

#include "kernels/cpu/pool.h"

namespace kiln::kernels::cpu {

// One channel block: x, `lanes` (<= 16) NCHW planes of hw pixels -> y [hw][16], the lanes past
// `lanes` zero; and back. In tiles of 16 pixels, so that each output line is written whole.
void to_nchw16c_block(const float* x, int64_t lanes, int64_t hw, float* y);
void from_nchw16c_block(const float* x, int64_t lanes, int64_t hw, float* y);

// y[plane][16] = the mean over hw pixels of x[plane][pixel][16], planes [begin, end).
void global_avg_pool_nchw16c(const float* x, int64_t hw, float* y, int64_t begin, int64_t end);

// y[plane][pixel][16] = x[plane][pixel][16] * s[plane'][16] for planes [begin, end), where plane
// = image * blocks + block and plane' = (s_per_image ? image : 0) * blocks + block.
void mul_nchw16c(const float* x, const float* s, bool s_per_image, int64_t blocks, int64_t hw,
                 float* y, int64_t begin, int64_t end);

// MaxPool on blocked planes: p.planes = images x channel blocks, each lane pooled alone; output
// rows [row_begin, row_end) of pool2d_rows(p), numbered row by row with the plane fastest (row r
// is row r / planes of plane r % planes). As max_pool2d: NaN inputs are skipped, a window
// wholly in the padding gives lowest().
void max_pool_nchw16c(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                      int64_t row_end);

}  // namespace kiln::kernels::cpu
