// The builder packs the chosen tactics' weights on several threads (engine/builder.cc); built into
// the concurrency binary so that scripts/test.sh runs it under ThreadSanitizer.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

TEST(Builder, PacksWeightsOnSeveralThreads) {
  const auto model = testing::small_cnn(false);
  engine::BuildOptions options;
  options.tactic_sources = {"-onednn"};  // libgomp's threads are invisible to ThreadSanitizer
  options.optimization_level = 0;
  options.threads = 3;
  auto engine = testing::build_engine(model, options);
  ASSERT_NE(engine, nullptr);
  const Tensor x = testing::random_f32({2, 3, 8, 8}, 11);
  auto ctx = engine->create_execution_context({.threads = 1});
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  auto got = (*ctx)->run({{"x", x}});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(testing::compare_tensors((*got)[0], testing::reference_outputs(model, {{"x", x}})[0],
                                     {1e-5, 1e-6}),
            "");
}

}  // namespace
}  // namespace kiln
