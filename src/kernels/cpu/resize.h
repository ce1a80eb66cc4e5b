#pragma once
// Resize of the two innermost axes of [planes, in_h, in_w] to [planes, out_h, out_w], separable:
// each output row is first interpolated across input rows into a scratch row (or read in place
// when it is one input row), then across columns. What each output coordinate reads is a table of
// taps (input index, weight) per axis, computed once per shape from the reference's
// (kernels/ref/resize.h resize_axis_taps), so nearest, linear and cubic modes, every coordinate
// transformation and antialiasing all run through the same loops.

#include <cstddef>
#include <cstdint>

namespace kiln::kernels::cpu {

// Taps of the output coordinates of one axis, CSR: coordinate o sums weight[t] * in[index[t]] for t
// in [start[o], start[o + 1]); a coordinate with no taps gives the extrapolation value.
struct ResizeAxisTaps {
  const int64_t* start = nullptr;  // out + 1 entries
  const int64_t* index = nullptr;
  const float* weight = nullptr;
};

struct Resize2DParams {
  int64_t planes = 1;
  int64_t in_h = 1;
  int64_t in_w = 1;
  int64_t out_h = 1;
  int64_t out_w = 1;
  ResizeAxisTaps rows;
  ResizeAxisTaps cols;
  // Every output column reads one input column with weight 1 (nearest modes): a gather, without
  // the taps' loop (YOLOv8's 2x upsampling ran 1.5 ns an element through it).
  bool cols_gather = false;
  // Upsampling rows of a small plane: the columns first, on each input row of a plane into the
  // scratch, then each output row a weighted sum of whole scratch rows (resize2d_columns_first).
  bool columns_first = false;
  float extrapolation_value = 0.0f;
};

// Whether columns_first suits p: more output rows than input rows, an in_h x out_w scratch of at
// most 1 MiB, and every output column inside the input (so that no extrapolated column is
// re-weighted by the rows' taps).
bool resize2d_columns_first(const Resize2DParams& p);

// Whether `taps` of `out` coordinates each read one input coordinate with weight 1.
bool single_unit_taps(const ResizeAxisTaps& taps, int64_t out);

// Scratch for one resize2d call (one thread's): an input row, or with columns_first a plane of
// in_h rows of out_w.
size_t resize2d_scratch_floats(const Resize2DParams& p);
// Output rows [row_begin, row_end) of the planes * out_h ones.
void resize2d(const Resize2DParams& p, const float* x, float* y, float* scratch, int64_t row_begin,
              int64_t row_end);

}  // namespace kiln::kernels::cpu
