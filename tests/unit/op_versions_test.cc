// Every op kiln registers must list each version at which ONNX changed it (up to the newest opset
// the installed ONNX knows), so that a model at any opset gets the semantics of its version.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <set>

#include "ops/op_def.h"

namespace kiln {
namespace {

TEST(OpVersions, MatchOnnxSchemas) {
  const auto& registry = ops::op_registry();
  const int max_known =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  for (const ops::OpDef& def : registry.all()) {
    if (!def.domain.empty()) continue;
    std::set<int> onnx_versions;
    for (int opset = 1; opset <= max_known; ++opset) {
      const auto* schema = onnx::OpSchemaRegistry::Schema(std::string(def.op_type), opset, "");
      if (schema != nullptr) onnx_versions.insert(schema->SinceVersion());
    }
    ASSERT_FALSE(onnx_versions.empty()) << def.op_type << " is not an ONNX op";
    for (int v : onnx_versions) {
      if (v < 7 && v != *onnx_versions.rbegin() &&
          onnx_versions.upper_bound(v) != onnx_versions.end() &&
          *onnx_versions.upper_bound(v) <= 7) {
        continue;  // superseded before opset 7, the oldest kiln promises
      }
      EXPECT_TRUE(std::find(def.since_versions.begin(), def.since_versions.end(), v) !=
                  def.since_versions.end())
          << def.op_type << ": ONNX changed it at opset " << v << " but kiln lists versions "
          << ::testing::PrintToString(def.since_versions);
    }
  }
}

}  // namespace
}  // namespace kiln
