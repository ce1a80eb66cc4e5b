#pragma once
// ONNX's TensorProto.DataType numbers, used by op attributes (Cast's `to`, EyeLike's `dtype`, ...)
// and by the importer's tensors. The one place that maps them.

#include <cstdint>
#include <string>

#include "base/dtype.h"

namespace kiln::ops {

// kUndefined for numbers kiln has no dtype for (complex, float8, int4, ...).
DType dtype_from_onnx(int64_t onnx_type);
// "float32", "complex64", "float8e4m3fn", ...; "ONNX type <n>" for numbers ONNX does not define.
std::string onnx_dtype_name(int64_t onnx_type);
// True when ONNX defines the number (even if kiln cannot compute with it).
bool is_onnx_dtype(int64_t onnx_type);

}  // namespace kiln::ops
