#include <fmt/format.h>

#include <array>

#include "base/half_convert.h"
#include "engine/meta_json.h"

namespace kiln::engine {
namespace {

using nlohmann::json;

constexpr size_t kWeightAlignment = 64;

json shape_json(const ir::TensorDesc& d) {
  if (!d.has_rank()) return nullptr;
  json dims = json::array();
  for (const ir::Dim& dim : *d.shape) {
    if (dim.is_known()) {
      dims.push_back(dim.value);
    } else if (!dim.symbol.empty()) {
      dims.push_back(dim.symbol);
    } else {
      dims.push_back(nullptr);
    }
  }
  return dims;
}

// Zeros that alignment padding views point at.
constexpr std::array<char, kWeightAlignment> kWeightPadding{};

class WeightsWriter {
 public:
  Result<json> add(const Tensor& t, std::string_view what) {
    if (t.dtype() == DType::kString || dtype_size(t.dtype()) == 0) {
      return unsupported("{} is a {} tensor, which an engine cannot store", what,
                         dtype_name(t.dtype()));
    }
    const size_t pad = (kWeightAlignment - size_ % kWeightAlignment) % kWeightAlignment;
    if (pad > 0) out_.pieces.emplace_back(kWeightPadding.data(), pad);
    const size_t offset = size_ + pad;
    if (t.nbytes() > 0) {
      out_.pieces.emplace_back(static_cast<const char*>(t.raw_data()), t.nbytes());
      out_.tensors.push_back(t);
    }
    size_ = offset + t.nbytes();
    return json{{"dtype", dtype_name(t.dtype())},
                {"dims", t.dims()},
                {"offset", offset},
                {"bytes", t.nbytes()}};
  }
  WeightBytes take() { return std::move(out_); }

 private:
  WeightBytes out_;
  size_t size_ = 0;  // of the pieces so far
};

Result<json> attr_json(const ir::AttrValue& a, WeightsWriter& weights, std::string_view what) {
  const ir::AttrType type = ir::attr_value_type(a);
  json out = {{"type", ir::attr_type_name(type)}};
  if (const Tensor* t = std::get_if<Tensor>(&a)) {
    KILN_ASSIGN_OR_RETURN(out["value"], weights.add(*t, what));
    return out;
  }
  std::visit(
      [&](const auto& v) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, Tensor>) out["value"] = v;
      },
      a);
  return out;
}

Result<json> layer_json(const ir::Node& node, const Layer& layer, WeightsWriter& weights) {
  json attrs = json::object();
  for (const auto& [name, value] : node.attrs.all()) {
    KILN_ASSIGN_OR_RETURN(
        attrs[name],
        attr_json(value, weights, fmt::format("attribute '{}' of '{}'", name, node.name)));
  }
  json candidates = json::array();
  for (const tactics::TacticTiming& c : layer.candidates) {
    json entry = {{"tactic", c.tactic}, {"note", c.note}};
    if (c.ms >= 0) entry["ms"] = c.ms;
    candidates.push_back(std::move(entry));
  }
  json packed = nullptr;
  if (layer.packed.defined() && !layer.packed_at_load) {
    KILN_ASSIGN_OR_RETURN(
        packed, weights.add(layer.packed, fmt::format("packed weights of '{}'", node.name)));
  }
  return json{{"name", node.name},
              {"op", node.op_type},
              {"domain", node.domain},
              {"opset", node.opset},
              {"fused_from", node.fused_from},
              {"attrs", std::move(attrs)},
              {"inputs", node.inputs},
              {"outputs", node.outputs},
              {"kind", layer.kind == LayerKind::kShape ? "shape" : "run"},
              {"tactic", layer.tactic},
              {"precision", layer.precision},
              {"precision_note", layer.precision_note},
              {"candidates", std::move(candidates)},
              {"packed", std::move(packed)}};
}

