#pragma once
// trtexec's --loadInputs format: the tensor's elements, row-major, in this machine's byte order,
// with nothing before or after them. The file carries no dtype or shape; the caller supplies both
// (from the model's input declaration).

#include <filesystem>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

// Reads a raw tensor. The file size must equal numel * dtype size exactly (InvalidArgument naming
// both byte counts otherwise); bad dims are InvalidArgument too. Bool bytes other than 0 and 1 are
// read as true.
Result<Tensor> read_raw(const std::filesystem::path& path, DType dtype, const Dims& dims);

// Writes the tensor's bytes atomically (see write_file_atomic).
Status write_raw(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace kiln::io
