#include "exec/exec_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>

#include "build_command.h"
#include "exec/flags.h"
#include "options.h"
#include "parallel/thread_pool.h"

namespace kiln::cli::exec {
namespace {

struct Token {
  std::string_view name;
  std::optional<std::string_view> value;  // from --name=value
};

Token split_token(std::string_view arg) {
  if (arg == "-v") return {"--verbose", std::nullopt};
  if (arg == "-h") return {"--help", std::nullopt};
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos) return {arg, std::nullopt};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

const FlagDef* find_flag(std::string_view name) {
  for (const FlagDef& f : flag_table()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status unknown_flag(std::string_view name) {
  const std::string near = closest_flag(name);
  if (near.empty()) {
    return invalid_argument("unknown flag '{}' (kiln exec --help lists the flags)", name);
  }
  return invalid_argument("unknown flag '{}'; did you mean '{}'?", name, near);
}

// A trtexec flag with no CPU meaning (a note) or one kiln does not implement (an error). Returns
// false when `name` is neither.
Result<bool> handle_foreign_flag(const Token& t, ExecOptions& o) {
  for (const NoteFlag& f : note_flags()) {
    if (f.name != t.name) continue;
    if (f.arity == Arity::kNone && t.value) {
      return invalid_argument("{} takes no value (got '{}')", t.name, *t.value);
    }
    if (f.arity == Arity::kValue && (!t.value || t.value->empty())) {
      return invalid_argument("{} needs a value: {}=<value>", t.name, t.name);
    }
    o.notes.push_back(fmt::format("{}: ignored, {}", t.name, f.note));
    return true;
  }
  for (const UnsupportedFlag& f : unsupported_flags()) {
    if (f.name == t.name) {
      return unsupported("{} is a trtexec flag kiln exec does not implement: {}", t.name, f.reason);
    }
  }
  return false;
}

// Reads every flag; `i` walks `args` because a value may be the next argument.
Status read_flags(std::span<const std::string> args, ExecOptions& o) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      return invalid_argument("unexpected argument '{}': kiln exec takes --flag=value options",
                              arg);
    }
    Token t = split_token(arg);
    const FlagDef* def = find_flag(t.name);
    if (def == nullptr) {
      KILN_ASSIGN_OR_RETURN(const bool handled, handle_foreign_flag(t, o));
      if (!handled) return unknown_flag(t.name);
      continue;
    }
    if (def->arity == Arity::kNone && t.value) {
      return invalid_argument("{} takes no value (got '{}')", t.name, arg);
    }
    if (def->arity == Arity::kValue && !t.value) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        return invalid_argument("{} needs a value: {}=<{}>", t.name, t.name, def->value_hint);
      }
      t.value = args[++i];
    }
    if (!seen.insert(def->name).second && !def->repeatable) {
      return invalid_argument("{} is given more than once", def->name);
    }
    KILN_RETURN_IF_ERROR(def->apply(o, FlagUse{def->name, t.value}));
  }
  return Status::ok();
}

// The profiles of an ONNX build, by trtexec's rules: --shapes alone makes a static profile; with
// --minShapes/--optShapes/--maxShapes it only selects the inference shapes.
Status derive_profiles(ExecOptions& o) {
  const bool ranges = !o.min_shapes.empty() || !o.opt_shapes.empty() || !o.max_shapes.empty();
  if (o.onnx.empty()) {
    if (ranges) {
      return invalid_argument(
          "--minShapes/--optShapes/--maxShapes need --onnx: a loaded engine's profiles are fixed "
          "when it is built");
    }
    return Status::ok();
  }
  BuildOptions build;
  build.shapes = ranges ? "" : o.shapes;
  build.min_shapes = o.min_shapes;
  build.opt_shapes = o.opt_shapes;
  build.max_shapes = o.max_shapes;
  KILN_ASSIGN_OR_RETURN(o.profiles, profiles_from_flags(build));
  return Status::ok();
}

