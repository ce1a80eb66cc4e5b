#include "inspect_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <chrono>
#include <ostream>

#include "base/cpu_features.h"
#include "engine/serialize.h"
#include "ops/kiln_fused.h"

namespace kiln::cli {
namespace {

using nlohmann::json;

json io_json(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  json out = json::array();
  for (ir::ValueId v : ids) {
    if (v == ir::kNoValue) continue;
    out.push_back({{"name", g.value(v).name}, {"shape", g.value(v).desc.to_string()}});
  }
  return out;
}

// The tactics considered for a layer, when there was a choice: each with its time or reason.
void print_candidates(std::ostream& out, const json& candidates) {
  if (candidates.size() < 2) return;
  for (const json& c : candidates) {
    const std::string time =
        c["ms"].is_null() ? std::string() : fmt::format("{:.3f} ms", c["ms"].get<double>());
    const std::string note = c["note"].get<std::string>();
    fmt::print(out, "      {} {}{}{}\n", c["chosen"].get<bool>() ? "*" : "-",
               c["tactic"].get<std::string>(), time.empty() ? "" : "  " + time,
               note.empty() ? "" : "  " + note);
  }
}

// Where the layer's output takes the bytes of its residual (ops::residual_input, run in place:
// engine/memory_layout.cc): the residual and the profiles, by index; null when in none.
json residual_in_place(const engine::Plan& plan, const ir::Node& node) {
  const int z = ops::residual_input(node);
  if (z < 0) return nullptr;
  const auto r = static_cast<size_t>(node.inputs[static_cast<size_t>(z)]);
  const auto y = static_cast<size_t>(node.outputs[0]);
  std::vector<size_t> profiles;
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    const std::vector<int64_t>& offsets = plan.profiles[p].memory.offsets;
    if (r < offsets.size() && y < offsets.size() && offsets[r] >= 0 && offsets[r] == offsets[y]) {
      profiles.push_back(p);
    }
  }
  if (profiles.empty()) return nullptr;
  return {{"residual", plan.graph.values[r].name}, {"profiles", profiles}};
}

json layer_json(const engine::Plan& plan, size_t n) {
  const ir::Graph& g = plan.graph;
  const ir::Node& node = g.nodes[n];
  const engine::Layer& layer = plan.layers[n];
  // Constants stored with their values, and those stored as dims only (packed at build).
  int64_t weight_bytes = 0, packed_only_bytes = 0;
  for (ir::ValueId v : node.inputs) {
    const Tensor* t = v != ir::kNoValue ? g.value(v).constant() : nullptr;
    if (t == nullptr) continue;
    (t->raw_data() == nullptr ? packed_only_bytes : weight_bytes) +=
        static_cast<int64_t>(t->nbytes());
  }
  json candidates = json::array();
  for (const tactics::TacticTiming& c : layer.candidates) {
    candidates.push_back({{"tactic", c.tactic},
                          {"ms", c.ms >= 0 ? json(c.ms) : json(nullptr)},
                          {"note", c.note},
                          {"chosen", c.tactic == layer.tactic}});
  }
  const tactics::Tactic* tactic = tactics::find_tactic(layer.tactic);
  return {{"index", n},
          {"name", node.name},
          {"op", node.domain.empty() ? node.op_type : node.domain + "." + node.op_type},
          {"onnx_nodes", node.origins()},
          {"kind", layer.kind == engine::LayerKind::kShape ? "shape" : "run"},
          {"tactic", layer.tactic},
          {"precision", layer.precision},
          {"precision_note", layer.precision_note},
          {"allocates", tactic != nullptr && tactic->allocates()},
          {"inputs", io_json(g, node.inputs)},
          {"outputs", io_json(g, node.outputs)},
          {"weight_bytes", weight_bytes},
          {"packed_weight_bytes", layer.packed.defined() ? layer.packed.nbytes() : 0},
          {"packed_only_weight_bytes", packed_only_bytes},
          {"residual_in_place", residual_in_place(plan, node)},
          {"candidates", std::move(candidates)}};
}

// The engine file's weights: the constants its layers read as they are (an FP16 layer's weights
// as the binary16 the file holds), the tactics' packed weights, and the constants those stand in
// for, stored as dims only.
json weights_json(const engine::Plan& plan) {
  const ir::Graph& g = plan.graph;
  const std::vector<engine::ValueClass> classes = engine::classify_values(plan);
  const std::vector<bool> half = engine::fp16_stored_values(plan);
  const std::vector<bool> dims = engine::packed_only_values(plan);
  int64_t read = 0, dims_only = 0, dims_only_values = 0, packed = 0;
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    if (!val.initializer || classes[v] != engine::ValueClass::kConstant) continue;
    const auto bytes = static_cast<int64_t>(val.initializer->nbytes());
    if (dims[v]) {
      dims_only += bytes;
      ++dims_only_values;
    } else {
      read += half[v] ? bytes / 2 : bytes;
    }
  }
  for (const engine::Layer& l : plan.layers) {
    if (l.packed.defined()) packed += static_cast<int64_t>(l.packed.nbytes());
  }
  return {{"read_bytes", read},
          {"packed_bytes", packed},
          {"dims_only_bytes", dims_only},
          {"dims_only_values", dims_only_values}};
}

