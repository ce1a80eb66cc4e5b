#include "engine/builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <utility>

#include "base/cpu_features.h"
#include "engine/engine_file.h"
#include "engine/memory_layout.h"
#include "engine/precision.h"
#include "engine/shape_resolver.h"
#include "ops/infer_graph.h"
#include "parallel/thread_pool.h"
#include "tactics/tactic.h"
#include "tuner/tuner.h"

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

// One profile that fixes every input's shape (min = max, as the default profile of a model built
// without --shapes): the engine runs those shapes only, so the graph is specialized to them before
// the passes, as TensorRT does. Shape inference then turns every Shape -> Gather -> Concat chain
// into constants that folding removes, and the passes see numbers where the model had symbols (a
// Transpose that moves only a batch of 1 is a view; a residual's batch is provably the same).
Status specialize_static_profile(ir::Graph& g, const std::vector<Profile>& profiles,
                                 std::vector<std::string>& log) {
  if (profiles.size() != 1) return Status::ok();
  for (const InputRange& r : profiles[0].inputs) {
    if (r.min != r.max) return Status::ok();
  }
  std::vector<std::string> fixed;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    ir::Value& in = g.value(g.inputs[i]);
    if (in.desc.is_static()) continue;
    fixed.push_back(fmt::format("'{}' {} -> {}", in.name, in.desc.to_string(),
                                dims_to_string(profiles[0].inputs[i].min)));
    in.desc = ir::TensorDesc::of_dims(in.desc.dtype, profiles[0].inputs[i].min);
  }
  if (fixed.empty()) return Status::ok();
  log.push_back(fmt::format("the profile fixes every input's shape; built for them: {}",
                            fmt::join(fixed, ", ")));
  return ops::infer_graph_shapes(g).with_context("specializing the graph to the profile's shapes");
}

// The tuning shapes: profile 0's opt shapes, every value resolved.
Result<ResolvedShapes> tuning_shapes(const Plan& plan, const Profile& profile) {
  std::vector<Dims> opt;
  for (const InputRange& r : profile.inputs) opt.push_back(r.opt);
  Result<ResolvedShapes> shapes = resolve_shapes(plan.graph, plan.layers, opt);
  if (!shapes.is_ok()) return shapes.status().with_context("profile 0 (opt shapes)");
  return shapes;
}

tuner::TuningLayer tuning_layer(const Plan& plan, const ResolvedShapes& shapes,
                                const ir::Node& node) {
  tuner::TuningLayer l{tactics::make_layer_spec(plan.graph, node), {}, {}, {}};
  l.spec.fp16_weights =
      plan.layers[static_cast<size_t>(&node - plan.graph.nodes.data())].precision == kFp16Precision;
  for (ir::ValueId v : node.inputs) {
    const auto i = static_cast<size_t>(v);
    const bool present = v != ir::kNoValue;
    l.input_dims.push_back(present && shapes.dims[i] ? *shapes.dims[i] : Dims{});
    const Tensor* value = nullptr;
    if (present && plan.graph.value(v).initializer) value = &*plan.graph.value(v).initializer;
    if (present && shapes.shape_values[i]) value = &*shapes.shape_values[i];
    l.values.push_back(value);
    l.graph_inputs.push_back(present &&
                             std::find(plan.graph.inputs.begin(), plan.graph.inputs.end(), v) !=
                                 plan.graph.inputs.end());
  }
  for (ir::ValueId v : node.outputs) {
    l.output_dims.push_back(*shapes.dims[static_cast<size_t>(v)]);
  }
  return l;
}

std::string describe_choice(const ir::Node& node, const tuner::LayerChoice& c) {
  std::vector<std::string> others;
  for (const tactics::TacticTiming& t : c.candidates) {
    if (t.tactic == c.tactic->name()) continue;
    others.push_back(t.ms >= 0 ? fmt::format("{} {:.3f} ms", t.tactic, t.ms)
                               : fmt::format("{} ({})", t.tactic, t.note));
  }
  std::string chosen(c.tactic->name());
  for (const tactics::TacticTiming& t : c.candidates) {
    if (t.tactic != chosen) continue;
    chosen += t.ms >= 0
                  ? fmt::format(" {:.3f} ms{}", t.ms, t.note.empty() ? "" : " (" + t.note + ")")
                  : fmt::format(" ({})", t.note);
  }
  return fmt::format("layer '{}' ({}): {}{}", node.name, node.op_type, chosen,
                     others.empty() ? "" : fmt::format("; others: {}", fmt::join(others, "; ")));
}

