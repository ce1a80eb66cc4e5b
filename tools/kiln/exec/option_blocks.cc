#include "exec/option_blocks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exec/report.h"
#include "parallel/openmp_wait.h"

namespace kiln::cli::exec {

using json = nlohmann::ordered_json;

namespace {

void model_block(const ExecOptions& o, std::vector<std::string>& out) {
  out.push_back("=== Model Options ===");
  out.push_back(o.onnx.empty() ? "Format: kiln engine" : "Format: ONNX");
  out.push_back("Model: " + (o.onnx.empty() ? o.load_engine : o.onnx));
}

void build_block(const ExecOptions& o, std::vector<std::string>& out) {
  out.push_back("=== Build Options ===");
  if (o.onnx.empty()) {
    out.push_back("Precision: from the engine");
    out.push_back("Profiles: from the engine");
    return;
  }
  // trtexec's shape: the precisions the builder may choose from, then where INT8 ranges come from.
  const bool int8 = o.int8 || o.best;
  out.push_back(
      fmt::format("Precision: FP32{}{}", o.fp16 || o.best ? "+FP16" : "", int8 ? "+INT8" : ""));
  if (int8) out.push_back("Calibration: " + (o.calib.empty() ? "Dynamic" : o.calib));
  const bool ranges = !o.min_shapes.empty() || !o.opt_shapes.empty() || !o.max_shapes.empty();
  if (o.throughput_search && !ranges) {
    out.push_back("Input build shapes: one profile spanning the searched batches");
  } else if (o.profiles.empty()) {
    out.push_back("Input build shapes: model (dynamic dims set to 1)");
  } else {
    for (size_t p = 0; p < o.profiles.size(); ++p) {
      for (const auto& [name, range] : o.profiles[p]) {
        out.push_back(fmt::format("Input build shape (profile {}): {}={}+{}+{}", p, name,
                                  dims_to_string(range.min), dims_to_string(range.opt),
                                  dims_to_string(range.max)));
      }
    }
  }
  out.push_back(fmt::format("Builder optimization level: {}", o.builder_optimization_level));
  for (const auto& [pool, mib] : o.mem_pool_mib) {
    out.push_back(fmt::format("Memory pool {}: {} MiB (recorded)", pool, format_number(mib)));
  }
  out.push_back("Save engine: " + (o.save_engine.empty() ? "no" : o.save_engine));
}

void inference_block(const ExecOptions& o, std::vector<std::string>& out) {
  out.push_back("=== Inference Options ===");
  out.push_back(fmt::format("Streams: {}", o.inf_streams));
  out.push_back(fmt::format("Threads per stream: {}", o.threads));
  out.push_back(fmt::format("Iterations: {}", o.iterations));
  out.push_back(fmt::format("Duration: {}s (+ {}ms warm up)", format_number(o.duration_s),
                            format_number(o.warmup_ms)));
  if (o.inference_shapes.empty()) out.push_back("Input inference shapes: model");
  for (const auto& [name, dims] : o.inference_shapes) {
    out.push_back(fmt::format("Input inference shape: {}={}", name, dims_to_string(dims)));
  }
  if (o.load_inputs.empty()) out.push_back(fmt::format("Inputs: random (seed {})", o.seed));
  for (const auto& [name, file] : o.load_inputs) {
    out.push_back(fmt::format("Input: {} from {}", name, file));
  }
  out.push_back(
      fmt::format("Separate profiling: {}", o.separate_profile_run ? "Enabled" : "Disabled"));
}

void reporting_block(const ExecOptions& o, std::vector<std::string>& out) {
  out.push_back("=== Reporting Options ===");
  out.push_back(fmt::format("Verbose: {}", o.verbose ? "Enabled" : "Disabled"));
  out.push_back(fmt::format("Averages: {} inferences", o.avg_runs));
  std::vector<std::string> ps;
  for (double p : o.percentiles) ps.push_back(format_number(p));
  out.push_back(fmt::format("Percentiles: {}", fmt::join(ps, ",")));
  out.push_back(fmt::format("Dump output: {}", o.dump_output ? "Enabled" : "Disabled"));
  out.push_back(fmt::format("Profile: {}", o.wants_profile() ? "Enabled" : "Disabled"));
  const std::pair<const char*, const std::string*> exports[] = {
      {"timing", &o.export_times},          {"profile", &o.export_profile},
      {"layer info", &o.export_layer_info}, {"output", &o.export_output},
      {"summary", &o.export_summary},
  };
  for (const auto& [what, path] : exports) {
    if (!path->empty()) out.push_back(fmt::format("Export {} to JSON file: {}", what, *path));
  }
}

void cpu_block(const ExecOptions& o, const Environment& e, std::vector<std::string>& out) {
  out.push_back("=== CPU Information ===");
  out.push_back("CPU: " + e.cpu_model);
  out.push_back("Features: " + e.cpu_features_usable +
                (e.isa_cap == "native" ? "" : fmt::format(" (KILN_MAX_ISA={})", e.isa_cap)));
  out.push_back(fmt::format("Logical CPUs: {} ({} allowed for this process; {} used)",
                            e.logical_cpus, e.cpus_allowed, o.inf_streams * o.threads));
  if (!e.governor.empty()) out.push_back("Frequency governor: " + e.governor);
  if (e.load_average_1min >= 0) {
    out.push_back(fmt::format("Load average (1 min): {:.2f}", e.load_average_1min));
  }
  out.push_back(
      fmt::format("Thread pool: {}; OpenMP wait: {}", e.thread_pool,
                  parallel::describe_openmp_wait(e.openmp_wait_policy, e.openmp_spin_count)));
  out.push_back(fmt::format("kiln: {} ({}), {} build, {}", e.kiln_version, e.git_commit,
                            e.build_type, e.compiler));
}

std::string tensors_text(const json& tensors) {
  std::vector<std::string> parts;
  for (const json& t : tensors) {
    std::vector<std::string> dims;
    for (const json& d : t["Dimensions"]) dims.push_back(d.dump());
    parts.push_back(fmt::format("{}[{}]", t["Name"].get<std::string>(), fmt::join(dims, "x")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<std::string> option_block_lines(const ExecOptions& o, const Environment& env) {
  std::vector<std::string> out;
  model_block(o, out);
  build_block(o, out);
  inference_block(o, out);
  reporting_block(o, out);
  cpu_block(o, env, out);
  return out;
}

std::vector<std::string> layer_info_lines(const json& info) {
  std::vector<std::string> out;
  for (const json& l : info["Layers"]) {
    if (l.is_string()) {
      out.push_back(l.get<std::string>());
      continue;
    }
    out.push_back(fmt::format("{} ({}) {} {}  in: {}  out: {}", l["Name"].get<std::string>(),
                              l["LayerType"].get<std::string>(), l["TacticName"].get<std::string>(),
                              l["Precision"].get<std::string>(), tensors_text(l["Inputs"]),
                              tensors_text(l["Outputs"])));
  }
  out.push_back(fmt::format("Bindings: {}",
                            fmt::join(info["Bindings"].get<std::vector<std::string>>(), ", ")));
  return out;
}

}  // namespace kiln::cli::exec
