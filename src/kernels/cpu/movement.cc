#include "kernels/cpu/movement.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace kiln::kernels::cpu {
namespace {

constexpr int64_t kTile = 32;
// Contiguous runs up to this many elements are copied 8 at a time by moves the compiler inlines:
// with a call to memcpy for each of a ViT's 16-float patch rows its patches took 58 us on one
// thread of the Zen 3 host, 41 us so.
constexpr int64_t kShortRun = 64;

// Calls fn(in_offset, out_offset) for every index of the axes [0, rank) other than the ones flagged
// in `skip`, out offsets row-major over plan.dims.
template <typename Fn>
void for_each_outer(const CopyPlan& p, const bool* skip, Fn&& fn) {
  int64_t out_strides[kMaxCopyRank];
  int64_t s = 1;
  for (int k = p.rank - 1; k >= 0; --k) {
    out_strides[k] = s;
    s *= p.dims[k];
  }
  int64_t coord[kMaxCopyRank] = {};
  int64_t in_off = p.offset;
  int64_t out_off = 0;
  while (true) {
    fn(in_off, out_off);
    int k = p.rank - 1;
    for (; k >= 0; --k) {
      if (skip[k]) continue;
      in_off += p.strides[k];
      out_off += out_strides[k];
      if (++coord[k] < p.dims[k]) break;
      in_off -= p.strides[k] * p.dims[k];
      out_off -= out_strides[k] * p.dims[k];
      coord[k] = 0;
    }
    if (k < 0) return;
  }
}

template <typename T>
void copy_rows(const CopyPlan& p, const T* in, T* out) {
  const int last = p.rank - 1;
  const int64_t n = p.dims[last];
  const int64_t s = p.strides[last];
  bool skip[kMaxCopyRank] = {};
  skip[last] = true;
  for_each_outer(p, skip, [&](int64_t in_off, int64_t out_off) {
    const T* src = in + in_off;
    T* dst = out + out_off;
    if (s == 1 && n <= kShortRun) {
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(T));
      for (; i < n; ++i) dst[i] = src[i];
    } else if (s == 1) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i * s];
    }
  });
}

// The innermost output axis reads with stride s while tile_axis reads contiguously: copy in
// kTile x kTile blocks, reading along tile_axis.
template <typename T>
void copy_tiled(const CopyPlan& p, const T* in, T* out) {
  const int last = p.rank - 1;
  const int a_axis = p.tile_axis;
  const int64_t na = p.dims[a_axis];
  const int64_t ni = p.dims[last];
  const int64_t s = p.strides[last];
  int64_t out_sa = 1;  // output stride of tile_axis
  for (int k = a_axis + 1; k < p.rank; ++k) out_sa *= p.dims[k];
  bool skip[kMaxCopyRank] = {};
  skip[last] = true;
  skip[a_axis] = true;
  for_each_outer(p, skip, [&](int64_t in_off, int64_t out_off) {
    for (int64_t a0 = 0; a0 < na; a0 += kTile) {
      const int64_t a1 = std::min(na, a0 + kTile);
      for (int64_t i0 = 0; i0 < ni; i0 += kTile) {
        const int64_t i1 = std::min(ni, i0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          const T* src = in + in_off + i * s;
          T* dst = out + out_off + i;
          for (int64_t a = a0; a < a1; ++a) dst[a * out_sa] = src[a];
        }
      }
    }
  });
}

template <typename T>
void copy_typed(const CopyPlan& p, const void* in, void* out) {
  for (int k = 0; k < p.rank; ++k) {
    if (p.dims[k] == 0) return;
  }
  if (p.tile_axis >= 0) {
    copy_tiled(p, static_cast<const T*>(in), static_cast<T*>(out));
  } else {
    copy_rows(p, static_cast<const T*>(in), static_cast<T*>(out));
  }
}

}  // namespace

