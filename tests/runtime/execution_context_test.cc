#include "runtime/execution_context.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "kernels/alloc_counter.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

engine::BuildOptions batch_profiles() {
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}}});
  o.profiles.push_back({{"x", ShapeRange{{6, 3, 8, 8}, {8, 3, 8, 8}, {8, 3, 8, 8}}}});
  return o;
}

std::unique_ptr<runtime::ExecutionContext> make_context(
    const std::shared_ptr<const runtime::Engine>& engine) {
  auto ctx = engine->create_execution_context();
  EXPECT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  return ctx.is_ok() ? std::move(ctx).value() : nullptr;
}

TEST(ExecutionContext, AnyShapeInsideAProfileRuns) {
  const auto model = testing::small_cnn(true);
  auto engine = testing::build_engine(model, batch_profiles());
  ASSERT_NE(engine, nullptr);
  auto ctx = make_context(engine);
  for (int64_t batch : {1, 3, 4, 7, 2, 8}) {
    const Tensor x = testing::random_f32({batch, 3, 8, 8}, static_cast<uint64_t>(batch));
    auto got = ctx->run({{"x", x}});
    ASSERT_TRUE(got.is_ok()) << "batch " << batch << ": " << got.status().to_string();
    const auto want = testing::reference_outputs(model, {{"x", x}});
    EXPECT_EQ(testing::compare_tensors((*got)[0], want[0], {1e-5, 1e-6}), "") << batch;
    EXPECT_EQ(ctx->active_profile(), batch >= 6 ? 1 : 0);
  }
  EXPECT_EQ(ctx->replans(), 0);
}

TEST(ExecutionContext, ShapeOutsideEveryProfileIsRefusedWithTheRange) {
  auto engine = testing::build_engine(testing::small_cnn(true), batch_profiles());
  ASSERT_NE(engine, nullptr);
  auto ctx = make_context(engine);
  const Dims bad = {5, 3, 8, 8};
  Status st = ctx->set_input_shape("x", bad);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("input 'x': shape 5x3x8x8 is outside every optimization profile"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("profile 0: min 1x3x8x8, max 4x3x8x8"), std::string::npos);
  EXPECT_NE(st.message().find("profile 1: min 6x3x8x8, max 8x3x8x8"), std::string::npos);
  const Dims wrong_rank = {4, 3, 8};
  EXPECT_FALSE(ctx->set_input_shape("x", wrong_rank).is_ok());
}

TEST(ExecutionContext, BindingErrorsNameTheTensor) {
  auto engine = testing::build_engine(testing::small_cnn(true), batch_profiles());
  ASSERT_NE(engine, nullptr);
  auto ctx = make_context(engine);
  Status st = ctx->set_tensor_address("nope", nullptr);
  EXPECT_NE(st.message().find("'nope' is not an input or output of the engine (it has: x, y)"),
            std::string::npos)
      << st.message();
  st = ctx->execute();
  EXPECT_NE(st.message().find("input 'x' has no buffer"), std::string::npos) << st.message();
  float dummy[4 * 3 * 8 * 8] = {};
  ASSERT_TRUE(ctx->set_tensor_address("x", dummy).is_ok());
  st = ctx->execute();
  EXPECT_NE(st.message().find("input 'x' is float32[batch,3,8,8]: set its shape"),
            std::string::npos)
      << st.message();
}

TEST(ExecutionContext, UserBuffersAndRebinding) {
  const auto model = testing::small_cnn(false);
  auto engine = testing::build_engine(model);
  ASSERT_NE(engine, nullptr);
  auto ctx = make_context(engine);
  const Tensor x1 = testing::random_f32({2, 3, 8, 8}, 1);
  const Tensor x2 = testing::random_f32({2, 3, 8, 8}, 2);
  Tensor y(DType::kF32, {2, 5});
  ASSERT_TRUE(ctx->set_tensor_address("y", y.raw_data()).is_ok());
  for (const Tensor* x : {&x1, &x2, &x1}) {
    ASSERT_TRUE(ctx->set_tensor_address("x", x->raw_data()).is_ok());
    ASSERT_TRUE(ctx->execute().is_ok());
    const auto want = testing::reference_outputs(model, {{"x", *x}});
    EXPECT_EQ(testing::compare_tensors(y, want[0], {1e-5, 1e-6}), "");
  }
}

TEST(ExecutionContext, ShapeChainFollowsTheBatch) {
  const auto model = testing::shape_chain_model();
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{1, 6}, {2, 6}, {8, 6}}}});
  auto engine = testing::build_engine(model, o);
  ASSERT_NE(engine, nullptr);
  auto ctx = make_context(engine);
  for (int64_t batch : {1, 5, 8}) {
    const Tensor x = testing::random_f32({batch, 6}, 3);
    auto got = ctx->run({{"x", x}});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_EQ((*got)[0].dims(), (Dims{batch, 2, 3}));
    const auto want = testing::reference_outputs(model, {{"x", x}});
    EXPECT_EQ(testing::compare_tensors((*got)[0], want[0]), "");
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The hot path allocates nothing: once shapes are set, execute() — including after rebinding
// buffers — makes no heap allocation when every layer's tactic is allocation-free (all of this
// model's kiln tactics are; ref.generic, the fallback, may allocate). oneDNN is left out: its
// execute() allocates a few bookkeeping nodes per call (onednn_tactic_test bounds them), and the
// tuner picks it or not by timing, which would make this test depend on the machine's load.
TEST(ExecutionContext, HotPathAllocatesNothing) {
  engine::BuildOptions options = batch_profiles();
  options.tactic_sources = {"-onednn"};
  auto engine = testing::build_engine(testing::small_cnn(true), options);
  ASSERT_NE(engine, nullptr);
  for (size_t n = 0; n < engine->plan().layers.size(); ++n) {
    const tactics::Tactic* t = engine->tactic(n);
    ASSERT_TRUE(t == nullptr || !t->allocates()) << engine->graph().nodes[n].name;
  }
  auto ctx = make_context(engine);
  const Tensor x1 = testing::random_f32({3, 3, 8, 8}, 1), x2 = testing::random_f32({3, 3, 8, 8}, 2);
  Tensor y(DType::kF32, {3, 5});
  ASSERT_TRUE(ctx->set_input_shape("x", x1.dims()).is_ok());
  ASSERT_TRUE(ctx->set_tensor_address("x", x1.raw_data()).is_ok());
  ASSERT_TRUE(ctx->set_tensor_address("y", y.raw_data()).is_ok());
  ASSERT_TRUE(ctx->execute().is_ok());  // resolves shapes, plans, reshapes kernels: may allocate
  testing::AllocCounter counter;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ctx->set_tensor_address("x", (i % 2 ? x2 : x1).raw_data()).is_ok());
    ASSERT_TRUE(ctx->execute().is_ok());
  }
  EXPECT_EQ(counter.count(), 0);
}

}  // namespace
}  // namespace kiln