// Flags that need inference, refused with --skipInference rather than silently ignored.
Status check_skip_inference(const ExecOptions& o) {
  if (!o.skip_inference) return Status::ok();
  const std::pair<std::string_view, bool> needs_run[] = {
      {"--exportTimes", !o.export_times.empty()},
      {"--exportOutput", !o.export_output.empty()},
      {"--exportProfile", !o.export_profile.empty()},
      {"--exportSummary", !o.export_summary.empty()},
      {"--dumpOutput", o.dump_output},
      {"--dumpProfile", o.dump_profile},
      {"--loadInputs", !o.load_inputs.empty()},
  };
  for (const auto& [flag, given] : needs_run) {
    if (given) return invalid_argument("{} needs inference, which --skipInference skips", flag);
  }
  return Status::ok();
}

Status check_output_files(const ExecOptions& o) {
  const std::pair<std::string_view, const std::string*> files[] = {
      {"--saveEngine", &o.save_engine},       {"--exportTimes", &o.export_times},
      {"--exportProfile", &o.export_profile}, {"--exportLayerInfo", &o.export_layer_info},
      {"--exportOutput", &o.export_output},   {"--exportSummary", &o.export_summary},
  };
  for (size_t i = 0; i < std::size(files); ++i) {
    for (size_t j = i + 1; j < std::size(files); ++j) {
      if (!files[i].second->empty() && *files[i].second == *files[j].second) {
        return invalid_argument("{} and {} both write '{}'", files[i].first, files[j].first,
                                *files[i].second);
      }
    }
  }
  if (o.profiling_verbosity == ProfilingVerbosity::kNone &&
      (o.dump_layer_info || !o.export_layer_info.empty())) {
    return invalid_argument(
        "{} asks for layer information, which --profilingVerbosity=none removes",
        o.dump_layer_info ? "--dumpLayerInfo" : "--exportLayerInfo");
  }
  return Status::ok();
}

// --throughputSearch chooses the batch and the streams itself and reports one configuration.
Status check_throughput_search(const ExecOptions& o) {
  if (!o.throughput_search) {
    const std::pair<std::string_view, bool> search_only[] = {
        {"--batches", !o.batches.empty()},
        {"--maxStreams", o.max_streams != 0},
        {"--latencyBound", o.latency_bound_ms != 0},
    };
    for (const auto& [flag, given] : search_only) {
      if (given) return invalid_argument("{} needs --throughputSearch", flag);
    }
    return Status::ok();
  }
  const std::pair<std::string_view, bool> conflicts[] = {
      {"--infStreams", o.inf_streams != 1},
      {"--skipInference", o.skip_inference},
      {"--loadInputs", !o.load_inputs.empty()},
      {"--dumpProfile", o.dump_profile},
      {"--exportProfile", !o.export_profile.empty()},
      {"--separateProfileRun", o.separate_profile_run},
      {"--dumpOutput", o.dump_output},
      {"--exportOutput", !o.export_output.empty()},
  };
  for (const auto& [flag, given] : conflicts) {
    if (given) {
      return invalid_argument(
          "{} cannot be combined with --throughputSearch (which picks the "
          "batch and the streams; run again with the winner for it)",
          flag);
    }
  }
  return Status::ok();
}

// Flags that are parsed and validated now but whose feature comes with a later milestone.
Status check_implemented(const ExecOptions& o) {
  const bool precision = o.int8 || o.fp16 || o.best || !o.calib.empty() ||
                         !o.layer_precisions.empty() || o.precision_constraints != "none" ||
                         o.int8_weight_bits != 8;
  if (precision && o.onnx.empty()) {
    return invalid_argument(
        "precision flags (--int8, --fp16, --best, --calib, --int8WeightBits, --layerPrecisions, "
        "--precisionConstraints) need --onnx: they apply when an engine is built");
  }
  return Status::ok();
}

