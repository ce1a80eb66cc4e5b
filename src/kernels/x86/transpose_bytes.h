#pragma once
// The transpose of a matrix of bytes, [rows, cols] -> [cols, rows]: what moving a uint8 tensor
// between NCHW and NHWC is per image (qconv_nhwc's Transposes: [C, H*W] <-> [H*W, C]). In 16 x 16
// blocks of SSE2 unpacks (x86-64's baseline: no other ISA), the edges byte by byte; two to four
// rows (an RGB input) a column at a time, gathered into one word. A generic
// strided copy moves one byte per step through a stride of the other axis: ResNet-50's 64 x 3136
// plane took 0.14 ms that way on 2 threads.

#include <cstdint>

namespace kiln::kernels::x86 {

// out[c * rows + r] = in[r * cols + c] for r in [0, rows) and c in [col_begin, col_end): a
// thread's share of the output rows.
void transpose_bytes(const uint8_t* in, int64_t rows, int64_t cols, int64_t col_begin,
                     int64_t col_end, uint8_t* out);

}  // namespace kiln::kernels::x86
