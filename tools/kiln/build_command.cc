#include "build_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <ostream>

#include "base/cpu_features.h"
#include "doctor_command.h"
#include "engine/memory_planner.h"
#include "engine/serialize.h"
#include "frontend/onnx/importer.h"
#include "options.h"
#include "passes/pipeline.h"

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Result<std::map<std::string, Dims>> parse_one(std::string_view flag,
                                              const std::vector<std::string>& values, size_t i) {
  if (i >= values.size()) return std::map<std::string, Dims>{};
  return parse_shapes(flag, values[i]);
}

// Profile i from the i-th --minShapes/--optShapes/--maxShapes, which must name the same inputs; a
// missing --optShapes defaults to --maxShapes, and --optShapes alone means min = opt = max, as in
// trtexec.
Result<engine::ProfileSpec> profile_from_flags(const BuildOptions& o, size_t i) {
  KILN_ASSIGN_OR_RETURN(auto mins, parse_one("--minShapes", o.min_shapes, i));
  KILN_ASSIGN_OR_RETURN(auto opts, parse_one("--optShapes", o.opt_shapes, i));
  KILN_ASSIGN_OR_RETURN(auto maxs, parse_one("--maxShapes", o.max_shapes, i));
  if (o.min_shapes.empty() && o.max_shapes.empty()) mins = maxs = opts;
  if (opts.empty()) opts = maxs;
  engine::ProfileSpec spec;
  for (const auto& [name, max] : maxs) {
    if (!mins.count(name) || !opts.count(name)) {
      return invalid_argument(
          "profile {}: input '{}' is in --maxShapes but not in --minShapes "
          "and --optShapes",
          i, name);
    }
    spec[name] = ShapeRange{mins.at(name), opts.at(name), max};
  }
  for (const auto& [name, dims] : mins) {
    if (!maxs.count(name)) {
      return invalid_argument("profile {}: input '{}' is in --minShapes but not in --maxShapes", i,
                              name);
    }
  }
  return spec;
}

std::string mib(int64_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

void print_summary(std::ostream& out, const engine::Plan& plan, bool verbose) {
  std::map<std::string, int> per_pass;
  for (const std::string& line : plan.build_log) {
    if (verbose) fmt::print(out, "[V] {}\n", line);
    if (line.rfind("warning: ", 0) == 0 && !verbose) fmt::print(out, "[W] {}\n", line.substr(9));
    const bool tuning = line.rfind("tuning: ", 0) == 0 || line.rfind("packing: ", 0) == 0 ||
                        line.rfind("timing cache ", 0) == 0 || line.rfind("int8: ", 0) == 0 ||
                        line.rfind("fp16: ", 0) == 0;
    if (tuning && !verbose) fmt::print(out, "[I] {}\n", line);
    if (line.size() > 1 && line[0] == '[') ++per_pass[line.substr(1, line.find(']') - 1)];
  }
  std::vector<std::string> counts;
  for (const auto& [pass, n] : per_pass) counts.push_back(fmt::format("{} {}", pass, n));
  if (!counts.empty()) fmt::print(out, "[I] rewrites: {}\n", fmt::join(counts, ", "));
  std::map<std::string, int> tactics, precisions;
  int shape_layers = 0;
  for (const engine::Layer& l : plan.layers) {
    if (l.kind == engine::LayerKind::kShape) {
      ++shape_layers;
    } else {
      ++tactics[l.tactic];
      ++precisions[l.precision];
    }
  }
  if (precisions.size() > 1) {
    std::vector<std::string> pcounts;
    for (const auto& [p, n] : precisions) pcounts.push_back(fmt::format("{} {}", p, n));
    fmt::print(out, "[I] layer precisions: {}\n", fmt::join(pcounts, ", "));
  }
  std::vector<std::string> tcounts;
  for (const auto& [t, n] : tactics) tcounts.push_back(fmt::format("{} x{}", t, n));
  fmt::print(out, "[I] {} layers ({} shape layers): {}\n", plan.layers.size(), shape_layers,
             fmt::join(tcounts, ", "));
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    const engine::MemoryLayout& m = plan.profiles[p].memory;
    fmt::print(out, "[I] profile {}: activation arena {} (no reuse {}, peak live {}, {})\n", p,
               mib(m.arena_bytes), mib(m.no_reuse_bytes), mib(m.peak_live_bytes), m.strategy);
  }
  fmt::print(out, "[I] CPU features needed: {}\n",
             plan.required_features ? cpu_features_to_string(plan.required_features) : "none");
}

}  // namespace

