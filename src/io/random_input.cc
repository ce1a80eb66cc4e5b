#include "io/random_input.h"

#include <cmath>
#include <cstring>
#include <random>

namespace kiln::io {
namespace {

// Uniform on {-1, -1 + 2^(1-p), ..., 1 - 2^(1-p)}: p bits from the top of one draw.
double uniform_pm1(uint64_t x, int bits) {
  const auto k = static_cast<double>(x >> (64 - bits));
  return std::ldexp(k, 1 - bits) - 1.0;
}

// Uniform in [0, 10) by rejection: accepting x <= kLimit keeps 2^64 - 6 values, a multiple of 10,
// so every residue is equally likely.
int64_t uniform_digit(std::mt19937_64& gen) {
  constexpr uint64_t kRange = 10;
  constexpr uint64_t kLimit = UINT64_MAX - (UINT64_MAX % kRange + 1) % kRange;
  uint64_t x = gen();
  while (x > kLimit) x = gen();
  return static_cast<int64_t>(x % kRange);
}

template <typename T>
void fill(Tensor& t, std::mt19937_64& gen) {
  for (T& v : t.span<T>()) {
    if constexpr (std::is_same_v<T, float>) {
      v = static_cast<float>(uniform_pm1(gen(), 24));
    } else if constexpr (std::is_same_v<T, double>) {
      v = uniform_pm1(gen(), 53);
    } else if constexpr (std::is_same_v<T, Half>) {
      v = Half(static_cast<float>(uniform_pm1(gen(), 11)));
    } else if constexpr (std::is_same_v<T, bool>) {
      v = (gen() >> 63) != 0;
    } else {
      v = static_cast<T>(uniform_digit(gen));
    }
  }
}

void fill_bf16(Tensor& t, std::mt19937_64& gen) {
  auto* bits = static_cast<uint16_t*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto f = static_cast<float>(uniform_pm1(gen(), 8));  // exact in bfloat16's 8 bits
    uint32_t wide;
    std::memcpy(&wide, &f, sizeof wide);
    bits[i] = static_cast<uint16_t>(wide >> 16);
  }
}

}  // namespace

Result<Tensor> random_tensor(DType dtype, const Dims& dims, uint64_t seed) {
  if (dtype_size(dtype) == 0) {
    return unsupported("cannot make random values of dtype {}", dtype_name(dtype));
  }
  KILN_RETURN_IF_ERROR(check_dims(dims, dtype, "random input"));
  Tensor t(dtype, dims);
  std::mt19937_64 gen(seed);
  if (dtype == DType::kBF16) {
    fill_bf16(t, gen);
  } else {
    dispatch_dtype(dtype, [&]<typename T>() { fill<T>(t, gen); });
  }
  return t;
}

}  // namespace kiln::io
