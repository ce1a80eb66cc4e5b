// Reading an engine's meta section. The file passed its checksum, but a checksum only proves the
// bytes are the ones some writer produced: every id, offset and size is still checked here, so a
// crafted file gets an error, never an out-of-bounds read.

#include <fmt/format.h>

#include "base/half_convert.h"
#include "engine/meta_json.h"
#include "ops/infer_graph.h"
#include "tactics/tactic.h"

namespace kiln::engine {
namespace {

using nlohmann::json;

class MetaReader {
 public:
  MetaReader(std::span<const std::byte> weights, std::shared_ptr<const void> owner)
      : weights_(weights), owner_(std::move(owner)) {}

  Result<Plan> read(const json& m);

 private:
  Result<Tensor> weight(const json& w, std::string_view what) const;
  Result<ir::TensorDesc> desc(const json& v, std::string_view what) const;
  Status read_values(const json& m, ir::Graph& g);
  // Every value stored as dims only is one that all of its readers packed.
  Status check_dims_only(const Plan& plan) const;
  // `allow_absent`: kNoValue is valid (a node's omitted optional input or output).
  Result<ir::ValueId> value_id(const json& id, const ir::Graph& g, std::string_view what,
                               bool allow_absent = false) const;
  Result<ir::AttrValue> attr(const json& a, std::string_view what) const;
  Status read_layer(const json& l, Plan& plan) const;
  Result<Profile> read_profile(const json& p, const ir::Graph& g) const;