Result<tuner::TunerOptions> tuner_options(const BuildOptions& options) {
  tuner::TunerOptions t;
  if (options.optimization_level < 0 || options.optimization_level > 5) {
    return invalid_argument("the builder optimization level must be 0 to 5, got {}",
                            options.optimization_level);
  }
  if (options.budget_s < 0) {
    return invalid_argument("the build budget must be >= 0 seconds, got {}", options.budget_s);
  }
  t.optimization_level = options.optimization_level;
  t.budget_s = options.budget_s;
  t.threads = options.threads;
  t.host_probe_us = options.host_probe_us;
  // An unknown KILN_MAX_ISA is the user's error: host_cpu_features() would read it as no features.
  KILN_RETURN_IF_ERROR(cpu_features_from_env().status());
  t.features = host_cpu_features();
  KILN_RETURN_IF_ERROR(tuner::apply_tactic_sources(options.tactic_sources, t.disabled_sources));
  return t;
}

// Whether a tactic the tuner may use (its source enabled, its CPU features there) runs `conv` on
// blocked tensors: what the layout pass asks before it makes a kiln.ConvNchw16c.
passes::BlockedConvCheck blocked_conv_check(const tuner::TunerOptions& t) {
  return [&t](const ir::Graph& g, const ir::Node& conv) {
    const tactics::LayerSpec spec = tactics::make_layer_spec(g, conv);
    for (const tactics::Tactic* tactic : tactics::tactics_for(conv.domain, conv.op_type)) {
      if (tactic->source() == "ref" || t.disabled_sources.count(tactic->source()) != 0 ||
          (tactic->required_features() & ~t.features) != 0) {
        continue;
      }
      if (tactic->why_not(spec).empty()) return true;
    }
    return false;
  };
}

// The bytes of a node's constant inputs.
size_t constant_bytes(const ir::Graph& g, const ir::Node& node) {
  size_t bytes = 0;
  for (ir::ValueId v : node.inputs) {
    if (v != ir::kNoValue && g.value(v).initializer) bytes += g.value(v).initializer->nbytes();
  }
  return bytes;
}

// The layers whose weights the builder packs, largest first so that threads taking them in turn
// finish together. An FP16 layer stores its weights once, as binary16 (the graph's initializer): a
// tactic packs them when the engine is loaded, so that no float32 copy lands in the file.
std::vector<size_t> packing_order(const Plan& plan,
                                  std::span<const tactics::Tactic* const> chosen) {
  std::vector<std::pair<size_t, size_t>> by_size;  // (bytes, layer)
  for (size_t n = 0; n < chosen.size(); ++n) {
    if (chosen[n] == nullptr || plan.layers[n].precision == kFp16Precision) continue;
    by_size.emplace_back(constant_bytes(plan.graph, plan.graph.nodes[n]), n);
  }
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> order;
  for (const auto& [bytes, n] : by_size) order.push_back(n);
  return order;
}

// One layer's packing on a pool thread, from which nothing may escape: what main() would have
// caught (out of memory, a library's exception) becomes the layer's error.
Status pack_layer(const tactics::Tactic& tactic, const ir::Graph& g, const ir::Node& node,
                  Tensor& packed) {
  try {
    KILN_ASSIGN_OR_RETURN(packed, tactic.prepack(tactics::make_layer_spec(g, node)));
    return Status::ok();
  } catch (const std::bad_alloc&) {
    return invalid_argument("out of memory ({} bytes of weights)", constant_bytes(g, node));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, e.what());
  }
}

