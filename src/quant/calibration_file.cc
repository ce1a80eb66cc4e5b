#include "quant/calibration_file.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/file_util.h"

namespace kiln::quant {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "kiln-calibration";
constexpr int kVersion = 1;

std::string_view trt_algorithm(CalibrationAlgo a) {
  // TensorRT has no percentile calibrator; its entropy calibrator accepts any scales in its cache.
  return a == CalibrationAlgo::kMinMax ? "MinMaxCalibration" : "EntropyCalibration2";
}

json histogram_json(const AbsHistogram& h) {
  json bins = json::array();
  for (size_t i = 0; i < h.counts().size(); ++i) {
    if (h.counts()[i] != 0) bins.push_back({i, h.counts()[i]});
  }
  return {{"range", h.range()}, {"bins", std::move(bins)}};
}

Result<TensorCalibration> tensor_from_json(const json& t, const std::string& name) {
  TensorCalibration out;
  out.amax = t.at("amax").get<double>();
  if (!(out.amax >= 0) || !std::isfinite(out.amax)) {
    return invalid_argument("tensor '{}' has amax {}, not a finite number >= 0", name, out.amax);
  }
  if (t.contains("histogram")) {
    const json& h = t.at("histogram");
    std::vector<uint64_t> counts(kHistogramBins, 0);
    for (const json& bin : h.at("bins")) {
      const auto i = bin.at(0).get<int64_t>();
      if (i < 0 || i >= kHistogramBins) {
        return invalid_argument("tensor '{}' has histogram bin {} outside 0..{}", name, i,
                                kHistogramBins - 1);
      }
      counts[static_cast<size_t>(i)] = bin.at(1).get<uint64_t>();
    }
    out.stats = AbsHistogram::from_parts(h.at("range").get<double>(), std::move(counts),
                                         t.at("min").get<float>(), t.at("max").get<float>(),
                                         t.value("non_finite", uint64_t{0}));
  }
  return out;
}

Result<Calibration> parse_kiln_json(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return invalid_argument("{} is not valid JSON", what);
  if (!j.is_object() || j.value("format", "") != kFormat) {
    return invalid_argument("{} is not a kiln calibration file (no \"format\": \"{}\")", what,
                            kFormat);
  }
  if (j.value("version", 0) != kVersion) {
    return invalid_argument("{} has version {}; this kiln reads version {}", what,
                            j.contains("version") ? j["version"].dump() : "none", kVersion);
  }
  try {
    Calibration c;
    KILN_ASSIGN_OR_RETURN(c.method.algo,
                          parse_calibration_algo(j.at("method").at("algo").get<std::string>()));
    c.method.percentile = j.at("method").value("percentile", 99.99);
    c.model_hash = j.at("model_hash").get<std::string>();
    c.data_hash = j.at("data_hash").get<std::string>();
    c.samples = j.at("samples").get<int64_t>();
    for (const auto& [name, t] : j.at("tensors").items()) {
      Result<TensorCalibration> tc = tensor_from_json(t, name);
      if (!tc.is_ok()) return tc.status().with_context(what);
      c.tensors.emplace(name, std::move(tc).value());
    }
    return c;
  } catch (const json::exception& e) {
    return invalid_argument("{} is malformed: {}", what, e.what());
  }
}

}  // namespace

std::string content_hash(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

std::string trt_scale_hex(float scale) {
  return fmt::format("{:x}", std::bit_cast<uint32_t>(scale));
}

std::string trt_cache_text(const Calibration& c, int trt_version) {
  std::string out = fmt::format("TRT-{}-{}\n", trt_version, trt_algorithm(c.method.algo));
  for (const auto& [name, t] : c.tensors) {
    out += fmt::format("{}: {}\n", name, trt_scale_hex(static_cast<float>(t.amax / 127.0)));
  }
  return out;
}

Result<Calibration> parse_trt_cache(std::string_view text, std::string_view what) {
  Calibration c;
  std::istringstream in{std::string(text)};
  std::string line;
  std::getline(in, line);
  if (line.rfind("TRT-", 0) != 0) {
    return invalid_argument(
        "{} does not start with a TensorRT cache header (TRT-<version>-<algorithm>)", what);
  }
  c.origin = line;
  c.method.algo = line.find("MinMax") != std::string::npos ? CalibrationAlgo::kMinMax
                                                           : CalibrationAlgo::kEntropy;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    // Names may contain ':' and spaces: the value follows the last colon.
    const size_t colon = line.find_last_of(':');
    if (colon == std::string::npos || colon + 2 > line.size()) {
      return invalid_argument("{} line {}: expected '<tensor>: <hex scale>', got '{}'", what,
                              line_no, line);
    }
    const std::string_view hex = std::string_view(line).substr(colon + 1);
    const size_t start = hex.find_first_not_of(' ');
    uint32_t bits = 0;
    const auto* first = hex.data() + (start == std::string_view::npos ? hex.size() : start);
    auto [ptr, ec] = std::from_chars(first, hex.data() + hex.size(), bits, 16);
    if (first == hex.data() + hex.size() || ec != std::errc() || ptr != hex.data() + hex.size()) {
      return invalid_argument("{} line {}: '{}' is not a hexadecimal float32", what, line_no,
                              std::string(hex));
    }
    const float scale = std::bit_cast<float>(bits);
    if (!std::isfinite(scale) || scale < 0) {
      return invalid_argument("{} line {}: scale {} of '{}' is not a finite number >= 0", what,
                              line_no, scale, line.substr(0, colon));
    }
    c.tensors[line.substr(0, colon)] = TensorCalibration{127.0 * scale, std::nullopt};
  }
  return c;
}

Result<Calibration> read_calibration(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("calibration file '{}' cannot be opened", path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const std::string what = fmt::format("calibration file '{}'", path.string());
  if (text.rfind("TRT-", 0) == 0) return parse_trt_cache(text, what);
  return parse_kiln_json(text, what);
}

Status write_calibration(const Calibration& c, const std::filesystem::path& path) {
  json tensors = json::object();
  for (const auto& [name, t] : c.tensors) {
    json j = {{"amax", t.amax}};
    if (t.stats) {
      j["min"] = t.stats->min();
      j["max"] = t.stats->max();
      j["non_finite"] = t.stats->non_finite();
      j["histogram"] = histogram_json(*t.stats);
    }
    tensors[name] = std::move(j);
  }
  json method = {{"algo", calibration_algo_name(c.method.algo)}};
  if (c.method.algo == CalibrationAlgo::kPercentile) method["percentile"] = c.method.percentile;
  const json j = {{"format", kFormat},
                  {"version", kVersion},
                  {"method", std::move(method)},
                  {"model_hash", c.model_hash},
                  {"data_hash", c.data_hash},
                  {"samples", c.samples},
                  {"tensors", std::move(tensors)}};
  return io::write_file_atomic(path, j.dump() + "\n");
}

}  // namespace kiln::quant