  std::span<const std::byte> weights_;
  std::shared_ptr<const void> owner_;
  std::vector<ir::ValueId> dims_only_;  // values whose file entry is `weight_dims`
  std::vector<std::pair<ir::ValueId, Tensor>> fp16_bits_;  // `weight_fp16` values, as stored
};

Result<DType> parse_dtype(const json& j, std::string_view what) {
  const std::string name = j.get<std::string>();
  const std::optional<DType> t = dtype_from_name(name);
  if (!t) return corrupt("engine meta: {} has an unknown dtype '{}'", what, name);
  return *t;
}

Result<Tensor> MetaReader::weight(const json& w, std::string_view what) const {
  KILN_ASSIGN_OR_RETURN(const DType dtype, parse_dtype(w.at("dtype"), what));
  const Dims dims = w.at("dims").get<Dims>();
  KILN_RETURN_IF_ERROR(check_dims(dims, dtype, what));
  const uint64_t offset = w.at("offset").get<uint64_t>();
  const uint64_t bytes = w.at("bytes").get<uint64_t>();
  const uint64_t want = static_cast<uint64_t>(dims_numel(dims)) * dtype_size(dtype);
  if (bytes != want || offset > weights_.size() || bytes > weights_.size() - offset) {
    return corrupt(
        "engine meta: {} ({}[{}], {} bytes at offset {}) does not fit the {}-byte "
        "weights section",
        what, dtype_name(dtype), dims_to_string(dims), bytes, offset, weights_.size());
  }
  if (offset % 64 != 0) return corrupt("engine meta: {} is not 64-byte aligned", what);
  return Tensor::borrow(dtype, dims, weights_.data() + offset, owner_);
}

Result<ir::TensorDesc> MetaReader::desc(const json& v, std::string_view what) const {
  KILN_ASSIGN_OR_RETURN(const DType dtype, parse_dtype(v.at("dtype"), what));
  const json& shape = v.at("shape");
  if (shape.is_null()) return ir::TensorDesc::unknown_shape(dtype);
  ir::Shape dims;
  for (const json& d : shape) {
    if (d.is_number_integer() && d.get<int64_t>() >= 0) {
      dims.push_back(ir::Dim::known(d.get<int64_t>()));
    } else if (d.is_string()) {
      dims.push_back(ir::Dim::named(d.get<std::string>()));
    } else if (d.is_null()) {
      dims.push_back(ir::Dim::unknown());
    } else {
      return corrupt("engine meta: {} has a bad dim {}", what, d.dump());
    }
  }
  return ir::TensorDesc::of(dtype, std::move(dims));
}

Status MetaReader::read_values(const json& m, ir::Graph& g) {
  for (const json& v : m.at("values")) {
    const std::string name = v.at("name").get<std::string>();
    if (g.find_value(name) != ir::kNoValue) {
      return corrupt("engine meta: value '{}' appears twice", name);
    }
    const std::string what = fmt::format("value '{}'", name);
    KILN_ASSIGN_OR_RETURN(ir::TensorDesc d, desc(v, what));
    const ir::ValueId id = g.add_value(name, std::move(d));
    ir::Value& val = g.value(id);
    val.is_graph_input = v.at("input").get<bool>();
    val.is_graph_output = v.at("output").get<bool>();
    if (v.contains("weight")) {
      KILN_ASSIGN_OR_RETURN(val.initializer, weight(v.at("weight"), what));
    } else if (v.contains("weight_fp16")) {
      // An FP16 layer's float32 weights, stored as binary16: widened here (exactly), once per
      // load, so that every tactic sees the float32 tensor the graph declares.
      KILN_ASSIGN_OR_RETURN(const Tensor t, weight(v.at("weight_fp16"), what));
      if (t.dtype() != DType::kF16 || val.desc.dtype != DType::kF32) {
        return corrupt("engine meta: {} is {} with a {} weight_fp16; expected float32 and float16",
                       what, dtype_name(val.desc.dtype), dtype_name(t.dtype()));
      }
      val.initializer = widen_half(t);
      fp16_bits_.emplace_back(id, t);
    } else if (v.contains("weight_dims")) {
      // A constant packed into the weights of every layer that reads it: dims, no values.
      const json& w = v.at("weight_dims");
      KILN_ASSIGN_OR_RETURN(const DType dtype, parse_dtype(w.at("dtype"), what));
      const Dims dims = w.at("dims").get<Dims>();
      KILN_RETURN_IF_ERROR(check_dims(dims, dtype, what));
      val.initializer = Tensor::borrow(dtype, dims, nullptr, nullptr);
      dims_only_.push_back(id);
    }
  }
  return Status::ok();
}

Status MetaReader::check_dims_only(const Plan& plan) const {
  if (dims_only_.empty()) return Status::ok();
  const std::vector<bool> packed_only = packed_only_values(plan);
  for (ir::ValueId v : dims_only_) {
    if (!packed_only[static_cast<size_t>(v)]) {
      return corrupt(
          "engine meta: value '{}' has only its dims stored (weight_dims), but a layer that "
          "reads it did not pack it into its own weights",
          plan.graph.value(v).name);
    }
  }
  return Status::ok();
}

Result<ir::ValueId> MetaReader::value_id(const json& id, const ir::Graph& g, std::string_view what,
                                         bool allow_absent) const {
  const int64_t v = id.get<int64_t>();
  if (v == ir::kNoValue && allow_absent) return ir::kNoValue;
  if (v < 0 || v >= static_cast<int64_t>(g.values.size())) {
    return corrupt("engine meta: {} refers to value {} of {}", what, v, g.values.size());
  }
  return static_cast<ir::ValueId>(v);
}

Result<ir::AttrValue> MetaReader::attr(const json& a, std::string_view what) const {
  const std::string type = a.at("type").get<std::string>();
  const json& v = a.at("value");
  if (type == "int") return ir::AttrValue(v.get<int64_t>());
  if (type == "float") return ir::AttrValue(v.get<float>());
  if (type == "string") return ir::AttrValue(v.get<std::string>());
  if (type == "ints") return ir::AttrValue(v.get<std::vector<int64_t>>());
  if (type == "floats") return ir::AttrValue(v.get<std::vector<float>>());
  if (type == "strings") return ir::AttrValue(v.get<std::vector<std::string>>());
  if (type == "tensor") {
    KILN_ASSIGN_OR_RETURN(Tensor t, weight(v, what));
    return ir::AttrValue(std::move(t));
  }
  return corrupt("engine meta: {} has an unknown attribute type '{}'", what, type);
}

Status MetaReader::read_layer(const json& l, Plan& plan) const {
  ir::Graph& g = plan.graph;
  ir::Node node;
  node.name = l.at("name").get<std::string>();
  node.op_type = l.at("op").get<std::string>();
  node.domain = l.at("domain").get<std::string>();
  node.opset = l.at("opset").get<int>();
  node.fused_from = l.at("fused_from").get<std::vector<std::string>>();
  const std::string what = fmt::format("layer '{}'", node.name);
  for (const auto& [name, a] : l.at("attrs").items()) {
    KILN_ASSIGN_OR_RETURN(ir::AttrValue v, attr(a, fmt::format("{} attribute '{}'", what, name)));
    node.attrs.set(name, std::move(v));
  }
  for (const json& id : l.at("inputs")) {
    KILN_ASSIGN_OR_RETURN(ir::ValueId v, value_id(id, g, what + " input", true));
    node.inputs.push_back(v);
  }
  for (const json& id : l.at("outputs")) {
    KILN_ASSIGN_OR_RETURN(ir::ValueId v, value_id(id, g, what + " output", true));
    node.outputs.push_back(v);
  }
  Layer layer;
  const std::string kind = l.at("kind").get<std::string>();
  if (kind != "run" && kind != "shape") return corrupt("engine meta: {} has kind '{}'", what, kind);
  layer.kind = kind == "shape" ? LayerKind::kShape : LayerKind::kRun;
  layer.tactic = l.at("tactic").get<std::string>();
  layer.precision = l.at("precision").get<std::string>();
  layer.precision_note = l.value("precision_note", "");
  if (l.contains("packed") && !l["packed"].is_null()) {
    KILN_ASSIGN_OR_RETURN(layer.packed, weight(l["packed"], what + " packed weights"));
  }
  for (const json& c : l.value("candidates", json::array())) {
    layer.candidates.push_back(tactics::TacticTiming{
        c.at("tactic").get<std::string>(), c.value("ms", -1.0), c.at("note").get<std::string>()});
  }
  if (layer.kind == LayerKind::kRun && tactics::find_tactic(layer.tactic) == nullptr) {
    return unsupported("{} uses tactic '{}', which this kiln does not have; rebuild the engine",
                       what, layer.tactic);
  }
  g.nodes.push_back(std::move(node));
  plan.layers.push_back(std::move(layer));
  return Status::ok();
}

Result<Profile> MetaReader::read_profile(const json& p, const ir::Graph& g) const {
  Profile prof;
  for (const json& r : p.at("inputs")) {
    InputRange range{r.at("name").get<std::string>(), r.at("min").get<Dims>(),
                     r.at("opt").get<Dims>(), r.at("max").get<Dims>()};
    for (const Dims* d : {&range.min, &range.opt, &range.max}) {
      KILN_RETURN_IF_ERROR(check_dims(*d, DType::kU8, "engine meta: profile range"));
    }
    prof.inputs.push_back(std::move(range));
  }
  if (prof.inputs.size() != g.inputs.size()) {
    return corrupt("engine meta: a profile has {} inputs, the graph {}", prof.inputs.size(),
                   g.inputs.size());
  }
  const json& mem = p.at("memory");
  MemoryLayout& layout = prof.memory;
  layout.arena_bytes = mem.at("arena_bytes").get<int64_t>();
  layout.no_reuse_bytes = mem.at("no_reuse_bytes").get<int64_t>();
  layout.peak_live_bytes = mem.at("peak_live_bytes").get<int64_t>();
  layout.strategy = mem.at("strategy").get<std::string>();
  layout.offsets.assign(g.values.size(), -1);
  layout.bytes.assign(g.values.size(), 0);
  for (const json& s : mem.at("slots")) {
    KILN_ASSIGN_OR_RETURN(ir::ValueId v, value_id(s.at(0), g, "memory slot"));
    const int64_t offset = s.at(1).get<int64_t>(), bytes = s.at(2).get<int64_t>();
    if (offset < 0 || bytes < 0 || offset % 64 != 0 || bytes > layout.arena_bytes ||
        offset > layout.arena_bytes - bytes) {
      return corrupt(
          "engine meta: memory slot of '{}' ({} bytes at {}) is outside the {}-byte "
          "arena",
          g.value(v).name, bytes, offset, layout.arena_bytes);
    }
    layout.offsets[static_cast<size_t>(v)] = offset;
    layout.bytes[static_cast<size_t>(v)] = bytes;
  }
  return prof;
}

Result<Plan> MetaReader::read(const json& m) {
  Plan plan;
  ir::Graph& g = plan.graph;
  const json& graph = m.at("graph");
  g.name = graph.at("name").get<std::string>();
  g.producer = graph.at("producer").get<std::string>();
  g.opset_imports = graph.at("opset_imports").get<std::map<std::string, int64_t>>();
  KILN_RETURN_IF_ERROR(read_values(m, g));
  if (!fp16_bits_.empty()) plan.fp16_bits.resize(g.values.size());
  for (auto& [v, bits] : fp16_bits_) plan.fp16_bits[static_cast<size_t>(v)] = std::move(bits);
  for (const json& id : m.at("inputs")) {
    KILN_ASSIGN_OR_RETURN(ir::ValueId v, value_id(id, g, "graph input"));
    g.inputs.push_back(v);
  }
  for (const json& id : m.at("outputs")) {
    KILN_ASSIGN_OR_RETURN(ir::ValueId v, value_id(id, g, "graph output"));
    g.outputs.push_back(v);
  }
  for (const json& l : m.at("layers")) KILN_RETURN_IF_ERROR(read_layer(l, plan));
  KILN_RETURN_IF_ERROR(check_dims_only(plan));
  for (const json& p : m.at("profiles")) {
    KILN_ASSIGN_OR_RETURN(Profile prof, read_profile(p, g));
    plan.profiles.push_back(std::move(prof));
  }
  if (plan.profiles.empty()) return corrupt("engine meta: no optimization profile");
  plan.required_features = m.at("required_features").get<uint64_t>();
  plan.build_log = m.at("build_log").get<std::vector<std::string>>();
  Status st = g.verify();
  if (st) st = ops::check_graph_ops(g);
  if (!st) return corrupt("engine meta: the graph is invalid: {}", st.message());
  return plan;
}

}  // namespace

Result<Plan> plan_from_sections(std::string_view meta, std::span<const std::byte> weights,
                                std::shared_ptr<const void> owner) {
  try {
    const json m = json::parse(meta);
    return MetaReader(weights, std::move(owner)).read(m);
  } catch (const json::exception& e) {
    return corrupt("engine meta section is malformed: {}", e.what());
  }
}

}  // namespace kiln::engine