// "1 round", "3 rounds".
std::string counted(int n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// Packs the chosen tactics' weights (Tactic::prepack, a pure function of a layer's constants), the
// layers shared out between the build's threads from a shared counter: packing is most of a
// rebuild from a warm timing cache (ResNet-50: 92 of 101 ms on one thread). A layer's error is
// reported as its own, the first in graph order.
Status pack_weights(Plan& plan, std::span<const tactics::Tactic* const> chosen, int threads,
                    std::vector<std::string>& log) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<size_t> order = packing_order(plan, chosen);
  std::vector<Status> status(chosen.size());
  std::atomic<size_t> next{0};
  const auto pack = [&](int64_t, int64_t) {
    for (size_t i = next++; i < order.size(); i = next++) {
      const size_t n = order[i];
      status[n] = pack_layer(*chosen[n], plan.graph, plan.graph.nodes[n], plan.layers[n].packed);
    }
  };
  const int workers = std::max(1, std::min<int>(threads, static_cast<int>(order.size())));
  if (workers == 1) {
    pack(0, 1);
  } else {
    parallel::ThreadPool pool(workers);
    pool.parallel_for(workers, 1, pack);
  }
  size_t packed_layers = 0, packed_bytes = 0;
  for (size_t n = 0; n < chosen.size(); ++n) {
    if (!status[n].is_ok()) {
      return status[n].with_context(fmt::format("layer '{}': packing weights for tactic {}",
                                                plan.graph.nodes[n].name, chosen[n]->name()));
    }
    packed_layers += plan.layers[n].packed.defined() ? 1 : 0;
    packed_bytes += plan.layers[n].packed.defined() ? plan.layers[n].packed.nbytes() : 0;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  log.push_back(fmt::format("packing: {} layers' weights, {:.1f} MiB, in {:.1f} ms on {}",
                            packed_layers, static_cast<double>(packed_bytes) / (1 << 20), ms,
                            counted(workers, "thread")));
  return Status::ok();
}

// The tuning line's word on the host running slow while layers were timed
// (tuner/host_speed_guard.h): empty when it did not.
std::string slow_host_note(const tuner::Tuner& t, int layers_retimed) {
  std::string note;
  if (t.rounds_retimed() > 0) {
    note += fmt::format("; {} timed again after the host ran slow",
                        counted(t.rounds_retimed(), "round"));
  }
  if (layers_retimed > 0) {
    note += fmt::format("; {} timed again, timed before the host ran at full speed",
                        counted(layers_retimed, "layer"));
  }
  if (t.rounds_slow() > 0) {
    note += fmt::format("; {} timed while it ran slow", counted(t.rounds_slow(), "round"));
  }
  return note;
}

// Times once more the layers timed before the host speed guard had seen the host at full speed
// (a slow stretch at the build's start), now that it knows how fast the host can run; the layers
// that took their times from the timing cache then take the new ones. Not once the build budget
// is spent, and a re-timing that timed nothing keeps the first choice (it would fall back to the
// preference order). Returns how many layers were timed again.
Result<int> retime_slow_layers(tuner::Tuner& tuner, const Plan& plan, const ResolvedShapes& shapes,
                               std::vector<tuner::LayerChoice>& choices) {
  const auto run = [&](size_t n) { return plan.layers[n].kind == LayerKind::kRun; };
  const auto timed = [](const tactics::TacticTiming& c) { return c.ms >= 0; };
  int retimed = 0;
  for (size_t n = 0; n < choices.size() && !tuner.budget_spent(); ++n) {
    if (!run(n) || !tuner.timed_slow(choices[n])) continue;
    KILN_ASSIGN_OR_RETURN(
        tuner::LayerChoice again,
        tuner.choose(tuning_layer(plan, shapes, plan.graph.nodes[n]), tuner::Retime::kYes));
    if (std::none_of(again.candidates.begin(), again.candidates.end(), timed)) continue;
    choices[n] = std::move(again);
    ++retimed;
  }
  for (size_t n = 0; retimed > 0 && n < choices.size(); ++n) {
    if (!run(n) || choices[n].probe_us > 0) continue;
    KILN_ASSIGN_OR_RETURN(choices[n], tuner.choose(tuning_layer(plan, shapes, plan.graph.nodes[n]),
                                                   tuner::Retime::kRefresh));
  }
  return retimed;
}

// Chooses every run layer's tactic by timing the candidates at profile 0's opt shapes, then packs
// the chosen tactics' weights.
Status choose_tactics(Plan& plan, const Profile& profile, tuner::TunerOptions options,
                      std::vector<std::string>& log, const BuildOptions& build) {
  KILN_ASSIGN_OR_RETURN(const ResolvedShapes shapes, tuning_shapes(plan, profile));
  const int threads = parallel::thread_count(options.threads);
  std::vector<const tactics::Tactic*> chosen(plan.graph.nodes.size(), nullptr);
  {
    tuner::Tuner tuner(std::move(options));
    size_t total = 0, done = 0;  // run layers, for BuildOptions::progress
    for (const Layer& l : plan.layers) total += l.kind == LayerKind::kRun;
    std::vector<tuner::LayerChoice> choices(plan.graph.nodes.size());
    for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
      if (plan.layers[n].kind != LayerKind::kRun) continue;
      KILN_ASSIGN_OR_RETURN(choices[n],
                            tuner.choose(tuning_layer(plan, shapes, plan.graph.nodes[n])));
      if (build.progress) build.progress(++done, total, plan.graph.nodes[n].name);
    }
    KILN_ASSIGN_OR_RETURN(const int retimed, retime_slow_layers(tuner, plan, shapes, choices));
    for (size_t n = 0; n < plan.graph.nodes.size(); ++n) {
      if (plan.layers[n].kind != LayerKind::kRun) continue;
      tuner::LayerChoice& choice = choices[n];
      chosen[n] = choice.tactic;
      plan.layers[n].tactic = std::string(choice.tactic->name());
      plan.required_features |= choice.tactic->required_features();
      log.push_back(describe_choice(plan.graph.nodes[n], choice));
      plan.layers[n].candidates = std::move(choice.candidates);
    }
    log.push_back(fmt::format(
        "tuning: {} timed, {} measured, {} from the timing cache, {:.1f} s measuring{}{}",
        counted(tuner.layers_timed(), "layer"), counted(tuner.times_measured(), "time"),
        tuner.times_cached(), tuner.seconds_measuring(), slow_host_note(tuner, retimed),
        tuner.budget_spent() ? "; the build budget was spent before the last layers" : ""));
  }  // the tuner's threads end before the packing's start
  return pack_weights(plan, chosen, threads, log);
}

