// A whole engine with its layers forced onto the oneDNN tactics (the builder picks the first
// tactic that applies, so the test rewrites the plan's choices as a tuner would), against the
// reference executor.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine_test_util.h"
#include "engine/serialize.h"
#include "passes/pass_harness.h"
#include "tactics/tactic.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

// Moves every layer a oneDNN tactic accepts onto it, with the weights that tactic packs (as the
// builder's packing step would); returns how many moved and how many packed.
struct Moved {
  int layers = 0, packed = 0;
};
Moved force_onednn(engine::Plan& plan) {
  Moved moved;
  for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
    if (plan.layers[n].kind != engine::LayerKind::kRun) continue;
    const ir::Node& node = plan.graph.nodes[n];
    const tactics::LayerSpec spec = tactics::make_layer_spec(plan.graph, node);
    for (const tactics::Tactic* t : tactics::tactics_for(node.domain, node.op_type)) {
      if (t->source() == "onednn" && t->why_not(spec).empty()) {
        plan.layers[n].tactic = std::string(t->name());
        auto packed = t->prepack(spec);
        EXPECT_TRUE(packed.is_ok()) << packed.status().to_string();
        plan.layers[n].packed = packed.is_ok() ? std::move(packed).value() : Tensor();
        ++moved.layers;
        moved.packed += plan.layers[n].packed.defined();
        break;
      }
    }
  }
  return moved;
}

void expect_onednn_engine_matches_reference(bool dynamic_batch) {
  const auto model = testing::small_cnn(dynamic_batch);
  engine::BuildOptions options;
  if (dynamic_batch) {
    options.profiles.push_back({{"x", ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}}});
  }
  auto plan = engine::build_plan(testing::import_model(model), options);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  // The convolutions (fused with their bias, residual and activation) and the Gemm, their
  // weights packed into the engine (for a batch of 1 when it is dynamic).
  const Moved moved = force_onednn(*plan);
  EXPECT_GE(moved.layers, 3);
  EXPECT_EQ(moved.packed, moved.layers);
  // Saved and loaded: the weights every reader packed are stored as dims only, so the kernels run
  // on the engine's packed copies alone.
  const auto path = std::filesystem::path(::testing::TempDir()) /
                    (dynamic_batch ? "onednn_dynamic.plan" : "onednn_static.plan");
  ASSERT_TRUE(engine::save_plan(*plan, path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  int dims_only = 0;
  for (size_t n = 0; n < loaded->layers.size(); ++n) {
    if (!loaded->layers[n].packed.defined()) continue;
    const ir::Value& w = loaded->graph.value(loaded->graph.nodes[n].inputs[1]);
    dims_only += w.initializer && w.initializer->raw_data() == nullptr;
  }
  EXPECT_EQ(dims_only, moved.packed);
  auto engine = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto ctx = (*engine)->create_execution_context();
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  for (int64_t batch : dynamic_batch ? std::vector<int64_t>{2, 1, 4} : std::vector<int64_t>{2}) {
    const Tensor x = testing::random_f32({batch, 3, 8, 8}, 7);
    auto got = (*ctx)->run({{"x", x}});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    const auto want = testing::reference_outputs(model, {{"x", x}});
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ(testing::compare_tensors((*got)[0], want[0], {1e-5, 1e-5}), "") << "batch " << batch;
  }
}

TEST(OnednnEngine, StaticSmallCnnRunsLikeTheReference) {
  expect_onednn_engine_matches_reference(false);
}

TEST(OnednnEngine, DynamicBatchSmallCnnRepacksAndRunsLikeTheReference) {
  expect_onednn_engine_matches_reference(true);
}

}  // namespace
}  // namespace kiln
