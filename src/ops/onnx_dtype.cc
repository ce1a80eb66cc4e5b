#include "ops/onnx_dtype.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace kiln::ops {
namespace {

struct OnnxType {
  std::string_view name;
  DType dtype;
};

// Indexed by TensorProto.DataType (onnx.proto3, up to FLOAT4E2M1 = 23).
constexpr std::array<OnnxType, 24> kTypes{{
    {"undefined", DType::kUndefined},
    {"float32", DType::kF32},
    {"uint8", DType::kU8},
    {"int8", DType::kI8},
    {"uint16", DType::kU16},
    {"int16", DType::kI16},
    {"int32", DType::kI32},
    {"int64", DType::kI64},
    {"string", DType::kString},
    {"bool", DType::kBool},
    {"float16", DType::kF16},
    {"float64", DType::kF64},
    {"uint32", DType::kU32},
    {"uint64", DType::kU64},
    {"complex64", DType::kUndefined},
    {"complex128", DType::kUndefined},
    {"bfloat16", DType::kBF16},
    {"float8e4m3fn", DType::kUndefined},
    {"float8e4m3fnuz", DType::kUndefined},
    {"float8e5m2", DType::kUndefined},
    {"float8e5m2fnuz", DType::kUndefined},
    {"uint4", DType::kUndefined},
    {"int4", DType::kUndefined},
    {"float4e2m1", DType::kUndefined},
}};

}  // namespace

bool is_onnx_dtype(int64_t onnx_type) {
  return onnx_type > 0 && onnx_type < static_cast<int64_t>(kTypes.size());
}

DType dtype_from_onnx(int64_t onnx_type) {
  return is_onnx_dtype(onnx_type) ? kTypes[static_cast<size_t>(onnx_type)].dtype
                                  : DType::kUndefined;
}

std::string onnx_dtype_name(int64_t onnx_type) {
  if (is_onnx_dtype(onnx_type)) return std::string(kTypes[static_cast<size_t>(onnx_type)].name);
  return fmt::format("ONNX type {}", onnx_type);
}

}  // namespace kiln::ops
