#include "frontend/onnx/exporter.h"

#include <fmt/format.h>

#include <set>

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace kiln::frontend {
namespace {

// TensorProto.DataType numbers (onnx.proto3).
int export_onnx_type(DType t) {
  switch (t) {
    case DType::kF32:
      return 1;
    case DType::kU8:
      return 2;
    case DType::kI8:
      return 3;
    case DType::kU16:
      return 4;
    case DType::kI16:
      return 5;
    case DType::kI32:
      return 6;
    case DType::kI64:
      return 7;
    case DType::kString:
      return 8;
    case DType::kBool:
      return 9;
    case DType::kF16:
      return 10;
    case DType::kF64:
      return 11;
    case DType::kU32:
      return 12;
    case DType::kU64:
      return 13;
    case DType::kBF16:
      return 16;
    default:
      return 0;
  }
}

Status export_tensor(const Tensor& t, const std::string& name, onnx::TensorProto& p) {
  const int type = export_onnx_type(t.dtype());
  if (type == 0 || t.dtype() == DType::kString) {
    return unsupported("tensor '{}' is {}: kiln cannot write it to ONNX", name, t.desc());
  }
  p.set_name(name);
  p.set_data_type(type);
  for (int64_t d : t.dims()) p.add_dims(d);
  // kiln tensors are little-endian in memory on x86, as raw_data is.
  p.set_raw_data(static_cast<const char*>(t.raw_data()), t.nbytes());
  return Status::ok();
}

Status export_value_info(const ir::Value& v, onnx::ValueInfoProto& info) {
  info.set_name(v.name);
  const int type = export_onnx_type(v.desc.dtype);
  if (type == 0) {
    return unsupported("graph input/output '{}' is {}: no ONNX type", v.name, v.desc.to_string());
  }
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  if (!v.desc.has_rank()) return Status::ok();
  auto* shape = tensor->mutable_shape();
  for (int k = 0; k < v.desc.rank(); ++k) {
    const ir::Dim& d = v.desc.dim(k);
    auto* dim = shape->add_dim();
    if (d.is_known()) {
      dim->set_dim_value(d.value);
    } else if (!d.symbol.empty()) {
      dim->set_dim_param(d.symbol);
    }
  }
  return Status::ok();
}

Status export_attribute(const std::string& name, const ir::AttrValue& value,
                        onnx::AttributeProto& a) {
  using onnx::AttributeProto;
  a.set_name(name);
  switch (ir::attr_value_type(value)) {
    case ir::AttrType::kInt:
      a.set_type(AttributeProto::INT);
      a.set_i(std::get<int64_t>(value));
      break;
    case ir::AttrType::kFloat:
      a.set_type(AttributeProto::FLOAT);
      a.set_f(std::get<float>(value));
      break;
    case ir::AttrType::kString:
      a.set_type(AttributeProto::STRING);
      a.set_s(std::get<std::string>(value));
      break;
    case ir::AttrType::kInts:
      a.set_type(AttributeProto::INTS);
      for (int64_t v : std::get<std::vector<int64_t>>(value)) a.add_ints(v);
      break;
    case ir::AttrType::kFloats:
      a.set_type(AttributeProto::FLOATS);
      for (float v : std::get<std::vector<float>>(value)) a.add_floats(v);
      break;
    case ir::AttrType::kStrings:
      a.set_type(AttributeProto::STRINGS);
      for (const std::string& v : std::get<std::vector<std::string>>(value)) a.add_strings(v);
      break;
    case ir::AttrType::kTensor:
      a.set_type(AttributeProto::TENSOR);
      return export_tensor(std::get<Tensor>(value), "", *a.mutable_t());
  }
  return Status::ok();
}

Status export_node(const ir::Graph& g, const ir::Node& n, onnx::NodeProto& p) {
  p.set_name(n.name);
  p.set_op_type(n.op_type);
  if (!n.domain.empty()) p.set_domain(n.domain);
  for (ir::ValueId v : n.inputs) p.add_input(v == ir::kNoValue ? "" : g.value(v).name);
  for (ir::ValueId v : n.outputs) p.add_output(v == ir::kNoValue ? "" : g.value(v).name);
  for (const auto& [name, value] : n.attrs.all()) {
    Status st = export_attribute(name, value, *p.add_attribute());
    if (!st.is_ok()) return st.with_context(fmt::format("node '{}' attribute '{}'", n.name, name));
  }
  return Status::ok();
}

// The initializers: every constant a node reads or the graph outputs, once, in first-use order.
Status export_initializers(const ir::Graph& g, onnx::GraphProto& gp) {
  std::set<ir::ValueId> written;
  auto add = [&](ir::ValueId v) -> Status {
    if (v == ir::kNoValue || !g.value(v).initializer || !written.insert(v).second) {
      return Status::ok();
    }
    return export_tensor(*g.value(v).initializer, g.value(v).name, *gp.add_initializer());
  };
  for (ir::ValueId v : g.inputs) KILN_RETURN_IF_ERROR(add(v));
  for (const ir::Node& n : g.nodes) {
    for (ir::ValueId v : n.inputs) KILN_RETURN_IF_ERROR(add(v));
  }
  for (ir::ValueId v : g.outputs) KILN_RETURN_IF_ERROR(add(v));
  return Status::ok();
}

}  // namespace

Result<std::string> export_onnx_bytes(const ir::Graph& graph, const ExportOptions& options) {
  KILN_RETURN_IF_ERROR(graph.verify().with_context("exporting to ONNX"));
  onnx::ModelProto model;
  model.set_ir_version(options.ir_version);
  model.set_producer_name(options.producer_name);
  model.set_producer_version(options.producer_version);
  if (!options.doc_string.empty()) model.set_doc_string(options.doc_string);
  for (const auto& [domain, version] : graph.opset_imports) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name(graph.name.empty() ? "kiln" : graph.name);
  for (ir::ValueId v : graph.inputs) {
    KILN_RETURN_IF_ERROR(export_value_info(graph.value(v), *gp.add_input()));
  }
  for (ir::ValueId v : graph.outputs) {
    KILN_RETURN_IF_ERROR(export_value_info(graph.value(v), *gp.add_output()));
  }
  KILN_RETURN_IF_ERROR(export_initializers(graph, gp));
  for (const ir::Node& n : graph.nodes) KILN_RETURN_IF_ERROR(export_node(graph, n, *gp.add_node()));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return internal_error("serializing the ONNX model failed (a model over 2 GiB?)");
  }
  return bytes;
}

int64_t onnx_checker_ir_version() { return onnx::Version::IR_VERSION; }

Status check_onnx_bytes(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return corrupt("the written model does not parse as ONNX");
  try {
    onnx::checker::check_model(model);
    onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*error_mode=*/1);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    return invalid_model("the ONNX checker refuses the model: {}", e.what());
  }
  return Status::ok();
}

}  // namespace kiln::frontend
