#include "engine/builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/memory_layout.h"
#include "engine/shape_resolver.h"
#include "tactics/tactic.h"

namespace kiln::engine {
namespace {

Status check_range(const ir::Value& in, const ShapeRange& r) {
  const ir::TensorDesc& d = in.desc;
  for (const Dims* dims : {&r.min, &r.opt, &r.max}) {
    if (static_cast<int>(dims->size()) != d.rank()) {
      return invalid_argument("input '{}' is {} but the profile gives {} dims ({})", in.name,
                              d.to_string(), dims->size(), dims_to_string(*dims));
    }
    for (int k = 0; k < d.rank(); ++k) {
      const int64_t v = (*dims)[static_cast<size_t>(k)];
      if (v < 0 || (d.dim(k).is_known() && d.dim(k).value != v)) {
        return invalid_argument("input '{}' is {}; the profile's {} does not fit it", in.name,
                                d.to_string(), dims_to_string(*dims));
      }
    }
  }
  for (size_t k = 0; k < r.min.size(); ++k) {
    if (r.min[k] > r.opt[k] || r.opt[k] > r.max[k]) {
      return invalid_argument(
          "input '{}': the profile needs min <= opt <= max in every dim, got "
          "min {}, opt {}, max {}",
          in.name, dims_to_string(r.min), dims_to_string(r.opt), dims_to_string(r.max));
    }
  }
  return Status::ok();
}

Result<Profile> make_profile(const ir::Graph& g, const ProfileSpec* spec,
                             std::vector<std::string>& log) {
  Profile p;
  for (ir::ValueId v : g.inputs) {
    const ir::Value& in = g.value(v);
    if (!in.desc.has_rank()) {
      return unsupported("input '{}' has an unknown rank; kiln needs every input's rank", in.name);
    }
    ShapeRange r;
    auto it = spec ? spec->find(in.name) : ProfileSpec::const_iterator{};
    if (spec && it != spec->end()) {
      r = it->second;
    } else if (in.desc.is_static()) {
      r.min = r.opt = r.max = in.desc.static_dims();
    } else if (spec) {
      return invalid_argument("input '{}' is {}: the profile must give its min/opt/max shapes",
                              in.name, in.desc.to_string());
    } else {
      for (int k = 0; k < in.desc.rank(); ++k) {
        r.min.push_back(in.desc.dim(k).is_known() ? in.desc.dim(k).value : 1);
      }
      r.opt = r.max = r.min;
      log.push_back(fmt::format("warning: input '{}' is {} and no shapes were given: using {}",
                                in.name, in.desc.to_string(), dims_to_string(r.min)));
    }
    KILN_RETURN_IF_ERROR(check_range(in, r));
    p.inputs.push_back(InputRange{in.name, r.min, r.opt, r.max});
  }
  if (spec) {
    for (const auto& [name, range] : *spec) {
      const ir::ValueId v = g.find_value(name);
      if (v == ir::kNoValue || !g.value(v).is_graph_input) {
        std::vector<std::string> names;
        for (ir::ValueId i : g.inputs) names.push_back(g.value(i).name);
        return invalid_argument("the profile names '{}', which is not an input (inputs: {})", name,
                                fmt::join(names, ", "));
      }
    }
  }
  return p;
}

Result<std::vector<Profile>> make_profiles(const ir::Graph& g, const BuildOptions& options,
                                           std::vector<std::string>& log) {
  std::vector<Profile> out;
  if (options.profiles.empty()) {
    KILN_ASSIGN_OR_RETURN(Profile p, make_profile(g, nullptr, log));
    out.push_back(std::move(p));
  }
  for (size_t i = 0; i < options.profiles.size(); ++i) {
    Result<Profile> p = make_profile(g, &options.profiles[i], log);
    if (!p.is_ok()) return p.status().with_context(fmt::format("profile {}", i));
    out.push_back(std::move(p).value());
  }
  return out;
}

// Picks the first tactic that applies and does not allocate, else the reference fallback.
Status choose_tactics(Plan& plan, std::vector<std::string>& log) {
  for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
    if (plan.layers[n].kind != LayerKind::kRun) continue;
    const ir::Node& node = plan.graph.nodes[n];
    const tactics::LayerSpec spec = tactics::make_layer_spec(plan.graph, node);
    const tactics::Tactic* chosen = nullptr;
    std::vector<std::string> rejected;
    for (const tactics::Tactic* t : tactics::tactics_for(node.domain, node.op_type)) {
      std::string reason = t->why_not(spec);
      if (!reason.empty()) {
        rejected.push_back(fmt::format("{}: {}", t->name(), reason));
      } else if (chosen == nullptr || (chosen->allocates() && !t->allocates())) {
        chosen = t;
      }
    }
    if (chosen == nullptr) {
      return unsupported("node '{}' ({}): no tactic can run it ({})", node.name, node.op_type,
                         fmt::join(rejected, "; "));
    }
    plan.layers[n].tactic = std::string(chosen->name());
    plan.required_features |= chosen->required_features();
    log.push_back(fmt::format(
        "layer '{}' ({}): tactic {}{}", node.name, node.op_type, chosen->name(),
        rejected.empty() ? "" : fmt::format(" (rejected: {})", fmt::join(rejected, "; "))));
  }
  return Status::ok();
}

}  // namespace

Result<Plan> build_plan(ir::Graph graph, const BuildOptions& options) {
  Plan plan;
  KILN_ASSIGN_OR_RETURN(std::vector<Profile> profiles,
                        make_profiles(graph, options, plan.build_log));
  passes::PassLog pass_log;
  KILN_RETURN_IF_ERROR(passes::run_pipeline(graph, options.passes, pass_log));
  for (const passes::PassLogEntry& e : pass_log.entries()) {
    plan.build_log.push_back(fmt::format("[{}] {}", e.pass, e.message));
  }
  plan.graph = std::move(graph);
  for (LayerKind kind : classify_layers(plan.graph)) plan.layers.push_back(Layer{kind});
  KILN_RETURN_IF_ERROR(choose_tactics(plan, plan.build_log));
  for (size_t p = 0; p < profiles.size(); ++p) {
    std::vector<Dims> max_dims;
    for (const InputRange& r : profiles[p].inputs) max_dims.push_back(r.max);
    Result<MemoryLayout> layout = plan_arena(plan, max_dims);
    if (!layout.is_ok())
      return layout.status().with_context(fmt::format("profile {} (max shapes)", p));
    profiles[p].memory = std::move(layout).value();
  }
  plan.profiles = std::move(profiles);
  return plan;
}

}  // namespace kiln::engine
