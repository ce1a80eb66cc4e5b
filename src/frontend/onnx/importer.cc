#include "frontend/onnx/importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <set>

#include "frontend/onnx/attributes.h"
#include "frontend/onnx/tensor_proto.h"
#include "io/file_util.h"
#include "ops/infer_graph.h"
#include "ops/onnx_dtype.h"

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;

// ValueInfoProto -> TensorDesc. Non-tensor types (sequences, maps, optionals) are unsupported.
Result<ir::TensorDesc> desc_from_value_info(const onnx::ValueInfoProto& vi, std::string_view what) {
  if (!vi.has_type()) return ir::TensorDesc{};
  const auto& type = vi.type();
  if (!type.has_tensor_type()) {
    return unsupported(
        "{} '{}' is not a tensor (sequence, map or optional types are not supported)", what,
        vi.name());
  }
  const auto& tt = type.tensor_type();
  ir::TensorDesc desc;
  desc.dtype = ops::dtype_from_onnx(tt.elem_type());
  if (tt.elem_type() != 0 && (desc.dtype == DType::kUndefined || desc.dtype == DType::kString ||
                              desc.dtype == DType::kBF16)) {
    return unsupported("{} '{}' has element type {}, which kiln does not support", what, vi.name(),
                       ops::onnx_dtype_name(tt.elem_type()));
  }
  if (!tt.has_shape()) return desc;
  ir::Shape shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return invalid_model("{} '{}': dimension {} is negative ({})", what, vi.name(), i,
                             d.dim_value());
      }
      shape.push_back(ir::Dim::known(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      shape.push_back(ir::Dim::named(d.dim_param()));
    } else {
      shape.push_back(ir::Dim::unknown());
    }
  }
  desc.shape = std::move(shape);
  return desc;
}

Status read_opsets(const onnx::ModelProto& model, ir::Graph& g) {
  for (const auto& op : model.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    g.opset_imports[domain] = op.version();
  }
  auto it = g.opset_imports.find("");
  if (it == g.opset_imports.end()) {
    // IR v1/v2 models predate opset_import; later ones may use other domains only.
    if (model.ir_version() < 3) g.opset_imports[""] = 1;
    return Status::ok();
  }
  if (it->second > kMaxOnnxOpset) {
    return unsupported("the model uses ai.onnx opset {}, newer than the newest kiln supports ({})",
                       it->second, kMaxOnnxOpset);
  }
  if (it->second < kMinOnnxOpset) {
    return invalid_model("the model imports ai.onnx opset {}, which does not exist", it->second);
  }
  return Status::ok();
}

// Initializers first: graph inputs that share a name become overridable defaults (IR >= 4).
Status read_initializers(const onnx::GraphProto& gp, const fs::path& model_dir, ir::Graph& g) {
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) return invalid_model("an initializer has no name");
    if (g.find_value(init.name()) != ir::kNoValue) {
      return invalid_model("initializer '{}' is defined twice", init.name());
    }
    KILN_ASSIGN_OR_RETURN(
        Tensor t, tensor_from_proto(init, model_dir, fmt::format("initializer '{}'", init.name())));
    const ir::ValueId v = g.add_value(init.name(), ir::TensorDesc::of_dims(t.dtype(), t.dims()));
    g.value(v).initializer = std::move(t);
  }
  if (gp.sparse_initializer_size() > 0) {
    return unsupported("sparse initializer '{}' is not supported",
                       gp.sparse_initializer(0).values().name());
  }
  return Status::ok();
}

Status read_inputs(const onnx::GraphProto& gp, int64_t ir_version, ir::Graph& g) {
  for (const auto& in : gp.input()) {
    KILN_ASSIGN_OR_RETURN(ir::TensorDesc desc, desc_from_value_info(in, "graph input"));
    ir::ValueId v = g.find_value(in.name());
    if (v != ir::kNoValue) {
      ir::Value& val = g.value(v);
      if (!val.initializer) return invalid_model("graph input '{}' is declared twice", in.name());
      if (desc.dtype != DType::kUndefined && desc.dtype != val.desc.dtype) {
        return invalid_model("graph input '{}' is declared {} but its initializer is {}", in.name(),
                             desc.to_string(), val.initializer->desc());
      }
      if (ir_version < 4) continue;  // before IR 4, initializers had to be listed as inputs
      val.is_graph_input = true;
      if (desc.has_rank()) val.desc = desc;
    } else {
      if (desc.dtype == DType::kUndefined) {
        return invalid_model("graph input '{}' has no element type", in.name());
      }
      if (!desc.has_rank()) return invalid_model("graph input '{}' has no shape", in.name());
      v = g.add_value(in.name(), desc);
      g.value(v).is_graph_input = true;
    }
    g.inputs.push_back(v);
  }
  return Status::ok();
}

std::string unique_node_name(const onnx::NodeProto& n, size_t index, std::set<std::string>& used) {
  std::string base = n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name();
  std::string name = base;
  for (int k = 1; !used.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
  return name;
}

Status read_nodes(const onnx::GraphProto& gp, const fs::path& model_dir, ir::Graph& g) {
  // Create every produced value first so that nodes may reference later outputs; the topological
  // order is established afterwards.
  for (const auto& n : gp.node()) {
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      if (g.find_value(out) != ir::kNoValue) {
        return invalid_model("tensor '{}' is produced by node '{}' ({}) but is already defined",
                             out, n.name(), n.op_type());
      }
      g.add_value(out);
    }
  }
  std::set<std::string> used_names;
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    ir::Node node;
    node.name = unique_node_name(n, static_cast<size_t>(i), used_names);
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto opset = g.opset_imports.find(node.domain);
    if (opset == g.opset_imports.end()) {
      return invalid_model("node '{}' ({}) uses domain '{}', which the model does not import",
                           node.name, node.op_type, n.domain());
    }
    node.opset = static_cast<int>(opset->second);
    for (const auto& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(ir::kNoValue);
        continue;
      }
      const ir::ValueId v = g.find_value(in);
      if (v == ir::kNoValue) {
        return invalid_model(
            "node '{}' ({}): input '{}' is not a graph input, initializer or node output",
            node.name, node.op_type, in);
      }
      node.inputs.push_back(v);
    }
    for (const auto& out : n.output()) {
      node.outputs.push_back(out.empty() ? ir::kNoValue : g.find_value(out));
    }
    KILN_ASSIGN_OR_RETURN(node.attrs, convert_attributes(n, node.name, model_dir));
    g.nodes.push_back(std::move(node));
  }
  return Status::ok();
}