Result<std::vector<engine::ProfileSpec>> profiles_from_flags(const BuildOptions& o) {
  std::vector<engine::ProfileSpec> out;
  if (!o.shapes.empty()) {
    if (!o.min_shapes.empty() || !o.max_shapes.empty() || !o.opt_shapes.empty()) {
      return invalid_argument("give either --shapes or --minShapes/--optShapes/--maxShapes");
    }
    KILN_ASSIGN_OR_RETURN(auto shapes, parse_shapes("--shapes", o.shapes));
    engine::ProfileSpec spec;
    for (const auto& [name, dims] : shapes) spec[name] = ShapeRange{dims, dims, dims};
    out.push_back(std::move(spec));
    return out;
  }
  const size_t n = std::max({o.min_shapes.size(), o.opt_shapes.size(), o.max_shapes.size()});
  const bool opt_only = o.min_shapes.empty() && o.max_shapes.empty();
  if (!opt_only && (o.min_shapes.size() != n || o.max_shapes.size() != n ||
                    (!o.opt_shapes.empty() && o.opt_shapes.size() != n))) {
    return invalid_argument(
        "each profile needs --minShapes and --maxShapes (and --optShapes if "
        "any profile has it), or --optShapes alone: got {} min, {} opt, {} max",
        o.min_shapes.size(), o.opt_shapes.size(), o.max_shapes.size());
  }
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(engine::ProfileSpec spec, profile_from_flags(o, i));
    out.push_back(std::move(spec));
  }
  return out;
}

std::string list_passes() {
  std::string out;
  for (const passes::PassDef& p : passes::pipeline_passes()) {
    out += fmt::format("{:<32} {}\n", p.name, p.description);
  }
  out += "after precision lowering:\n";
  for (const passes::PassDef& p : passes::layout_passes()) {
    out += fmt::format("{:<32} {}\n", p.name, p.description);
  }
  return out;
}

Status build_command(const BuildOptions& opts, std::ostream& out, ProgressTarget progress) {
  if (opts.onnx.empty()) return invalid_argument("--onnx is required");
  if (opts.save_engine.empty()) return invalid_argument("--saveEngine is required");
  engine::BuildOptions options;
  KILN_ASSIGN_OR_RETURN(options.profiles, profiles_from_flags(opts));
  if (!opts.disable_passes.empty()) {
    KILN_ASSIGN_OR_RETURN(options.passes.disabled,
                          split_list("--disablePasses", opts.disable_passes));
  }
  options.optimization_level = opts.optimization_level;
  options.budget_s = opts.build_budget_s;
  options.timing_cache_path = opts.timing_cache_file;
  options.threads = opts.threads;
  if (!opts.tactic_sources.empty()) {
    KILN_ASSIGN_OR_RETURN(options.tactic_sources,
                          split_list("--tacticSources", opts.tactic_sources));
  }
  PrecisionFlags precision = opts.precision;
  if (!opts.layer_precisions.empty()) {
    KILN_ASSIGN_OR_RETURN(
        precision.layer_precisions,
        parse_named_values("--layerPrecisions", opts.layer_precisions, "precision"));
  }
  std::vector<std::string> warnings;
  KILN_RETURN_IF_ERROR(apply_precision_flags(precision, opts.onnx, options, warnings));
  for (const std::string& w : warnings) fmt::print(out, "[W] {}\n", w);
  if (options.int8) fmt::print(out, "[I] {}\n", int8_path_line(host_cpu_features()));
  auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(ir::Graph graph, frontend::import_onnx_file(opts.onnx));
  const size_t onnx_nodes = graph.nodes.size();
  fmt::print(out, "[I] model: {} ({} nodes), imported in {:.1f} ms\n", opts.onnx, onnx_nodes,
             ms_since(t0));
  t0 = Clock::now();
  Progress bar(progress, "build", 0);
  options.progress = [&](size_t done, size_t total, std::string_view layer) {
    bar.set_total(total);
    bar.update(done, layer);
  };
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::build_plan(std::move(graph), options));
  const double build_ms = ms_since(t0);
  print_summary(out, plan, opts.verbose);
  fmt::print(out, "[I] built in {:.1f} ms: {} ONNX nodes -> {} layers\n", build_ms, onnx_nodes,
             plan.layers.size());
  t0 = Clock::now();
  KILN_RETURN_IF_ERROR(engine::save_plan(plan, opts.save_engine));
  fmt::print(out, "[I] engine saved to {} ({} bytes) in {:.1f} ms\n", opts.save_engine,
             std::filesystem::file_size(opts.save_engine), ms_since(t0));
  return Status::ok();
}

}  // namespace kiln::cli