Result<std::optional<tuner::TimingCache>> open_timing_cache(const std::string& path,
                                                            std::vector<std::string>& log) {
  if (path.empty()) return std::optional<tuner::TimingCache>();
  std::string note;
  KILN_ASSIGN_OR_RETURN(
      tuner::TimingCache cache,
      tuner::TimingCache::load(path, tuner::timing_machine_id(current_kiln_version()), &note));
  log.push_back(note);
  return std::optional<tuner::TimingCache>(std::move(cache));
}

}  // namespace

Result<Plan> build_plan(ir::Graph graph, const BuildOptions& options) {
  Plan plan;
  KILN_ASSIGN_OR_RETURN(std::vector<Profile> profiles,
                        make_profiles(graph, options, plan.build_log));
  KILN_RETURN_IF_ERROR(specialize_static_profile(graph, profiles, plan.build_log));
  quant::RangeTable explicit_scales = quant::RangeTable::explicit_scales();
  passes::PassLog pass_log;
  KILN_RETURN_IF_ERROR(passes::run_pipeline(graph, options.passes, pass_log, &explicit_scales));
  for (const passes::PassLogEntry& e : pass_log.entries()) {
    plan.build_log.push_back(fmt::format("[{}] {}", e.pass, e.message));
  }
  KILN_ASSIGN_OR_RETURN(
      const auto precision_notes,
      lower_precision(graph, options, explicit_scales.empty() ? nullptr : &explicit_scales,
                      plan.build_log));
  KILN_ASSIGN_OR_RETURN(tuner::TunerOptions tuning, tuner_options(options));
  passes::PassLog layout_log;
  KILN_RETURN_IF_ERROR(
      passes::run_layout_passes(graph, options.passes, layout_log, blocked_conv_check(tuning)));
  for (const passes::PassLogEntry& e : layout_log.entries()) {
    plan.build_log.push_back(fmt::format("[{}] {}", e.pass, e.message));
  }
  plan.graph = std::move(graph);
  for (LayerKind kind : classify_layers(plan.graph)) plan.layers.push_back(Layer{kind});
  label_precisions(plan, precision_notes);
  KILN_ASSIGN_OR_RETURN(std::optional<tuner::TimingCache> cache,
                        open_timing_cache(options.timing_cache_path, plan.build_log));
  if (cache) tuning.cache = &*cache;
  KILN_RETURN_IF_ERROR(
      choose_tactics(plan, profiles.front(), std::move(tuning), plan.build_log, options));
  for (size_t p = 0; p < profiles.size(); ++p) {
    std::vector<Dims> max_dims;
    for (const InputRange& r : profiles[p].inputs) max_dims.push_back(r.max);
    Result<MemoryLayout> layout = plan_arena(plan, max_dims);
    if (!layout.is_ok())
      return layout.status().with_context(fmt::format("profile {} (max shapes)", p));
    profiles[p].memory = std::move(layout).value();
  }
  plan.profiles = std::move(profiles);
  if (cache) {
    Status saved = cache->save(options.timing_cache_path);
    if (!saved.is_ok()) return saved.with_context("writing the timing cache");
  }
  return plan;
}

}  // namespace kiln::engine
