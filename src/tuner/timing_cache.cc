#include "tuner/timing_cache.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/cpu_features.h"
#include "io/file_util.h"

namespace kiln::tuner {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "kiln-timing-cache";
constexpr int kVersion = 1;
// How the times were taken (tuner/cold_cache.h): a cache from before every layer was timed cold
// holds warm times, and loads as another machine's (empty, with the note).
constexpr std::string_view kTimingMethod =
    "every layer cold, its input just written; in a pool segment or charged for breaking one";

Result<json> parse_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("timing cache '{}' cannot be opened", path.string());
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return invalid_argument("timing cache '{}' is not valid JSON; delete it to start afresh",
                            path.string());
  }
  return j;
}

Status check_header(const json& j, const std::filesystem::path& path) {
  if (!j.is_object() || j.value("format", "") != kFormat) {
    return invalid_argument("'{}' is not a kiln timing cache (no \"format\": \"{}\")",
                            path.string(), kFormat);
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kVersion) {
    return invalid_argument("timing cache '{}' has format version {}; this kiln reads version {}",
                            path.string(), j.contains("version") ? j["version"].dump() : "none",
                            kVersion);
  }
  if (!j.contains("machine") || !j["machine"].is_string() || !j.contains("layers") ||
      !j["layers"].is_object()) {
    return invalid_argument("timing cache '{}' lacks its \"machine\" or \"layers\"", path.string());
  }
  return Status::ok();
}

}  // namespace

Result<TimingCache> TimingCache::load(const std::filesystem::path& path, std::string machine,
                                      std::string* note) {
  TimingCache cache(std::move(machine));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (note)
      *note = fmt::format("timing cache '{}' does not exist yet: starting empty", path.string());
    return cache;
  }
  KILN_ASSIGN_OR_RETURN(json j, parse_file(path));
  KILN_RETURN_IF_ERROR(check_header(j, path));
  if (j["machine"] != cache.machine_) {
    if (note) {
      *note = fmt::format(
          "timing cache '{}' was measured on \"{}\", not this \"{}\": ignoring its times",
          path.string(), j["machine"].get<std::string>(), cache.machine_);
    }
    return cache;
  }
  for (const auto& [layer, tactics] : j["layers"].items()) {
    if (!tactics.is_object()) {
      return invalid_argument("timing cache '{}': layer entry '{}' is not an object", path.string(),
                              layer);
    }
    for (const auto& [tactic, ms] : tactics.items()) {
      if (!ms.is_number() || ms.get<double>() < 0) {
        return invalid_argument(
            "timing cache '{}': time of {} for '{}' is not a non-negative number", path.string(),
            tactic, layer);
      }
      cache.add(layer, tactic, ms.get<double>());
    }
  }
  if (note) *note = fmt::format("timing cache '{}': {} times loaded", path.string(), cache.size());
  return cache;
}

Status TimingCache::save(const std::filesystem::path& path) const {
  json layers = json::object();
  for (const auto& [layer, tactics] : layers_) {
    json t = json::object();
    for (const auto& [name, ms] : tactics) t[name] = ms;
    layers[layer] = std::move(t);
  }
  const json j = {{"format", kFormat},
                  {"version", kVersion},
                  {"machine", machine_},
                  {"layers", std::move(layers)}};
  const std::string text = j.dump(1) + "\n";
  return io::write_file_atomic(path, text);
}

std::optional<double> TimingCache::find(std::string_view layer, std::string_view tactic) const {
  auto l = layers_.find(layer);
  if (l == layers_.end()) return std::nullopt;
  auto t = l->second.find(tactic);
  if (t == l->second.end()) return std::nullopt;
  return t->second;
}

void TimingCache::add(const std::string& layer, const std::string& tactic, double ms) {
  layers_[layer][tactic] = ms;
}

size_t TimingCache::size() const {
  size_t n = 0;
  for (const auto& [layer, tactics] : layers_) n += tactics.size();
  return n;
}

std::string timing_machine_id(std::string_view kiln_version) {
  return fmt::format("{} | {} | kiln {} | {}", cpu_brand_string(),
                     cpu_features_to_string(host_cpu_features()), kiln_version, kTimingMethod);
}

}  // namespace kiln::tuner
