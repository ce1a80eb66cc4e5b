// The builtin tactics as the registry lists them: unique names, each before ref.generic for its op,
// none allocating in run().
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tactics/builtin.h"
#include "tactics/tactic.h"

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
  // The 1x1 GEMM is tried before the direct convolution.
  const std::vector<const Tactic*> conv = tactics_for("", "Conv");
  EXPECT_EQ(conv[0]->name(), "conv.1x1_gemm.f32");
  EXPECT_EQ(conv[1]->name(), "conv.direct.f32");
}

}  // namespace
}  // namespace kiln::tactics
