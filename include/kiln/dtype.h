#pragma once
// Element types kiln knows by name. Kernels support a subset; every op says which it accepts.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "kiln/half.h"

namespace kiln {

enum class DType : uint8_t {
  kUndefined,
  kF32,
  kF16,
  kF64,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBool,
  kString,  // known so that errors can name it; no kernel supports it
  kBF16,    // likewise
};

// Bytes per element; 0 for kUndefined and kString.
size_t dtype_size(DType t);
// numpy/ONNX-style names: "float32", "float16", "int64", "bool", ...
std::string_view dtype_name(DType t);
// The inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> dtype_from_name(std::string_view name);
bool dtype_is_float(DType t);
bool dtype_is_integer(DType t);  // signed or unsigned, not bool
bool dtype_is_signed(DType t);

// C++ type <-> DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::kF16;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kI16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kU16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kU32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kU64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

// Calls fn.template operator()<T>() with the C++ type of `t`, for every dtype that has one
// (all but kUndefined, kString, kBF16). Returns false when `t` has no C++ type.
//   dispatch_dtype(t, [&]<typename T>() { ... });
template <typename Fn>
bool dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kF32:
      fn.template operator()<float>();
      return true;
    case DType::kF16:
      fn.template operator()<Half>();
      return true;
    case DType::kF64:
      fn.template operator()<double>();
      return true;
    case DType::kI8:
      fn.template operator()<int8_t>();
      return true;
    case DType::kI16:
      fn.template operator()<int16_t>();
      return true;
    case DType::kI32:
      fn.template operator()<int32_t>();
      return true;
    case DType::kI64:
      fn.template operator()<int64_t>();
      return true;
    case DType::kU8:
      fn.template operator()<uint8_t>();
      return true;
    case DType::kU16:
      fn.template operator()<uint16_t>();
      return true;
    case DType::kU32:
      fn.template operator()<uint32_t>();
      return true;
    case DType::kU64:
      fn.template operator()<uint64_t>();
      return true;
    case DType::kBool:
      fn.template operator()<bool>();
      return true;
    default:
      return false;
  }
}

// Floating types only (float32, float16, float64). Returns false for any other dtype.
template <typename Fn>
bool dispatch_float(DType t, Fn&& fn) {
  bool called = false;
  dispatch_dtype(t, [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_floating_point_v<T>) {
      fn.template operator()<T>();
      called = true;
    }
  });
  return called;
}

// Like dispatch_dtype, restricted to the types the numeric reference kernels are instantiated for
// (every integer and floating type, not bool). Returns false for any other dtype.
template <typename Fn>
bool dispatch_numeric(DType t, Fn&& fn) {
  bool called = false;
  dispatch_dtype(t, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      fn.template operator()<T>();
      called = true;
    }
  });
  return called;
}

}  // namespace kiln
