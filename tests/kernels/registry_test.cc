// The builtin tactics as the registry lists them: unique names, each before ref.generic for its op,
// none allocating in run().
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "tactics/builtin.h"
#include "tactics/tactic.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics {
namespace {

TEST(BuiltinTactics, HaveUniqueNamesAndComeBeforeTheFallback) {
  std::set<std::string_view> names;
  for (const Tactic* t : builtin::builtin_tactics()) {
    EXPECT_TRUE(names.insert(t->name()).second) << "duplicate tactic name " << t->name();
    EXPECT_EQ(find_tactic(t->name()), t) << t->name();
    EXPECT_FALSE(t->allocates()) << t->name();
    EXPECT_EQ(t->required_features(), 0u) << t->name() << " is portable";
    const std::vector<const Tactic*> candidates = tactics_for(t->domain(), t->op_type());
    ASSERT_GE(candidates.size(), 2u) << t->op_type();
    EXPECT_EQ(candidates.back()->name(), "ref.generic") << t->op_type();
    EXPECT_NE(std::find(candidates.begin(), candidates.end() - 1, t), candidates.end() - 1);
  }
}

TEST(BuiltinTactics, CoverTheModelSetsOps) {
  for (const char* op : {"Conv",
                         "Gemm",
                         "MatMul",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Relu",
                         "Sigmoid",
                         "Tanh",
                         "Exp",
                         "Erf",
                         "Sqrt",
                         "Neg",
                         "Abs",
                         "HardSigmoid",
                         "HardSwish",
                         "LeakyRelu",
                         "Clip",
                         "Softmax",
                         "LayerNormalization",
                         "ReduceMean",
                         "Concat",
                         "Transpose",
                         "Reshape",
                         "Flatten",
                         "Squeeze",
                         "Unsqueeze",
                         "Slice"}) {
    EXPECT_GE(tactics_for("", op).size(), 2u) << op << " has only the fallback";
  }
  // kiln's x86 SIMD tactics come first; among the builtin ones the 1x1 GEMM is tried before the
  // direct convolution.
  const std::vector<const Tactic*> conv = tactics_for("", "Conv");
  EXPECT_EQ(conv[0]->name(), "conv.gemm1x1.f32.avx512");
  auto at = [&](std::string_view name) {
    return std::find_if(conv.begin(), conv.end(),
                        [&](const Tactic* t) { return t->name() == name; });
  };
  EXPECT_LT(at("conv.depthwise.f32.avx2"), at("conv.1x1_gemm.f32"));
  EXPECT_LT(at("conv.1x1_gemm.f32"), at("conv.direct.f32"));
  EXPECT_NE(at("conv.direct.f32"), conv.end());
}

TEST(X86Tactics, HaveUniqueNamesFeaturesAndTheKilnSource) {
  std::set<std::string_view> names;
  for (const Tactic* t : x86::x86_tactics()) {
    EXPECT_TRUE(names.insert(t->name()).second) << "duplicate tactic name " << t->name();
    EXPECT_EQ(find_tactic(t->name()), t) << t->name();
    EXPECT_FALSE(t->allocates()) << t->name();
    EXPECT_NE(t->required_features(), 0u) << t->name() << " names the x86 features it needs";
    EXPECT_EQ(t->source(), "kiln") << t->name();
  }
  for (const char* name :
       {"conv.gemm1x1.f32.avx512", "conv.im2col.f32.avx512", "conv.depthwise.f32.avx512",
        "fused_conv.gemm1x1.f32.avx2", "fused_conv.im2col.f32.avx2",
        "fused_conv.depthwise.f32.avx2", "gemm.packed.f32.avx512", "matmul.packed.f32.avx2",
        "fused_gemm.packed.f32.avx512"}) {
    EXPECT_NE(find_tactic(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace kiln::tactics