Status validate(ExecOptions& o) {
  if (o.onnx.empty() && o.load_engine.empty()) {
    return invalid_argument("give a model: --onnx=model.onnx or --loadEngine=engine.plan");
  }
  if (!o.onnx.empty() && !o.load_engine.empty()) {
    return invalid_argument("give either --onnx or --loadEngine, not both");
  }
  if (!o.save_engine.empty() && o.onnx.empty()) {
    return invalid_argument("--saveEngine needs --onnx (an engine is saved after it is built)");
  }
  if (!o.disable_passes.empty() && o.onnx.empty()) {
    return invalid_argument("--disablePasses needs --onnx (passes run when an engine is built)");
  }
  KILN_RETURN_IF_ERROR(derive_profiles(o));
  if (o.threads == 0) o.threads = std::max(1, parallel::default_thread_count() / o.inf_streams);
  KILN_RETURN_IF_ERROR(check_skip_inference(o));
  KILN_RETURN_IF_ERROR(check_output_files(o));
  KILN_RETURN_IF_ERROR(check_throughput_search(o));
  if (o.separate_profile_run && !o.wants_profile()) {
    o.notes.push_back("--separateProfileRun: no effect without --dumpProfile or --exportProfile");
  }
  return check_implemented(o);
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string closest_flag(std::string_view flag) {
  std::vector<std::string_view> names;
  for (const FlagDef& f : flag_table()) names.push_back(f.name);
  for (const NoteFlag& f : note_flags()) names.push_back(f.name);
  for (const UnsupportedFlag& f : unsupported_flags()) names.push_back(f.name);
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view name : names) {
    const size_t d = edit_distance(flag, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  // Close means a typo or two, fewer for short names: "--frob" suggests nothing.
  const size_t bare = flag.size() - std::min<size_t>(flag.find_first_not_of('-'), flag.size());
  const size_t allowed = std::clamp<size_t>(bare / 3, 1, 3);
  return best_distance <= allowed ? std::string(best) : "";
}

Result<std::vector<int64_t>> parse_batch_list(std::string_view flag, std::string_view value) {
  KILN_ASSIGN_OR_RETURN(auto items, split_list(flag, value));
  std::vector<int64_t> batches;
  for (const std::string& item : items) {
    int64_t b = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), b);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      return invalid_argument("{}: '{}' is not an integer", flag, item);
    }
    if (b < 1 || b > (1 << 20))
      return invalid_argument("{}: {} is not in [1, {}]", flag, b, 1 << 20);
    if (std::find(batches.begin(), batches.end(), b) != batches.end()) {
      return invalid_argument("{}: batch {} is given twice", flag, b);
    }
    batches.push_back(b);
  }
  std::sort(batches.begin(), batches.end());
  return batches;
}

Result<ExecOptions> parse_exec_args(std::span<const std::string> args) {
  ExecOptions o;
  o.args.assign(args.begin(), args.end());
  KILN_RETURN_IF_ERROR(read_flags(args, o));
  if (o.help) return o;
  KILN_RETURN_IF_ERROR(validate(o));
  return o;
}

std::string exec_help() {
  std::string out =
      "kiln exec: build or load an engine and benchmark it, with trtexec's flags and output.\n"
      "Flags are --flag=value (--flag value works too). Usage:\n"
      "  kiln exec --onnx=model.onnx [--saveEngine=m.plan] [--shapes=in:1x3x224x224] ...\n"
      "  kiln exec --loadEngine=m.plan [--shapes=...] [--exportSummary=s.json] ...\n";
  for (std::string_view group : {"Model", "Build", "Inference", "Reporting"}) {
    out += fmt::format("\n{} options:\n", group);
    for (const FlagDef& f : flag_table()) {
      if (f.group != group) continue;
      const std::string usage = f.arity == Arity::kNone
                                    ? std::string(f.name)
                                    : fmt::format("{}={}", f.name, f.value_hint);
      out += fmt::format("  {:<36} {}\n", usage, f.help);
    }
  }
  out += "\ntrtexec flags accepted with a note (no meaning on a CPU):\n ";
  for (const NoteFlag& f : note_flags()) out += fmt::format(" {}", f.name);
  out += "\n\nSee docs/exec.md for the statistics, the output and the JSON files.\n";
  return out;
}

}  // namespace kiln::cli::exec
