#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading accepts the dtypes float16/32/64, int8/16/32/64, uint8/16/32/64 and bool in either byte
// order (big-endian data is converted), Fortran-ordered arrays (transposed into row-major), 0-d
// and zero-size arrays. Bytes after the array data are ignored, as numpy itself does: np.save may
// append several arrays to one open file, and np.load reads the first. Anything else wrong with the
// bytes returns a Status (Corrupt for malformed files, Unsupported for valid files kiln cannot
// represent) whose message starts with the file name; no input can make the reader crash or read
// out of bounds. Bool bytes other than 0 and 1 are read as true.
//
// Writing produces a version 1.0 file (2.0 when the header needs more than 65535 bytes) with a
// little-endian, C-ordered array and the header padded so the data starts on a 64-byte boundary.

#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

// Reads a .npy file. NotFound/IoError when the file cannot be read.
Result<Tensor> read_npy(const std::filesystem::path& path);

// Parses the bytes of a .npy file; `source_name` names it in error messages.
Result<Tensor> parse_npy(std::string_view bytes, std::string_view source_name);

// The bytes of a .npy file holding `tensor`. Unsupported for dtypes numpy lacks (bfloat16, string).
Result<std::string> serialize_npy(const Tensor& tensor);

// Writes serialize_npy(tensor) atomically (see write_file_atomic): on failure no partial file
// exists under `path`, and a previous file there is kept.
Status write_npy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace kiln::io
