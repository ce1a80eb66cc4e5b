#include "report/folder_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/serialize.h"
#include "exec/exports.h"
#include "io/file_util.h"
#include "report/json_fields.h"
#include "report/summary_reader.h"

namespace kiln::cli::report {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kSweepIndexSchema = "kiln.sweep.index";

struct ProfileFile {
  fs::path path;  // absolute, normal
  std::string rel;
  std::vector<LayerTime> layers;
  bool used = false;
};

struct EngineFacts {
  std::optional<int64_t> bytes, activation_bytes;
};

struct FolderState {
  fs::path dir;  // absolute, normal
  ReportInputs out;
  std::vector<std::pair<fs::path, Run>> summaries;  // absolute path, run
  std::vector<ProfileFile> profiles;
  std::map<fs::path, fs::path> engine_of_summary;  // from sweep indexes
  std::map<fs::path, EngineFacts> engines;
};

fs::path normal(const fs::path& p) { return fs::absolute(p).lexically_normal(); }

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_message(const std::string& text) {
  try {
    const json unused = json::parse(text);
    (void)unused;
  } catch (const json::exception& e) {
    std::string m = e.what();
    const size_t end = m.find("] ");
    return end == std::string::npos ? m : m.substr(end + 2);
  }
  return "not JSON";
}

Status read_index(FolderState& st, const json& index, const fs::path& path,
                  const std::string& rel) {
  const Fields f(index, rel);
  KILN_ASSIGN_OR_RETURN(const json* runs, f.array("runs", Need::kValue));
  const Fields rf(*runs, rel, "runs");
  for (size_t i = 0; i < runs->size(); ++i) {
    const Fields r = rf.element(i);
    KILN_ASSIGN_OR_RETURN(const std::string summary, r.text("summary", Need::kValue));
    KILN_ASSIGN_OR_RETURN(const std::string engine, r.text("engine", Need::kOptional));
    const fs::path summary_path = normal(path.parent_path() / summary);
    std::error_code ec;
    if (!fs::is_regular_file(summary_path, ec)) {
      return r.error("summary", fmt::format("'{}' does not exist", summary_path.string()));
    }
    if (!engine.empty()) st.engine_of_summary[summary_path] = normal(path.parent_path() / engine);
  }
  return Status::ok();
}

// Reads one .json file into the state, or notes why it is skipped.
Status read_json_file(FolderState& st, const fs::path& path, const std::string& rel) {
  KILN_ASSIGN_OR_RETURN(const std::string text, io::read_file(path));
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    if (text.find(exec::kSummarySchema) != std::string::npos ||
        text.find(kSweepIndexSchema) != std::string::npos) {
      return invalid_argument("{}: not valid JSON: {}", rel, parse_message(text));
    }
    st.out.notes.push_back(fmt::format("skipped {}: not valid JSON", rel));
    return Status::ok();
  }
  const json* schema = j.is_object() && j.contains("schema") ? &j["schema"] : nullptr;
  if (schema != nullptr && *schema == exec::kSummarySchema) {
    KILN_ASSIGN_OR_RETURN(Run run, read_summary(j, rel));
    st.summaries.emplace_back(path, std::move(run));
  } else if (schema != nullptr && *schema == kSweepIndexSchema) {
    KILN_RETURN_IF_ERROR(read_index(st, j, path, rel));
  } else if (looks_like_profile(j)) {
    KILN_ASSIGN_OR_RETURN(auto layers, read_profile(j, rel));
    st.profiles.push_back({path, rel, std::move(layers)});
  } else {
    st.out.notes.push_back(fmt::format(
        "skipped {}: JSON that is not a benchmark summary, sweep index or per-layer profile", rel));
  }
  return Status::ok();
}

void note_other_file(FolderState& st, const fs::path& path, const std::string& rel) {
  if (path.filename() == "raw.jsonl") {
    st.out.notes.push_back(fmt::format(
        "skipped {}: bench/peers' raw rows (kiln report reads the per-engine summaries that "
        "bench/peers/summaries.py writes next to them)",
        rel));
  } else {
    st.out.notes.push_back(fmt::format("skipped {}: not a .json file", rel));
  }
}