json profiles_json(const engine::Plan& plan) {
  json out = json::array();
  for (const engine::Profile& p : plan.profiles) {
    json inputs = json::array();
    for (const engine::InputRange& r : p.inputs) {
      inputs.push_back({{"name", r.input},
                        {"min", dims_to_string(r.min)},
                        {"opt", dims_to_string(r.opt)},
                        {"max", dims_to_string(r.max)}});
    }
    int arena_values = 0;
    for (int64_t off : p.memory.offsets) arena_values += off >= 0 ? 1 : 0;
    out.push_back({{"inputs", std::move(inputs)},
                   {"memory",
                    {{"arena_bytes", p.memory.arena_bytes},
                     {"no_reuse_bytes", p.memory.no_reuse_bytes},
                     {"peak_live_bytes", p.memory.peak_live_bytes},
                     {"strategy", p.memory.strategy},
                     {"arena_tensors", arena_values}}}});
  }
  return out;
}

std::string mib(int64_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string shapes_text(const json& tensors) {
  std::vector<std::string> parts;
  for (const json& t : tensors) parts.push_back(t.at("shape").get<std::string>());
  return fmt::format("{}", fmt::join(parts, ", "));
}

void print_in_place(std::ostream& out, const json& layer, size_t profiles) {
  const json& in_place = layer["residual_in_place"];
  if (in_place.is_null()) return;
  const auto which = in_place["profiles"].get<std::vector<size_t>>();
  fmt::print(out,
             "      in place: the output is written over the residual '{}', read last here{}\n",
             in_place["residual"].get<std::string>(),
             which.size() == profiles ? "" : fmt::format(" (profiles {})", fmt::join(which, ", ")));
}

void print_text(const json& j, std::ostream& out) {
  fmt::print(out, "engine: {} ({} bytes, format {}, built by kiln {}), loaded in {:.1f} ms\n",
             j["path"].get<std::string>(), j["file_bytes"].get<uint64_t>(),
             j["format_version"].get<uint32_t>(), j["kiln_version"].get<std::string>(),
             j["load_ms"].get<double>());
  fmt::print(out, "CPU features needed: {}{}\n", j["cpu_features"].get<std::string>(),
             j["cpu_supported"].get<bool>() ? "" : "  (NOT available on this CPU)");
  const json& w = j["weights"];
  fmt::print(out, "weights: {} read as they are, {} packed at build",
             mib(w["read_bytes"].get<int64_t>()), mib(w["packed_bytes"].get<int64_t>()));
  if (w["dims_only_values"].get<int64_t>() > 0) {
    fmt::print(out, " (standing in for {} of constants stored as dims only: {} tensors)",
               mib(w["dims_only_bytes"].get<int64_t>()), w["dims_only_values"].get<int64_t>());
  }
  fmt::print(out, "\n");
  for (size_t p = 0; p < j["profiles"].size(); ++p) {
    const json& prof = j["profiles"][p];
    fmt::print(out, "profile {}:\n", p);
    for (const json& r : prof["inputs"]) {
      fmt::print(out, "  {}: min {} opt {} max {}\n", r["name"].get<std::string>(),
                 r["min"].get<std::string>(), r["opt"].get<std::string>(),
                 r["max"].get<std::string>());
    }
    const json& m = prof["memory"];
    fmt::print(out, "  arena {} for {} tensors (no reuse {}, peak live {}; {})\n",
               mib(m["arena_bytes"].get<int64_t>()), m["arena_tensors"].get<int>(),
               mib(m["no_reuse_bytes"].get<int64_t>()), mib(m["peak_live_bytes"].get<int64_t>()),
               m["strategy"].get<std::string>());
  }
  fmt::print(out, "layers ({}):\n", j["layers"].size());
  for (const json& l : j["layers"]) {
    const bool shape = l["kind"] == "shape";
    fmt::print(out, "  [{}] {} ({}) {} {}{}\n", l["index"].get<size_t>(),
               l["name"].get<std::string>(), l["op"].get<std::string>(),
               shape ? "shape layer" : l["tactic"].get<std::string>(),
               shape ? "" : l["precision"].get<std::string>(),
               !shape && l["allocates"].get<bool>() ? " (allocates while running)" : "");
    if (l["onnx_nodes"].size() > 1) {
      fmt::print(out, "      fused: {}\n",
                 fmt::join(l["onnx_nodes"].get<std::vector<std::string>>(), " + "));
    }
    if (!l["precision_note"].get<std::string>().empty()) {
      fmt::print(out, "      precision: {}\n", l["precision_note"].get<std::string>());
    }
    fmt::print(out, "      in: {}  out: {}", shapes_text(l["inputs"]), shapes_text(l["outputs"]));
    if (l["weight_bytes"].get<int64_t>() > 0) {
      fmt::print(out, "  weights: {} bytes", l["weight_bytes"].get<int64_t>());
    }
    if (l["packed_weight_bytes"].get<int64_t>() > 0) {
      fmt::print(out, "  packed at build: {} bytes", l["packed_weight_bytes"].get<int64_t>());
      if (l["packed_only_weight_bytes"].get<int64_t>() > 0) {
        fmt::print(out, " (in place of {} bytes of weights, stored as dims only)",
                   l["packed_only_weight_bytes"].get<int64_t>());
      }
    }
    fmt::print(out, "\n");
    print_in_place(out, l, j["profiles"].size());
    print_candidates(out, l["candidates"]);
  }
}

}  // namespace

Result<json> inspect_engine(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  engine::EngineFileInfo info;
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(path, {.check_cpu = false}, &info));
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  json j = {{"path", path},
            {"file_bytes", info.file_size},
            {"format_version", info.format_version},
            {"kiln_version", info.kiln_version},
            {"load_ms", load_ms},
            {"cpu_features",
             plan.required_features ? cpu_features_to_string(plan.required_features) : "none"},
            {"cpu_supported", (plan.required_features & ~host_cpu_features()) == 0},
            {"inputs", io_json(plan.graph, plan.graph.inputs)},
            {"outputs", io_json(plan.graph, plan.graph.outputs)},
            {"weights", weights_json(plan)},
            {"profiles", profiles_json(plan)},
            {"layers", json::array()},
            {"build_log", plan.build_log}};
  for (size_t n = 0; n < plan.layers.size(); ++n) j["layers"].push_back(layer_json(plan, n));
  return j;
}

Status inspect_command(const InspectOptions& opts, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(json j, inspect_engine(opts.engine));
  if (opts.format == "json") {
    out << j.dump(2) << "\n";
  } else {
    print_text(j, out);
  }
  return Status::ok();
}

}  // namespace kiln::cli
