#include "kernels/ref/movement.h"

#include <cassert>
#include <cstddef>
#include <cstring>

namespace kiln::kernels::ref {
namespace {

const char* at(const void* base, int64_t index, size_t elem_size) {
  return static_cast<const char*>(base) + index * static_cast<int64_t>(elem_size);
}
char* at(void* base, int64_t index, size_t elem_size) {
  return static_cast<char*>(base) + index * static_cast<int64_t>(elem_size);
}

// Advances a row-major coordinate over `dims`; returns false after the last one.
bool next_coord(std::vector<int64_t>& coord, const Dims& dims) {
  for (size_t k = dims.size(); k-- > 0;) {
    if (++coord[k] < dims[k]) return true;
    coord[k] = 0;
  }
  return false;
}

// Maps a padded coordinate to the source coordinate in a dim of size n (n > 0), numpy-style.
int64_t pad_source(int64_t c, int64_t n, PadMode mode) {
  switch (mode) {
    case PadMode::kEdge:
      return c < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      return ((c % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t r = ((c % period) + period) % period;
      return r < n ? r : period - r;
    }
    case PadMode::kConstant:
      break;
  }
  return -1;
}

}  // namespace

std::vector<int64_t> row_major_strides(const Dims& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  return strides;
}

void strided_copy(const void* in, size_t elem_size, const StridedView& view, void* out) {
  assert(view.dims.size() == view.strides.size());
  if (dims_numel(view.dims) == 0) return;
  std::vector<int64_t> coord(view.dims.size(), 0);
  int64_t o = 0;
  do {
    int64_t src = view.offset;
    for (size_t k = 0; k < coord.size(); ++k) src += coord[k] * view.strides[k];
    std::memcpy(at(out, o++, elem_size), at(in, src, elem_size), elem_size);
  } while (next_coord(coord, view.dims));
}

void transpose(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> perm,
               void* out) {
  assert(perm.size() == in_dims.size());
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  StridedView view;
  for (int64_t p : perm) {
    view.dims.push_back(in_dims[static_cast<size_t>(p)]);
    view.strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  strided_copy(in, elem_size, view, out);
}

void slice(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> starts,
           std::span<const int64_t> steps, const Dims& out_dims, void* out) {
  assert(starts.size() == in_dims.size() && steps.size() == in_dims.size());
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  StridedView view{0, out_dims, {}};
  for (size_t k = 0; k < in_dims.size(); ++k) {
    if (out_dims[k] > 0) view.offset += starts[k] * in_strides[k];
    view.strides.push_back(steps[k] * in_strides[k]);
  }
  strided_copy(in, elem_size, view, out);
}

void broadcast_to(const void* in, size_t elem_size, const Dims& in_dims, const Dims& out_dims,
                  void* out) {
  assert(in_dims.size() <= out_dims.size());
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  StridedView view{0, out_dims, std::vector<int64_t>(out_dims.size(), 0)};
  const size_t lead = out_dims.size() - in_dims.size();
  for (size_t j = 0; j < in_dims.size(); ++j) {
    assert(in_dims[j] == 1 || in_dims[j] == out_dims[lead + j]);
    view.strides[lead + j] = in_dims[j] == 1 ? 0 : in_strides[j];
  }
  strided_copy(in, elem_size, view, out);
}

void tile(const void* in, size_t elem_size, const Dims& in_dims, std::span<const int64_t> repeats,
          void* out) {
  assert(repeats.size() == in_dims.size());
  Dims out_dims(in_dims.size());
  for (size_t k = 0; k < in_dims.size(); ++k) out_dims[k] = in_dims[k] * repeats[k];
  if (dims_numel(out_dims) == 0) return;
  if (in_dims.empty()) {
    std::memcpy(out, in, elem_size);
    return;
  }
  // Whole input rows (innermost axis) are copied, repeats.back() times each, so the work is one
  // memcpy per output row rather than per element.
  const size_t last = in_dims.size() - 1;
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  const Dims outer(out_dims.begin(), out_dims.begin() + static_cast<std::ptrdiff_t>(last));
  const size_t row_bytes = static_cast<size_t>(in_dims[last]) * elem_size;
  std::vector<int64_t> coord(last, 0);
  char* dst = static_cast<char*>(out);
  do {
    int64_t src = 0;
    for (size_t k = 0; k < last; ++k) src += (coord[k] % in_dims[k]) * in_strides[k];
    for (int64_t r = 0; r < repeats[last]; ++r, dst += row_bytes) {
      std::memcpy(dst, at(in, src, elem_size), row_bytes);
    }
  } while (next_coord(coord, outer));
}

void concat(std::span<const void* const> ins, std::span<const Dims> in_dims, size_t elem_size,
            int64_t axis, void* out) {
  assert(ins.size() == in_dims.size() && !ins.empty());
  const auto ax = static_cast<size_t>(axis);
  int64_t outer = 1;
  for (size_t k = 0; k < ax; ++k) outer *= in_dims[0][k];
  // Each input contributes a contiguous block of dims[axis] * inner elements per outer index.
  std::vector<int64_t> block(ins.size());
  int64_t out_block = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    block[i] = 1;
    for (size_t k = ax; k < in_dims[i].size(); ++k) block[i] *= in_dims[i][k];
    out_block += block[i];
  }
  for (int64_t o = 0; o < outer; ++o) {
    int64_t dst = o * out_block;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (block[i] == 0) continue;
      std::memcpy(at(out, dst, elem_size), at(ins[i], o * block[i], elem_size),
                  static_cast<size_t>(block[i]) * elem_size);
      dst += block[i];
    }
  }
}

void pad(const void* in, size_t elem_size, const Dims& in_dims, const PadParams& p,
         const Dims& out_dims, void* out) {
  const size_t rank = in_dims.size();
  assert(p.begin.size() == rank && p.end.size() == rank && out_dims.size() == rank);
  if (dims_numel(out_dims) == 0) return;
  // Per axis: the cropped source range [lo, lo + n) and the positive leading pad.
  Dims lo(rank), n(rank), lead(rank);
  for (size_t k = 0; k < rank; ++k) {
    lo[k] = p.begin[k] < 0 ? -p.begin[k] : 0;
    lead[k] = p.begin[k] > 0 ? p.begin[k] : 0;
    n[k] = in_dims[k] - lo[k] - (p.end[k] < 0 ? -p.end[k] : 0);
  }
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> coord(rank, 0);
  int64_t o = 0;
  do {
    int64_t src = 0;
    bool inside = true;
    for (size_t k = 0; k < rank && inside; ++k) {
      int64_t c = coord[k] - lead[k];
      if (c < 0 || c >= n[k]) {
        if (p.mode == PadMode::kConstant) {
          inside = false;
          break;
        }
        c = pad_source(c, n[k], p.mode);
      }
      src += (lo[k] + c) * in_strides[k];
    }
    const void* from = inside ? at(in, src, elem_size) : p.constant;
    std::memcpy(at(out, o++, elem_size), from, elem_size);
  } while (next_coord(coord, out_dims));
}

void gather(const void* in, size_t elem_size, int64_t outer, int64_t axis_dim, int64_t inner,
            std::span<const int64_t> indices, void* out) {
  const auto n = static_cast<int64_t>(indices.size());
  const size_t row = static_cast<size_t>(inner) * elem_size;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = indices[static_cast<size_t>(j)];
      assert(idx >= 0 && idx < axis_dim);
      if (row == 0) continue;
      std::memcpy(at(out, (o * n + j) * inner, elem_size),
                  at(in, (o * axis_dim + idx) * inner, elem_size), row);
    }
  }
}

