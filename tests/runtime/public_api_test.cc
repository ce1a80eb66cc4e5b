// The public API (include/kiln/kiln.h) end to end, as an application uses it.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine_test_util.h"
#include "kiln/kiln.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

TEST(PublicApi, ParseBuildSaveLoadExecute) {
  testing::TempDir dir;
  const auto model = testing::small_cnn(true);
  auto network = Network::from_onnx_file(model.write(dir.path()));
  ASSERT_TRUE(network.is_ok()) << network.status().to_string();
  BuilderConfig config;
  config.profiles.push_back({{"x", ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}}});
  std::vector<std::string> log;
  config.log = [&](std::string_view line) { log.emplace_back(line); };
  auto built = Builder::build(*network, config);
  ASSERT_TRUE(built.is_ok()) << built.status().to_string();
  EXPECT_FALSE(log.empty());
  const auto plan = dir.path() / "cnn.plan";
  ASSERT_TRUE(built->save(plan).is_ok());

  auto engine = Runtime::load(plan);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  const std::vector<TensorInfo> io = engine->io_tensors();
  ASSERT_EQ(io.size(), 2u);
  EXPECT_EQ(io[0].name, "x");
  EXPECT_TRUE(io[0].is_input);
  EXPECT_EQ(io[0].shape, "float32[batch,3,8,8]");
  EXPECT_EQ(engine->num_profiles(), 1);
  auto range = engine->profile_shape(0, "x");
  ASSERT_TRUE(range.is_ok());
  EXPECT_EQ(range->max, (Dims{4, 3, 8, 8}));
  EXPECT_FALSE(engine->profile_shape(1, "x").is_ok());

  auto ctx = engine->create_execution_context();
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  const Tensor x = testing::random_f32({3, 3, 8, 8}, 11);
  Tensor y(DType::kF32, {3, 5});
  const Dims dims = x.dims();
  ASSERT_TRUE(ctx->set_input_shape("x", dims).is_ok());
  ASSERT_TRUE(ctx->set_tensor_address("x", x.raw_data()).is_ok());
  ASSERT_TRUE(ctx->set_tensor_address("y", y.raw_data()).is_ok());
  auto shape = ctx->tensor_shape("y");
  ASSERT_TRUE(shape.is_ok());
  EXPECT_EQ(*shape, (Dims{3, 5}));
  ASSERT_TRUE(ctx->execute().is_ok());
  const auto want = testing::reference_outputs(model, {{"x", x}});
  EXPECT_EQ(testing::compare_tensors(y, want[0], {1e-5, 1e-6}), "");
}

TEST(PublicApi, ErrorsComeBackAsStatus) {
  auto network = Network::from_onnx_file("/nonexistent/model.onnx");
  ASSERT_FALSE(network.is_ok());
  EXPECT_EQ(network.status().code(), StatusCode::kNotFound);
  auto engine = Runtime::load("/nonexistent/model.plan");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
