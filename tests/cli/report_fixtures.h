#pragma once
// Hand-made benchmark summaries (schema kiln.exec.summary, the version kiln writes) for the
// kiln report tests: every required field present, the figures given by the test.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kiln::testing {

struct SummarySpec {
  std::string tool = "kiln exec";
  std::string model = "resnet50";
  std::string precision = "fp32";
  std::optional<int64_t> batch = 1;
  int streams = 1;
  std::optional<int64_t> threads = 2;
  double p50_ms = 10;
  std::optional<double> p99_ms = 12;
  double qps = 100;  // queries per second
};

nlohmann::json make_summary(const SummarySpec& spec);

// Writes `j` (dumped with indentation) to `path`, creating its folder.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& j);
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace kiln::testing