void gather_elements(const void* in, size_t elem_size, const Dims& in_dims,
                     std::span<const int64_t> indices, const Dims& idx_dims, int64_t axis,
                     void* out) {
  if (dims_numel(idx_dims) == 0) return;
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  const auto ax = static_cast<size_t>(axis);
  std::vector<int64_t> coord(idx_dims.size(), 0);
  int64_t o = 0;
  do {
    int64_t src = 0;
    for (size_t k = 0; k < coord.size(); ++k) {
      const int64_t c = k == ax ? indices[static_cast<size_t>(o)] : coord[k];
      assert(c >= 0 && c < in_dims[k]);
      src += c * in_strides[k];
    }
    std::memcpy(at(out, o++, elem_size), at(in, src, elem_size), elem_size);
  } while (next_coord(coord, idx_dims));
}

void gather_nd(const void* in, size_t elem_size, const Dims& in_dims,
               std::span<const int64_t> indices, const Dims& idx_dims, int64_t batch_dims,
               void* out) {
  const auto b = static_cast<size_t>(batch_dims);
  const int64_t m = idx_dims.back();
  int64_t batches = 1;
  for (size_t k = 0; k < b; ++k) batches *= in_dims[k];
  int64_t tuples_per_batch = 1;  // index tuples per batch
  for (size_t k = b; k + 1 < idx_dims.size(); ++k) tuples_per_batch *= idx_dims[k];
  int64_t slice_size = 1;  // elements each tuple selects
  for (size_t k = b + static_cast<size_t>(m); k < in_dims.size(); ++k) slice_size *= in_dims[k];
  const std::vector<int64_t> strides = row_major_strides(in_dims);
  const int64_t batch_stride = b == 0 ? 0 : strides[b - 1];
  int64_t o = 0;
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t t = 0; t < tuples_per_batch; ++t, o += slice_size) {
      const int64_t* tuple = &indices[static_cast<size_t>((bi * tuples_per_batch + t) * m)];
      int64_t src = bi * batch_stride;
      for (int64_t j = 0; j < m; ++j) src += tuple[j] * strides[b + static_cast<size_t>(j)];
      if (slice_size > 0) {
        std::memcpy(at(out, o, elem_size), at(in, src, elem_size),
                    static_cast<size_t>(slice_size) * elem_size);
      }
    }
  }
}

void trilu(const void* in, size_t elem_size, const Dims& dims, int64_t k, bool upper, void* out) {
  assert(dims.size() >= 2);
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims.back();
  const int64_t mats = rows * cols == 0 ? 0 : dims_numel(dims) / (rows * cols);
  for (int64_t mi = 0; mi < mats; ++mi) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = (mi * rows + r) * cols + c;
        const bool keep = upper ? c - r >= k : c - r <= k;
        if (keep) {
          std::memcpy(at(out, i, elem_size), at(in, i, elem_size), elem_size);
        } else {
          std::memset(at(out, i, elem_size), 0, elem_size);
        }
      }
    }
  }
}

}  // namespace kiln::kernels::ref
