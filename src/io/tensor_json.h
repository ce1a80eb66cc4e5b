#pragma once
// trtexec's --exportOutput JSON: an array with one object per output,
//   [{"name": "prob", "dimensions": "1x1000", "values": [0.25, ...]}, ...]
// "dimensions" joins the dims with 'x' ("" for a 0-d tensor, as trtexec prints it); "values" are
// the elements in row-major order.
//
// Differences from trtexec, chosen so that the file is valid JSON that round-trips exactly:
//  - floats are printed with the fewest digits that read back as the same value (float16 and
//    bfloat16 values are widened to float32 first; float64 keeps double precision);
//  - NaN and infinities, which JSON cannot represent, are the strings "nan", "inf" and "-inf";
//  - bool elements are true/false, integers are JSON integers.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::io {

// One output object. Unsupported for string and undefined tensors.
Result<nlohmann::json> tensor_to_json(const Tensor& tensor, std::string_view name);

// The array of output objects; names[i] names tensors[i] (InvalidArgument when the counts differ).
Result<nlohmann::json> outputs_to_json(std::span<const std::string> names,
                                       std::span<const Tensor> tensors);

// Writes outputs_to_json(...) to `path` atomically, indented like trtexec's file.
Status write_outputs_json(const std::filesystem::path& path, std::span<const std::string> names,
                          std::span<const Tensor> tensors);

}  // namespace kiln::io
