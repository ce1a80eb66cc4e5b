// Every op kiln registers must list each version at which ONNX changed it (up to the newest opset
// the installed ONNX knows), so that a model at any opset gets the semantics of its version.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
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
    // An op introduced after the installed ONNX's newest opset (Mish 18, Gelu 20) cannot be checked.
    if (onnx_versions.empty() && def.since_versions.front() > max_known) continue;
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
    for (int v : def.since_versions) {
      if (v > max_known) continue;
      EXPECT_TRUE(onnx_versions.count(v) == 1)
          << def.op_type << ": kiln lists version " << v << ", at which ONNX did not change it";
    }
  }
}

// A valid model may set any attribute its op's schema lists; kiln must declare them all, or the
// importer would reject the model as having an unknown attribute.
TEST(OpVersions, DeclaresEveryOnnxAttribute) {
  const int max_known =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  for (const ops::OpDef& def : ops::op_registry().all()) {
    if (!def.domain.empty()) continue;
    for (int v : def.since_versions) {
      if (v > max_known) continue;
      const auto* schema = onnx::OpSchemaRegistry::Schema(std::string(def.op_type), v, "");
      if (schema == nullptr) continue;
      for (const auto& [name, attr] : schema->attributes()) {
        // Sparse tensors and subgraphs have no kiln representation: the importer reports them as
        // Unsupported before attributes are checked.
        if (attr.type == onnx::AttributeProto::SPARSE_TENSOR ||
            attr.type == onnx::AttributeProto::GRAPH) {
          continue;
        }
        const bool declared = std::any_of(def.attrs.begin(), def.attrs.end(),
                                          [&](const ops::AttrSpec& a) { return a.name == name; });
        EXPECT_TRUE(declared) << def.op_type << " version " << v << ": attribute '" << name
                              << "' is not declared";
      }
    }
  }
}

}  // namespace
}  // namespace kiln
