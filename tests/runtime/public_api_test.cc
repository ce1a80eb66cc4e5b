// The public API (include/kiln/kiln.h) end to end, as an application uses it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/engine_test_util.h"
#include "kiln/kiln.h"
#include "quant/calibration_file.h"
#include "runtime/engine.h"
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

// INT8 through the API: a TensorRT calibration cache gives the convolutions and the Gemm ranges.
TEST(PublicApi, Int8WithACalibrationCache) {
  testing::TempDir dir;
  auto network = Network::from_onnx_file(testing::small_cnn(false).write(dir.path()));
  ASSERT_TRUE(network.is_ok()) << network.status().to_string();
  const auto cache = dir.path() / "cnn.cache";
  {
    std::ofstream out(cache);
    out << "TRT-8601-EntropyCalibration2\n";
    for (const char* t : {"x", "r1", "f"})
      out << t << ": " << quant::trt_scale_hex(4.0f / 127) << "\n";
  }
  BuilderConfig config;
  config.int8 = true;
  config.calibration_file = cache;
  auto built = Builder::build(*network, config);
  ASSERT_TRUE(built.is_ok()) << built.status().to_string();
  int int8_layers = 0;
  for (const engine::Layer& l : built->impl().plan().layers) int8_layers += l.precision == "int8";
  EXPECT_GE(int8_layers, 2);

  config.calibration_file = dir.path() / "missing.cache";
  auto missing = Builder::build(*network, config);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("missing.cache"), std::string::npos)
      << missing.status().to_string();
  config.int8 = false;
  config.calibration_file = cache;
  EXPECT_FALSE(Builder::build(*network, config).is_ok());
}

TEST(PublicApi, Fp16StoresTheWeightsInBinary16) {
  testing::TempDir dir;
  auto network = Network::from_onnx_file(testing::small_cnn(false).write(dir.path()));
  ASSERT_TRUE(network.is_ok()) << network.status().to_string();
  BuilderConfig config;
  config.fp16 = true;
  auto built = Builder::build(*network, config);
  ASSERT_TRUE(built.is_ok()) << built.status().to_string();
  int fp16_layers = 0;
  for (const engine::Layer& l : built->impl().plan().layers) fp16_layers += l.precision == "fp16";
  EXPECT_EQ(fp16_layers, 3);  // two convolutions and the Gemm
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