json profile_json(const Profile& p) {
  json inputs = json::array();
  for (const InputRange& r : p.inputs) {
    inputs.push_back({{"name", r.input}, {"min", r.min}, {"opt", r.opt}, {"max", r.max}});
  }
  json slots = json::array();
  for (size_t v = 0; v < p.memory.offsets.size(); ++v) {
    if (p.memory.offsets[v] >= 0) slots.push_back({v, p.memory.offsets[v], p.memory.bytes[v]});
  }
  return {{"inputs", std::move(inputs)},
          {"memory",
           {{"arena_bytes", p.memory.arena_bytes},
            {"no_reuse_bytes", p.memory.no_reuse_bytes},
            {"peak_live_bytes", p.memory.peak_live_bytes},
            {"strategy", p.memory.strategy},
            {"slots", std::move(slots)}}}};
}

// An FP16 layer's weights as the file stores them: the binary16 bits the engine kept (its float32
// values dropped once packed at load: Engine::create), else the float32 values narrowed.
Result<Tensor> fp16_weights(const Plan& plan, size_t v, std::string_view what) {
  if (v < plan.fp16_bits.size() && plan.fp16_bits[v].defined()) return plan.fp16_bits[v];
  const Tensor& t = *plan.graph.values[v].initializer;
  if (t.raw_data() == nullptr) {  // dropped without its bits: a kiln bug
    return Status(StatusCode::kInternal,
                  fmt::format("{} of an FP16 layer has neither values nor binary16 bits", what));
  }
  return narrow_to_half(t);
}

Result<json> values_json(const Plan& plan, WeightsWriter& weights) {
  const ir::Graph& g = plan.graph;
  const std::vector<ValueClass> classes = classify_values(plan);
  const std::vector<bool> half = fp16_stored_values(plan);
  const std::vector<bool> packed_only = packed_only_values(plan);
  json values = json::array();
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    json j = {{"name", val.name},
              {"dtype", dtype_name(val.desc.dtype)},
              {"shape", shape_json(val.desc)},
              {"input", val.is_graph_input},
              {"output", val.is_graph_output}};
    // Only initializers a layer reads (or an input's default) are worth storing.
    if (val.initializer && (classes[v] == ValueClass::kConstant || val.is_graph_input)) {
      const std::string what = fmt::format("initializer '{}'", val.name);
      // Under their own keys: a kiln that predates them finds no weight for the value and
      // reports the graph as invalid, instead of reading binary16 as float32 or missing values.
      if (packed_only[v]) {
        const Tensor& t = *val.initializer;
        j["weight_dims"] = {{"dtype", dtype_name(t.dtype())}, {"dims", t.dims()}};
      } else if (half[v]) {
        KILN_ASSIGN_OR_RETURN(const Tensor bits, fp16_weights(plan, v, what));
        KILN_ASSIGN_OR_RETURN(j["weight_fp16"], weights.add(bits, what));
      } else {
        KILN_ASSIGN_OR_RETURN(j["weight"], weights.add(*val.initializer, what));
      }
    }
    values.push_back(std::move(j));
  }
  return values;
}

}  // namespace

Result<PlanSections> plan_to_sections(const Plan& plan) {
  const ir::Graph& g = plan.graph;
  WeightsWriter weights;
  PlanSections out;
  json& m = out.meta;
  m["graph"] = {{"name", g.name}, {"producer", g.producer}, {"opset_imports", g.opset_imports}};
  KILN_ASSIGN_OR_RETURN(m["values"], values_json(plan, weights));
  m["inputs"] = g.inputs;
  m["outputs"] = g.outputs;
  m["layers"] = json::array();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    KILN_ASSIGN_OR_RETURN(json layer, layer_json(g.nodes[n], plan.layers[n], weights));
    m["layers"].push_back(std::move(layer));
  }
  m["profiles"] = json::array();
  for (const Profile& p : plan.profiles) m["profiles"].push_back(profile_json(p));
  m["required_features"] = plan.required_features;
  m["build_log"] = plan.build_log;
  out.weights = weights.take();
  return out;
}

}  // namespace kiln::engine