bool make_copy_plan(std::span<const int64_t> dims, std::span<const int64_t> strides, int64_t offset,
                    CopyPlan& plan) {
  plan = CopyPlan{};
  plan.offset = offset;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0) {
      plan.rank = 1;
      return true;
    }
    if (dims[k] == 1) continue;
    const int last = plan.rank - 1;
    if (plan.rank > 0 && plan.strides[last] == strides[k] * dims[k]) {
      plan.dims[last] *= dims[k];
      plan.strides[last] = strides[k];
      continue;
    }
    if (plan.rank == kMaxCopyRank) return false;
    plan.dims[plan.rank] = dims[k];
    plan.strides[plan.rank] = strides[k];
    ++plan.rank;
  }
  if (plan.rank == 0) {
    plan.rank = 1;
    plan.dims[0] = 1;
    plan.strides[0] = 1;
  }
  const int last = plan.rank - 1;
  if (plan.strides[last] != 1 && plan.dims[last] > 1) {
    for (int k = 0; k < last; ++k) {
      if (plan.strides[k] == 1 && plan.dims[k] > 1) plan.tile_axis = k;
    }
  }
  return true;
}

void strided_copy(const CopyPlan& plan, size_t elem_size, const void* in, void* out) {
  switch (elem_size) {
    case 1:
      return copy_typed<uint8_t>(plan, in, out);
    case 2:
      return copy_typed<uint16_t>(plan, in, out);
    case 4:
      return copy_typed<uint32_t>(plan, in, out);
    case 8:
      return copy_typed<uint64_t>(plan, in, out);
    default:
      assert(false && "strided_copy: element size without a copy type");
  }
}

int64_t outer_row_elements(const CopyPlan& plan) {
  int64_t n = 1;
  for (int k = 1; k < plan.rank; ++k) n *= plan.dims[k];
  return n;
}

CopyPlan outer_slice(const CopyPlan& plan, int64_t begin, int64_t end) {
  CopyPlan part = plan;
  part.offset += begin * plan.strides[0];
  part.dims[0] = end - begin;
  return part;
}

namespace {

// Calls copy(part, part_offset, whole_offset, count) for the runs, one part's chunk or less each,
// that make up the whole's elements [begin, end).
template <typename F>
void for_each_run(std::span<const int64_t> chunks, int64_t begin, int64_t end, F copy) {
  int64_t row = 0;
  for (int64_t c : chunks) row += c;
  if (row == 0) return;
  int64_t o = begin / row, at = begin % row;
  for (int64_t pos = begin; pos < end; ++o, at = 0) {
    int64_t start = 0;  // the chunk's first element in the row
    for (size_t i = 0; i < chunks.size() && pos < end; start += chunks[i], ++i) {
      if (at >= start + chunks[i]) continue;
      const int64_t off = std::max(at, start) - start;
      const int64_t count = std::min(chunks[i] - off, end - pos);
      copy(i, o * chunks[i] + off, pos, count);
      pos += count;
    }
  }
}

}  // namespace

void concat_range(std::span<const void* const> ins, std::span<const int64_t> chunks,
                  size_t elem_size, void* out, int64_t begin, int64_t end) {
  auto* y = static_cast<unsigned char*>(out);
  for_each_run(chunks, begin, end, [&](size_t i, int64_t from, int64_t to, int64_t n) {
    std::memcpy(y + static_cast<size_t>(to) * elem_size,
                static_cast<const unsigned char*>(ins[i]) + static_cast<size_t>(from) * elem_size,
                static_cast<size_t>(n) * elem_size);
  });
}

void split_range(const void* in, std::span<void* const> outs, std::span<const int64_t> chunks,
                 size_t elem_size, int64_t begin, int64_t end) {
  const auto* x = static_cast<const unsigned char*>(in);
  for_each_run(chunks, begin, end, [&](size_t i, int64_t to, int64_t from, int64_t n) {
    std::memcpy(static_cast<unsigned char*>(outs[i]) + static_cast<size_t>(to) * elem_size,
                x + static_cast<size_t>(from) * elem_size, static_cast<size_t>(n) * elem_size);
  });
}

}  // namespace kiln::kernels::cpu
