#include "frontend/onnx/attributes.h"

#include "frontend/onnx/tensor_proto.h"

namespace kiln::frontend {
namespace {

using onnx::AttributeProto;

// Old exporters leave `type` unset; the populated field tells it.
AttributeProto::AttributeType effective_type(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

Result<ir::AttrValue> convert_one(const AttributeProto& a, std::string_view what,
                                  const std::filesystem::path& model_dir) {
  switch (effective_type(a)) {
    case AttributeProto::INT:
      return ir::AttrValue(static_cast<int64_t>(a.i()));
    case AttributeProto::FLOAT:
      return ir::AttrValue(a.f());
    case AttributeProto::STRING:
      return ir::AttrValue(a.s());
    case AttributeProto::INTS:
      return ir::AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttributeProto::FLOATS:
      return ir::AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AttributeProto::STRINGS:
      return ir::AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AttributeProto::TENSOR: {
      KILN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(a.t(), model_dir, what));
      return ir::AttrValue(std::move(t));
    }
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      return unsupported("{} is a subgraph; control flow (If, Loop, Scan) is not supported", what);
    case AttributeProto::SPARSE_TENSOR:
    case AttributeProto::SPARSE_TENSORS:
      return unsupported("{} is a sparse tensor, which is not supported", what);
    case AttributeProto::TYPE_PROTO:
    case AttributeProto::TYPE_PROTOS:
      return unsupported("{} is a type proto, which is not supported", what);
    case AttributeProto::TENSORS:
      return unsupported("{} is a list of tensors, which is not supported", what);
    default:
      return invalid_model("{} has no value", what);
  }
}

}  // namespace

Result<ir::Attributes> convert_attributes(const onnx::NodeProto& node, std::string_view node_name,
                                          const std::filesystem::path& model_dir) {
  ir::Attributes attrs;
  for (const auto& a : node.attribute()) {
    const std::string what =
        fmt::format("node '{}' ({}): attribute '{}'", node_name, node.op_type(), a.name());
    if (!a.ref_attr_name().empty()) {
      return unsupported(
          "{} refers to a function attribute; model-local functions are not supported", what);
    }
    if (attrs.has(a.name())) return invalid_model("{} is given twice", what);
    KILN_ASSIGN_OR_RETURN(ir::AttrValue v, convert_one(a, what, model_dir));
    attrs.set(a.name(), std::move(v));
  }
  return attrs;
}

}  // namespace kiln::frontend
