#include "base/dtype.h"

namespace kiln {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kI32:
    case DType::kU32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16:
      return 2;
    case DType::kF64:
    case DType::kI64:
    case DType::kU64:
      return 8;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return 1;
    case DType::kUndefined:
    case DType::kString:
      return 0;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined:
      return "undefined";
    case DType::kF32:
      return "float32";
    case DType::kF16:
      return "float16";
    case DType::kF64:
      return "float64";
    case DType::kI8:
      return "int8";
    case DType::kI16:
      return "int16";
    case DType::kI32:
      return "int32";
    case DType::kI64:
      return "int64";
    case DType::kU8:
      return "uint8";
    case DType::kU16:
      return "uint16";
    case DType::kU32:
      return "uint32";
    case DType::kU64:
      return "uint64";
    case DType::kBool:
      return "bool";
    case DType::kString:
      return "string";
    case DType::kBF16:
      return "bfloat16";
  }
  return "unknown";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(DType::kBF16); ++i) {
    const auto t = static_cast<DType>(i);
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

bool dtype_is_float(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kF64 || t == DType::kBF16;
}

bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
    case DType::kU8:
    case DType::kU16:
    case DType::kU32:
    case DType::kU64:
      return true;
    default:
      return false;
  }
}

bool dtype_is_signed(DType t) {
  return dtype_is_float(t) || t == DType::kI8 || t == DType::kI16 || t == DType::kI32 ||
         t == DType::kI64;
}

}  // namespace kiln
