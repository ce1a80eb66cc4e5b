#pragma once
// The header of a NumPy .npy file: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// parsed by a small recursive-descent reader of Python literals (strings, ints, True/False/None,
// tuples, lists, dicts), so that spacing, quoting, key order and trailing commas don't matter.
// Internal to kiln_io; exposed for tests.

#include <string>
#include <string_view>

#include "base/dtype.h"
#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

struct NpyHeader {
  DType dtype = DType::kUndefined;
  bool swap_bytes = false;  // the data's byte order differs from this machine's
  bool fortran_order = false;
  Dims shape;
};

// Parses the dict text (the bytes after the length field, padding and newline included). Errors
// (Corrupt for malformed text, Unsupported for valid but unsupported dtypes) carry no file name;
// the caller adds it.
Result<NpyHeader> parse_npy_header_dict(std::string_view text);

// Maps a descr string ('<f4', '>i8', '|b1', 'u1', ...) to a dtype and whether it needs swapping.
Status parse_npy_descr(std::string_view descr, DType* dtype, bool* swap_bytes);

// The little-endian descr numpy writes for `dtype` ('<f4', '|b1', ...); Unsupported for dtypes
// numpy has no equivalent of (bfloat16, string).
Result<std::string> npy_descr_for(DType dtype);

}  // namespace kiln::io
