#pragma once
// 2-D max and average pooling, NCHW float32 (1-D is in_h = k_h = out_h = 1), and global pooling.
// Window of output (oh, ow): input rows oh * stride_h - pad_top + kh * dil_h and columns likewise;
// positions outside the input are skipped by max pooling and, for average pooling, count towards
// the divisor only with count_include_pad and only inside [-pad, in + pad_end) per axis (as in
// kernels/ref/pool.h). Average pooling accumulates each output row tap by tap with the innermost
// loop over output columns, the valid column range of each tap computed rather than tested per
// element; max pooling is separable (the max over the window's rows, then over its columns).

#include <cstddef>
#include <cstdint>

namespace kiln::kernels::cpu {

struct Pool2DParams {
  int64_t planes = 1;  // batch * channels
  int64_t in_h = 1;
  int64_t in_w = 1;
  int64_t out_h = 1;
  int64_t out_w = 1;
  int64_t k_h = 1;
  int64_t k_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t dil_h = 1;
  int64_t dil_w = 1;
  int64_t pad_top = 0;
  int64_t pad_left = 0;
  int64_t pad_bottom = 0;
  int64_t pad_right = 0;
};

// Window arithmetic shared by the pooling kernels (here and on the blocked layout, nchw16c.h).
struct Range {
  int64_t lo, hi;  // [lo, hi), lo <= hi
};
// Outputs o in [lo, hi) (of outs) whose tap o * stride + offset lies in [begin, end).
Range valid_outputs(int64_t offset, int64_t stride, int64_t begin, int64_t end, int64_t outs);
// Taps k in [lo, hi) (of kernel) of a window starting at `start` whose position start + k * dil
// lies in [begin, end).
Range valid_taps(int64_t start, int64_t dil, int64_t kernel, int64_t begin, int64_t end);

// The kernels compute output rows [row_begin, row_end) of the planes * out_h rows (threads take
// disjoint ranges), plane by plane (row r: plane r / out_h) unless said otherwise.
inline int64_t pool2d_rows(const Pool2DParams& p) { return p.planes * p.out_h; }

// A window lying entirely in the padding gives lowest(), as the reference does; NaN inputs are
// skipped. Row r is output row r / planes of plane r % planes: a thread's range of rows is a band
// of every plane, the band a convolution split over pixels wrote before it and the next one reads
// (INT8 ResNet-50, whose stem splits its rows, 2 threads: the two 1x1 layers after the pooling
// 0.057 -> 0.043 and 0.154 -> 0.145 ms than after plane-major ranges).
void max_pool2d(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                int64_t row_end);
// The same on uint8 (a quantized tensor: the max commutes with the quantization).
void max_pool2d(const Pool2DParams& p, const uint8_t* x, uint8_t* y, int64_t row_begin,
                int64_t row_end);

// The reciprocal divisors of average pooling: out_h row factors then out_w column factors (the
// divisor of (oh, ow) is their product's reciprocal; 0 when a window holds nothing).
size_t avg_pool2d_table_floats(const Pool2DParams& p);
void avg_pool2d_table(const Pool2DParams& p, bool count_include_pad, float* table);
void avg_pool2d(const Pool2DParams& p, const float* table, const float* x, float* y,
                int64_t row_begin, int64_t row_end);

// y[i] = mean / max of x[i * size, (i + 1) * size).
void global_avg_pool(int64_t planes, int64_t size, const float* x, float* y);
void global_max_pool(int64_t planes, int64_t size, const float* x, float* y);

}  // namespace kiln::kernels::cpu