// The engine file a run used: from a sweep index, else model.saved_engine / model.engine
// resolved against the working folder, the summary's folder, or as a name in the summary's folder.
std::optional<fs::path> engine_path(const FolderState& st, const fs::path& summary,
                                    const Run& run) {
  if (auto it = st.engine_of_summary.find(summary); it != st.engine_of_summary.end()) {
    return it->second;
  }
  if (run.engine.empty()) return std::nullopt;
  const fs::path e(run.engine);
  // (summary folder / an absolute path) is the absolute path itself.
  const fs::path candidates[] = {e, summary.parent_path() / e,
                                 summary.parent_path() / e.filename()};
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return normal(c);
  }
  return std::nullopt;
}

EngineFacts engine_facts(FolderState& st, const fs::path& path, const Run& run) {
  if (auto it = st.engines.find(path); it != st.engines.end()) return it->second;
  EngineFacts facts;
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec) facts.bytes = static_cast<int64_t>(size);
  if (!ec && run.backend == "kiln") {
    // The arena each profile plans at its max shapes; a context allocates its profile's.
    auto plan = engine::load_plan(path, {.check_cpu = false});
    if (plan) {
      int64_t arena = 0;
      for (const engine::Profile& p : plan->profiles) arena = std::max(arena, p.memory.arena_bytes);
      facts.activation_bytes = arena;
    } else {
      st.out.notes.push_back(fmt::format("engine {} of {}: activation memory not read ({})",
                                         path.string(), run.file, plan.status().to_string()));
    }
  }
  st.engines[path] = facts;
  return facts;
}

// The profile file a run's --exportProfile names: same path, else the same file name (in the
// summary's folder first).
ProfileFile* find_profile(FolderState& st, const fs::path& summary, const std::string& exported) {
  const fs::path e(exported);
  for (const fs::path& c : {normal(e), normal(summary.parent_path() / e)}) {
    for (ProfileFile& p : st.profiles) {
      if (p.path == c) return &p;
    }
  }
  ProfileFile* by_name = nullptr;
  for (ProfileFile& p : st.profiles) {
    if (p.path.filename() != e.filename()) continue;
    if (p.path.parent_path() == summary.parent_path()) return &p;
    if (by_name == nullptr) by_name = &p;
  }
  return by_name;
}

void attach_extras(FolderState& st) {
  for (auto& [path, run] : st.summaries) {
    if (auto engine = engine_path(st, path, run)) {
      const EngineFacts facts = engine_facts(st, *engine, run);
      run.engine_bytes = facts.bytes;
      run.activation_bytes = facts.activation_bytes;
    }
    for (const std::string& exported : run.profile_exports) {
      ProfileFile* p = find_profile(st, path, exported);
      if (p == nullptr) continue;
      p->used = true;
      if (run.layers.empty()) {
        run.layers = p->layers;
        run.profile_from = p->rel;
      }
    }
  }
  for (const ProfileFile& p : st.profiles) {
    if (!p.used) {
      st.out.notes.push_back(fmt::format(
          "skipped {}: a per-layer profile that no summary's command names (--exportProfile)",
          p.rel));
    }
  }
}

}  // namespace

Result<ReportInputs> read_report_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return not_found("'{}' does not exist", dir.string());
  if (!fs::is_directory(dir, ec)) {
    return invalid_argument("'{}' is not a folder: kiln report reads a folder of summaries",
                            dir.string());
  }
  FolderState st;
  st.dir = normal(dir);
  std::vector<fs::path> files;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(normal(it->path()));
  }
  if (ec) return io_error("cannot list '{}': {}", dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  st.out.files = files.size();
  if (files.empty())
    return invalid_argument("'{}' is empty: there is nothing to report", dir.string());
  for (const fs::path& f : files) {
    const std::string rel = f.lexically_relative(st.dir).generic_string();
    if (f.extension() == ".json") {
      KILN_RETURN_IF_ERROR(read_json_file(st, f, rel));
    } else {
      note_other_file(st, f, rel);
    }
  }
  if (st.summaries.empty()) {
    return invalid_argument(
        "no benchmark summary (schema {}) in '{}': {} file(s), none of them a summary",
        exec::kSummarySchema, dir.string(), files.size());
  }
  attach_extras(st);
  for (auto& [path, run] : st.summaries) st.out.runs.push_back(std::move(run));
  return std::move(st.out);
}

}  // namespace kiln::cli::report