// Stable topological sort (Kahn, smallest original index first); a cycle is an error.
Status sort_nodes(ir::Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (ir::ValueId v : g.nodes[i].outputs) {
      if (v != ir::kNoValue) producer[static_cast<size_t>(v)] = static_cast<int>(i);
    }
  }
  std::vector<int> pending(n, 0);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    for (ir::ValueId v : g.nodes[i].inputs) {
      if (v == ir::kNoValue || producer[static_cast<size_t>(v)] < 0) continue;
      ++pending[i];
      users[static_cast<size_t>(producer[static_cast<size_t>(v)])].push_back(i);
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  std::vector<ir::Node> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.insert(u);
    }
    sorted.push_back(std::move(g.nodes[i]));
  }
  if (sorted.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return invalid_model("the graph has a cycle through node '{}' ({})", g.nodes[i].name,
                             g.nodes[i].op_type);
      }
    }
  }
  g.nodes = std::move(sorted);
  return Status::ok();
}

Status read_value_info_and_outputs(const onnx::GraphProto& gp, ir::Graph& g) {
  for (const auto& vi : gp.value_info()) {
    const ir::ValueId v = g.find_value(vi.name());
    if (v == ir::kNoValue || g.value(v).initializer || g.value(v).is_graph_input) continue;
    KILN_ASSIGN_OR_RETURN(g.value(v).desc, desc_from_value_info(vi, "value"));
  }
  for (const auto& out : gp.output()) {
    const ir::ValueId v = g.find_value(out.name());
    if (v == ir::kNoValue) {
      return invalid_model("graph output '{}' is not produced by any node", out.name());
    }
    ir::Value& val = g.value(v);
    if (!val.initializer && !val.is_graph_input) {
      KILN_ASSIGN_OR_RETURN(val.desc, desc_from_value_info(out, "graph output"));
    }
    val.is_graph_output = true;
    g.outputs.push_back(v);
  }
  if (g.outputs.empty()) return invalid_model("the graph has no outputs");
  return Status::ok();
}

Result<ir::Graph> import_model(const onnx::ModelProto& model, const fs::path& model_dir) {
  if (!model.has_graph()) return invalid_model("the model has no graph");
  ir::Graph g;
  g.name = model.graph().name();
  g.producer = fmt::format("{} {}", model.producer_name(), model.producer_version());
  KILN_RETURN_IF_ERROR(read_opsets(model, g));
  const auto& gp = model.graph();
  KILN_RETURN_IF_ERROR(read_initializers(gp, model_dir, g));
  KILN_RETURN_IF_ERROR(read_inputs(gp, model.ir_version(), g));
  KILN_RETURN_IF_ERROR(read_nodes(gp, model_dir, g));
  KILN_RETURN_IF_ERROR(sort_nodes(g));
  KILN_RETURN_IF_ERROR(read_value_info_and_outputs(gp, g));
  KILN_RETURN_IF_ERROR(g.verify());
  KILN_RETURN_IF_ERROR(ops::check_graph_ops(g));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(g));
  return g;
}

Result<std::string> read_file(const fs::path& path, std::string_view what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("{} '{}' does not exist", what, path.string());
  if (fs::is_directory(path, ec))
    return invalid_argument("{} '{}' is a directory", what, path.string());
  Result<std::string> bytes = io::read_file(path);
  if (!bytes.is_ok()) return bytes.status().with_context(what);
  return bytes;
}

template <typename Proto>
bool parse_proto(std::string_view bytes, Proto& proto) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  return proto.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

}  // namespace

Result<ir::Graph> import_onnx_bytes(std::string_view bytes, const fs::path& model_dir,
                                    std::string_view source_name) {
  onnx::ModelProto model;
  if (bytes.empty()) return corrupt("'{}' is empty, not an ONNX model", source_name);
  if (!parse_proto(bytes, model)) {
    return corrupt(
        "'{}' is not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)",
        source_name);
  }
  if (model.ir_version() <= 0 && !model.has_graph()) {
    return corrupt("'{}' is not an ONNX model (no ir_version, no graph)", source_name);
  }
  auto graph = import_model(model, model_dir);
  if (!graph.is_ok()) return graph.status().with_context(fmt::format("'{}'", source_name));
  return graph;
}

Result<ir::Graph> import_onnx_file(const fs::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path, "model file"));
  return import_onnx_bytes(bytes, path.parent_path().empty() ? fs::path(".") : path.parent_path(),
                           path.string());
}

Result<Tensor> load_tensor_proto_file(const fs::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path, "tensor file"));
  onnx::TensorProto proto;
  if (!parse_proto(bytes, proto))
    return corrupt("'{}' is not a valid ONNX TensorProto", path.string());
  return tensor_from_proto(proto, path.parent_path(),
                           fmt::format("tensor file '{}'", path.string()));
}

}  // namespace kiln::frontend
