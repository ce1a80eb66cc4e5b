// attention.f32.avx512 / attention.f32.avx2 against the reference kiln.Attention: sequences and
// depths with every tail (of the 8-row tile, the 32- or 16-column panel, the 8 x 8 transposes that
// pack the operands), operands read through transposes (the heads' split of a QKV product, keys as
// rows), broadcast batches, masks of every broadcast, blocks of rows split over threads; a result
// transpose that moves its rows' axis is refused (other types the op refuses itself).
#include <gtest/gtest.h>

#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

std::string aname(const std::string& isa) { return "attention.f32." + isa; }

constexpr Tolerance kAttentionTol{1e-4, 1e-5};

struct Shape {
  int64_t heads, s, t, d, dv;
};

Tensor scaled(const Dims& dims, float scale, uint64_t seed) {
  Tensor x = random_f32(dims, seed);
  for (float& v : x.span<float>()) v *= scale;
  return x;
}

// Plain operands: Q [heads, s, d], K' [heads, d, t], V [heads, t, dv].
OpCase plain(const Shape& z, uint64_t seed) {
  OpCase c;
  c.op_type = "Attention";
  c.domain = "kiln";
  c.opset = 1;
  c.attrs.set("scale", 0.7f);
  c.inputs = {in(scaled({z.heads, z.s, z.d}, 2.0f, seed)),
              in(scaled({z.heads, z.d, z.t}, 2.0f, seed + 1)),
              in(random_f32({z.heads, z.t, z.dv}, seed + 2))};
  return c;
}

// As a transformer exports it: Q, K and V [tokens, heads, depth] (the QKV product's heads), keys
// of their own length, the result stored [s, heads, dv].
OpCase heads_split(const Shape& z, uint64_t seed) {
  OpCase c = plain(z, seed);
  c.inputs = {in(scaled({z.s, z.heads, z.d}, 2.0f, seed)),
              in(scaled({z.t, z.heads, z.d}, 2.0f, seed + 1)),
              in(random_f32({z.t, z.heads, z.dv}, seed + 2))};
  c.attrs.set("perm_q", std::vector<int64_t>{1, 0, 2});
  c.attrs.set("perm_k", std::vector<int64_t>{1, 2, 0});
  c.attrs.set("perm_v", std::vector<int64_t>{1, 0, 2});
  c.attrs.set("perm_y", std::vector<int64_t>{1, 0, 2});
  return c;
}

constexpr Shape kShapes[] = {
    {1, 1, 1, 1, 1},      {2, 5, 7, 3, 9},     {1, 8, 8, 8, 8},
    {3, 17, 33, 16, 17},  {2, 9, 40, 24, 32},  {1, 23, 100, 9, 48},
    {3, 50, 197, 64, 64}, {2, 20, 300, 8, 24},  // more keys than one depth block of the product
                                                // with V
};

TEST(X86AttentionTactic, PlainAndTransposedOperandsMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const Shape& z : kShapes) {
      SCOPED_TRACE(::testing::Message() << isa << " heads " << z.heads << " s " << z.s << " t "
                                        << z.t << " d " << z.d << " dv " << z.dv);
      expect_matches_reference(aname(isa), plain(z, 3), kAttentionTol);
      expect_matches_reference(aname(isa), heads_split(z, 5), kAttentionTol);
      // Keys as rows [heads, t, d] (K^T through perm_k): the transposed packing.
      OpCase keys = plain(z, 7);
      keys.inputs[1] = in(scaled({z.heads, z.t, z.d}, 2.0f, 8));
      keys.attrs.set("perm_k", std::vector<int64_t>{0, 2, 1});
      expect_matches_reference(aname(isa), keys, kAttentionTol);
    }
  }
}

TEST(X86AttentionTactic, BatchesBroadcast) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    // Q [2, 3, 10, 8] against one K' per head [3, 8, 12] and one V [12, 5].
    OpCase c = plain({1, 10, 12, 8, 5}, 1);
    c.inputs = {in(scaled({2, 3, 10, 8}, 2.0f, 1)), in(scaled({3, 8, 12}, 2.0f, 2)),
                in(random_f32({12, 5}, 3))};
    expect_matches_reference(aname(isa), c, kAttentionTol);
    // Multi-query: 4 heads of Q sharing one K and V, on 1 and 2 threads.
    OpCase mq = plain({1, 10, 12, 8, 5}, 4);
    mq.inputs = {in(scaled({4, 10, 8}, 2.0f, 4)), in(scaled({1, 8, 12}, 2.0f, 5)),
                 in(random_f32({1, 12, 5}, 6))};
    expect_matches_reference(aname(isa), mq, kAttentionTol);
    expect_matches_reference_prepacked(aname(isa), mq, kAttentionTol, 2);
  }
}

// A mask in [-2, 2), every 7th entry -1e4 (a padded key).
Tensor mask_values(const Dims& dims, uint64_t seed) {
  Tensor m = scaled(dims, 2.0f, seed);
  float* p = m.data<float>();
  for (int64_t i = 0; i < m.numel(); i += 7) p[i] = -1e4f;
  return m;
}

TEST(X86AttentionTactic, MasksOfEveryBroadcast) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const Shape z{2, 19, 37, 16, 8};
  for (const std::string& isa : isas) {
    // Per key, per (query, key), one value, per head and key; a mask with a batch dim of its own
    // (the result [3, heads, s, dv], so the operands plain: no perm_y of rank 3).
    for (const Dims& dims : {Dims{37}, Dims{19, 37}, Dims{1}, Dims{2, 1, 37}, Dims{3, 1, 19, 37}}) {
      SCOPED_TRACE(::testing::Message() << isa << " mask " << dims_to_string(dims));
      OpCase c = dims.size() == 4 ? plain(z, 21) : heads_split(z, 21);
      c.inputs.push_back(in(mask_values(dims, 22)));
      expect_matches_reference(aname(isa), c, kAttentionTol);
      expect_matches_reference_prepacked(aname(isa), c, kAttentionTol, 2);
    }
  }
}

TEST(X86AttentionTactic, BlocksOfRowsOverThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const Shape& z :
         {Shape{3, 197, 197, 64, 64}, Shape{1, 37, 20, 16, 16}, Shape{5, 3, 9, 4, 7}}) {
      SCOPED_TRACE(::testing::Message() << isa << " heads " << z.heads << " s " << z.s);
      expect_matches_reference_prepacked(aname(isa), heads_split(z, 11), kAttentionTol, 2);
      expect_matches_reference_prepacked(aname(isa), plain(z, 13), kAttentionTol, 2);
    }
  }
}

TEST(X86AttentionTactic, RefusesScatteredRows) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    OpCase c = plain({2, 3, 4, 5, 6}, 1);
    c.attrs.set("perm_y", std::vector<int64_t>{2, 1, 0});
    expect_rejected(aname(isa), c, "perm_y moves the result's last axis");
  }
}

}  // namespace
}  // namespace kiln::testing
