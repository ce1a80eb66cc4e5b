// Constants that every layer reading them packed into its own weights (Tactic::packed_inputs) are
// stored in an engine file as dims only: the loaded engine runs bit for bit as the built one, and
// a file that drops the values of a constant some layer still reads, or whose packed weights are
// not the ones the kernel needs, is refused with an error naming them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/engine_test_util.h"
#include "engine/meta_json.h"
#include "engine/serialize.h"
#include "testing/tensor_compare.h"

namespace kiln::packed_weights_test {

using nlohmann::json;

// x[2,3,8,8] -> Conv(3->8, 3x3, pad 1) + Relu -> GlobalAveragePool -> Flatten -> fc (Gemm 8->16,
// transB) + Relu -> proj (MatMul 16->4) -> y: two GEMMs whose B the x86 GEMM packs, of different
// sizes, beside layers that read their weights as they are.
testing::OnnxBuilder pw_model() {
  testing::OnnxBuilder b;
  b.input("x", 1, {2, 3, 8, 8});
  const auto values = [](int64_t n, uint64_t seed) {
    const Tensor t = testing::random_f32({n}, seed);
    return std::vector<float>(t.data<float>(), t.data<float>() + n);
  };
  b.initializer("w1", {8, 3, 3, 3}, values(8 * 27, 1));
  b.initializer("b1", {8}, values(8, 2));
  b.initializer("wf", {16, 8}, values(128, 3));
  b.initializer("bf", {16}, values(16, 4));
  b.initializer("wp", {16, 4}, values(64, 5));
  auto& c = b.node("Conv", {"x", "w1", "b1"}, {"c"}, "conv");
  testing::set_attr_ints(c, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  auto& fc = b.node("Gemm", {"f", "wf", "bf"}, {"h"}, "fc");
  testing::set_attr_int(fc, "transB", 1);
  b.node("Relu", {"h"}, {"hr"}, "relu2");
  b.node("MatMul", {"hr", "wp"}, {"y"}, "proj");
  b.output("y");
  return b;
}

runtime::NamedTensors small_input() { return {{"x", testing::random_f32({2, 3, 8, 8}, 6)}}; }

// The built model (tactics in preference order, not timed) and which of its values are packed
// only; skips when no tactic packs (an ISA cap below the x86 kernels).
struct Built {
  std::shared_ptr<const runtime::Engine> engine;
  std::vector<bool> packed_only;
  size_t count = 0;
};

Built build_pw_model() {
  Built b;
  engine::BuildOptions o;
  o.optimization_level = 0;
  b.engine = testing::build_engine(pw_model(), o);
  if (b.engine == nullptr) return b;
  b.packed_only = engine::packed_only_values(b.engine->plan());
  for (bool p : b.packed_only) b.count += p ? 1 : 0;
  return b;
}

// The plan read back from its sections after `edit` changed the meta JSON.
template <class Edit>
Result<engine::Plan> reread(const engine::Plan& plan, Edit&& edit) {
  KILN_ASSIGN_OR_RETURN(engine::PlanSections s, engine::plan_to_sections(plan));
  edit(s.meta);
  size_t size = 0;
  for (std::string_view piece : s.weights.pieces) size += piece.size();
  // The pieces gathered 64-byte aligned, as a mapped file's weights section is.
  auto buffer = std::make_shared<std::vector<std::byte>>(size + 64);
  const auto addr = reinterpret_cast<uintptr_t>(buffer->data());
  std::byte* const at = buffer->data() + (64 - addr % 64) % 64;
  std::byte* end = at;
  for (std::string_view piece : s.weights.pieces) {
    std::memcpy(end, piece.data(), piece.size());
    end += piece.size();
  }
  const std::string meta = s.meta.dump();
  return engine::plan_from_sections(meta, std::span<const std::byte>(at, size), buffer);
}

// Layers (by index) that packed input 1 into their weights.
std::vector<size_t> packing_layers(const engine::Plan& plan, const std::vector<bool>& only) {
  std::vector<size_t> out;
  for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
    const auto& in = plan.graph.nodes[n].inputs;
    if (in.size() > 1 && in[1] != ir::kNoValue && only[static_cast<size_t>(in[1])]) {
      out.push_back(n);
    }
  }
  return out;
}

// Saves and loads the engine: packed-only values come back as dims without values, every other
// constant bit for bit, and the loaded engine's outputs are the built one's, bit for bit.
void expect_round_trip(const runtime::Engine& built_engine, const std::vector<bool>& packed_only) {
  const engine::Plan& built = built_engine.plan();
  testing::TempDir dir;
  const auto path = dir.path() / "pw.plan";
  ASSERT_TRUE(engine::save_plan(built, path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  for (size_t v = 0; v < built.graph.values.size(); ++v) {
    const ir::Value& want = built.graph.values[v];
    const ir::Value& got = loaded->graph.values[v];
    SCOPED_TRACE(want.name);
    ASSERT_EQ(got.initializer.has_value(), want.initializer.has_value());
    if (!want.initializer) continue;
    EXPECT_EQ(got.initializer->dims(), want.initializer->dims());
    if (packed_only[v]) {
      EXPECT_EQ(got.initializer->raw_data(), nullptr);
    } else {
      EXPECT_EQ(testing::compare_tensors(*got.initializer, *want.initializer, {0, 0}), "");
    }
  }
  auto reloaded = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().to_string();
  const std::vector<Tensor> got = testing::run_engine(**reloaded, small_input());
  const std::vector<Tensor> want = testing::run_engine(built_engine, small_input());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(testing::compare_tensors(got[0], want[0], {0, 0}), "");
}

TEST(PackedWeights, FileKeepsOnlyTheDimsOfPackedConstants) {
  const Built b = build_pw_model();
  ASSERT_NE(b.engine, nullptr);
  if (b.count == 0) GTEST_SKIP() << "no tactic packs weights under this ISA cap";
  expect_round_trip(*b.engine, b.packed_only);
}

// INT8 layers' int8 weights too (kiln.QConv, kiln.QGemm), when the x86 INT8 tactics run them.
TEST(PackedWeights, Int8EnginesKeepOnlyTheirPackedWeights) {
  engine::BuildOptions o;
  o.optimization_level = 0;
  o.int8 = true;  // placeholder ranges: the numbers only need to survive the round trip
  const auto engine = testing::build_engine(pw_model(), o);
  ASSERT_NE(engine, nullptr);
  const std::vector<bool> only = engine::packed_only_values(engine->plan());
  size_t int8_only = 0;
  for (size_t v = 0; v < only.size(); ++v) {
    const ir::Value& val = engine->plan().graph.values[v];
    if (only[v] && val.initializer->dtype() == DType::kI8) ++int8_only;
  }
  if (int8_only == 0) GTEST_SKIP() << "no INT8 tactic packs weights under this ISA cap";
  expect_round_trip(*engine, only);
}

TEST(PackedWeights, OnlyConstantsThatEveryReaderPackedAreDimsOnly) {
  const Built b = build_pw_model();
  ASSERT_NE(b.engine, nullptr);
  if (b.count == 0) GTEST_SKIP() << "no tactic packs weights under this ISA cap";
  const std::vector<size_t> layers = packing_layers(b.engine->plan(), b.packed_only);
  ASSERT_FALSE(layers.empty());
  const size_t n = layers[0];
  const auto w = static_cast<size_t>(b.engine->plan().graph.nodes[n].inputs[1]);
  // Biases and other inputs the kernels read keep their values.
  for (size_t i = 0; i < b.engine->plan().graph.nodes[n].inputs.size(); ++i) {
    const ir::ValueId v = b.engine->plan().graph.nodes[n].inputs[i];
    if (i != 1 && v != ir::kNoValue) {
      EXPECT_FALSE(b.packed_only[static_cast<size_t>(v)]);
    }
  }
  const auto still_packed = [&](auto&& change) -> bool {
    engine::Plan plan = b.engine->plan();
    change(plan);
    return engine::packed_only_values(plan)[w];
  };
  EXPECT_TRUE(still_packed([](engine::Plan&) {}));
  EXPECT_FALSE(still_packed([&](engine::Plan& p) { p.layers[n].packed = Tensor(); }));
  EXPECT_FALSE(still_packed([&](engine::Plan& p) { p.layers[n].tactic = "ref.generic"; }));
  EXPECT_FALSE(still_packed([&](engine::Plan& p) { p.graph.values[w].is_graph_output = true; }));
  // A second reader that reads it as it is (input 0 of a copy of the layer: not packed).
  EXPECT_FALSE(still_packed([&](engine::Plan& p) {
    ir::Node copy = p.graph.nodes[n];
    copy.inputs = {static_cast<ir::ValueId>(w), static_cast<ir::ValueId>(w)};
    p.graph.nodes.push_back(copy);
    p.layers.push_back(p.layers[n]);
  }));
}

TEST(PackedWeights, DimsOnlyValueThatALayerReadsIsCorrupt) {
  const Built b = build_pw_model();
  ASSERT_NE(b.engine, nullptr);
  if (b.count == 0) GTEST_SKIP() << "no tactic packs weights under this ISA cap";
  const engine::Plan& plan = b.engine->plan();
  const size_t n = packing_layers(plan, b.packed_only).at(0);
  const std::string w = plan.graph.value(plan.graph.nodes[n].inputs[1]).name;
  auto read = reread(plan, [&](json& meta) { meta["layers"][n]["packed"] = nullptr; });
  ASSERT_FALSE(read.is_ok());
  EXPECT_EQ(read.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(read.status().message().find("value '" + w + "' has only its dims stored"),
            std::string::npos)
      << read.status().message();
}

TEST(PackedWeights, PackedWeightsOfTheWrongSizeAreAnErrorNotACrash) {
  const Built b = build_pw_model();
  ASSERT_NE(b.engine, nullptr);
  if (b.count == 0) GTEST_SKIP() << "no tactic packs weights under this ISA cap";
  const engine::Plan& plan = b.engine->plan();
  const std::vector<size_t> layers = packing_layers(plan, b.packed_only);
  ASSERT_GE(layers.size(), 2u) << "two packing layers expected (fc, proj)";
  const size_t a = layers[0], c = layers[1];
  ASSERT_NE(plan.layers[a].packed.numel(), plan.layers[c].packed.numel());
  // Each layer gets the other's packed weights: every dims-only value is still packed, so the
  // file reads, but no kernel finds the weights it needs.
  auto read = reread(plan, [&](json& meta) {
    std::swap(meta["layers"][a]["packed"], meta["layers"][c]["packed"]);
  });
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  auto engine = runtime::Engine::create(std::move(read).value());
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto ctx = (*engine)->create_execution_context();
  ASSERT_FALSE(ctx.is_ok());
  EXPECT_EQ(ctx.status().code(), StatusCode::kCorrupt);
  const std::string& msg = ctx.status().message();
  EXPECT_NE(msg.find("stores only the dims of input 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find(plan.graph.nodes[a].name), std::string::npos) << msg;
}

}  // namespace kiln::packed_weights_test
