// quantize_linear.per_tensor.* and dequantize_linear.per_tensor.* against the reference
// QuantizeLinear / DequantizeLinear, bit for bit: uint8 and int8, zero points at both ends, no
// zero point, ties (rounded half to even), saturation, NaN, infinities, tails of every length,
// many elements over threads; per-axis scales are refused. scale_quantize.per_channel.* against
// the reference kiln.ScaleQuantize, bit for bit.
#include <gtest/gtest.h>

#include <limits>

#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

std::string qname(const std::string& isa) { return "quantize_linear.per_tensor." + isa; }
std::string dqname(const std::string& isa) { return "dequantize_linear.per_tensor." + isa; }

// Random values in [-3, 3] * scale * 100 with exact ties, saturating values and specials.
Tensor quantize_input(int64_t n, float scale, uint64_t seed) {
  Tensor x = random_f32({n}, seed);
  float* p = x.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    p[i] *= 300.0f * scale;
    if (i % 7 == 3) p[i] = (static_cast<float>(i % 50) - 25.5f) * scale;  // a tie
  }
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            1e30f,
                            -1e30f};
  for (int64_t i = 0; i < n && i < 6; ++i) p[(i * 13 + 5) % n] = specials[i];
  return x;
}

OpCase qdq_case(const std::string& op, Tensor x, float scale, std::optional<Tensor> zero) {
  OpCase c;
  c.op_type = op;
  c.opset = 19;
  c.inputs = {in(std::move(x)), constant(f32({}, {scale}))};
  if (zero) c.inputs.push_back(constant(*zero));
  return c;
}

TEST(X86QdqTactic, QuantizeMatchesTheReferenceExactly) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t n : {1, 7, 16, 17, 100, 100003}) {
      for (float scale : {0.02f, 1.0f / 3.0f, 7.5f}) {
        for (int zp : {0, 128, 255}) {
          const Tensor zero = Tensor::from_vector<uint8_t>({}, {static_cast<uint8_t>(zp)});
          expect_matches_reference(
              qname(isa), qdq_case("QuantizeLinear", quantize_input(n, scale, n), scale, zero),
              {0, 0});
        }
        for (int zp : {-128, 0, 5}) {
          const Tensor zero = Tensor::from_vector<int8_t>({1}, {static_cast<int8_t>(zp)});
          expect_matches_reference(
              qname(isa), qdq_case("QuantizeLinear", quantize_input(n, scale, n + 1), scale, zero),
              {0, 0});
        }
        expect_matches_reference(
            qname(isa),
            qdq_case("QuantizeLinear", quantize_input(n, scale, n + 2), scale, std::nullopt),
            {0, 0});
      }
    }
  }
}

TEST(X86QdqTactic, DequantizeMatchesTheReferenceExactly) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t n : {1, 9, 16, 33, 100003}) {
      Tensor q = random_u8({2, n}, n);
      expect_matches_reference(
          dqname(isa),
          qdq_case("DequantizeLinear", q, 0.05f, Tensor::from_vector<uint8_t>({}, {131})), {0, 0});
      expect_matches_reference(dqname(isa), qdq_case("DequantizeLinear", q, 3.0f, std::nullopt),
                               {0, 0});
      Tensor s = random_s8({n}, n + 1);
      expect_matches_reference(
          dqname(isa), qdq_case("DequantizeLinear", s, 0.1f, Tensor::from_vector<int8_t>({}, {-7})),
          {0, 0});
    }
  }
}

TEST(X86QdqTactic, ThreadedMatchesTheReference) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {2, 3}) {
      expect_matches_reference_prepacked(qname(isa),
                                         qdq_case("QuantizeLinear", quantize_input(200001, 0.1f, 3),
                                                  0.1f, Tensor::from_vector<uint8_t>({}, {10})),
                                         {0, 0}, threads);
      expect_matches_reference_prepacked(
          dqname(isa), qdq_case("DequantizeLinear", random_s8({3, 70001}, 4), 0.1f, std::nullopt),
          {0, 0}, threads);
    }
  }
}

TEST(X86QdqTactic, RefusesPerAxisAndOtherTypes) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    OpCase c = qdq_case("QuantizeLinear", random_f32({2, 3}, 1), 1.0f, std::nullopt);
    c.inputs[1] = constant(f32({3}, {1, 2, 3}));
    expect_rejected(qname(isa), c, "per tensor");
    OpCase d = qdq_case("DequantizeLinear", Tensor(DType::kI32, {4}), 1.0f, std::nullopt);
    expect_rejected(dqname(isa), d, "int32 to float32");
  }
}

// kiln.ScaleQuantize: planes of every tail length against a 512-float block, S per image or
// broadcast over the batch, zero points at both ends, ties, saturation and specials; threads.
TEST(X86QdqTactic, ScaleQuantizeMatchesTheReferenceExactly) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    const std::string name = "scale_quantize.per_channel." + isa;
    for (int64_t plane : {1, 15, 49, 513, 3136}) {
      for (int64_t s_batch : {1, 2}) {
        for (int zp : {0, 128, 255}) {
          OpCase c;
          c.op_type = "ScaleQuantize";
          c.domain = "kiln";
          c.opset = 1;
          c.attrs = attrs({{"y_scale", 0.05f}, {"y_zero_point", int64_t{zp}}});
          Tensor x = quantize_input(2 * 3 * plane, 0.05f, plane);
          c.inputs = {in(x.reshaped({2, 3, 1, plane})),
                      in(random_f32({s_batch, 3, 1, 1}, plane + 1))};
          expect_matches_reference(name, c, {0, 0});
          if (plane == 3136) expect_matches_reference_prepacked(name, c, {0, 0}, 2);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::testing
