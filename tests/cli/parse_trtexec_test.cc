// kiln parse-trtexec: trtexec logs of every format generation (7.x blocks, 8.0-8.3 with the
// end-to-end line and p99 only, 10.x, 11.x with zero transfers, inf/nan and CRLF) read into the
// summary schema that `kiln exec --exportSummary` writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json_schema.h"
#include "kiln_process.h"
#include "report/trtexec_log.h"
#include "report/trtexec_summary.h"
#include "testing/onnx_builder.h"

namespace kiln::cli::report {
namespace parse_trtexec_test {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string log_path(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/tests/cli/trtexec_logs/" + name;
}

TrtexecLog parse(const std::string& name) {
  auto log = parse_trtexec_log(testing::read_text(log_path(name)), name);
  EXPECT_TRUE(log.is_ok()) << log.status().to_string();
  return log.is_ok() ? *log : TrtexecLog{};
}

json summary_of(const TrtexecLog& log, const TrtexecImportOptions& o = {}) {
  auto j = trtexec_summary_json(log, o);
  EXPECT_TRUE(j.is_ok()) << j.status().to_string();
  if (!j.is_ok()) return nullptr;
  const json plain = json::parse(j->dump());
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const auto errors = testing::check_schema(plain, json::parse(in));
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  return plain;
}

TEST(TrtexecLog, VersionNumbersDecode) {
  EXPECT_EQ(tensorrt_version_text("8601"), "8.6.1");
  EXPECT_EQ(tensorrt_version_text("8203"), "8.2.3");
  EXPECT_EQ(tensorrt_version_text("100200"), "10.2.0");
  EXPECT_EQ(tensorrt_version_text("110000"), "11.0.0");
  EXPECT_EQ(tensorrt_version_text("7.1"), "7.1");
}

TEST(TrtexecLog, TensorRT10Summary) {
  const TrtexecLog log = parse("trt10_2.log");
  EXPECT_EQ(log.format, "summary");
  EXPECT_EQ(log.tensorrt_version, "10.2.0");
  EXPECT_EQ(log.command.front(), "--onnx=models/resnet50.onnx");
  EXPECT_EQ(log.started_at, "2024-10-03T10:47:01");
  EXPECT_EQ(log.device, "NVIDIA A10");
  EXPECT_EQ(log.warmup_queries, 66);
  EXPECT_EQ(log.queries, 652);
  EXPECT_DOUBLE_EQ(*log.build_s, 48.1173);
  EXPECT_DOUBLE_EQ(*log.throughput_qps, 130.298);
  ASSERT_TRUE(log.latency && log.compute && log.enqueue && log.h2d && log.d2h);
  EXPECT_FALSE(log.end_to_end);
  EXPECT_DOUBLE_EQ(*log.latency->median, 7.16092);
  ASSERT_EQ(log.compute->percentiles.size(), 3u);
  EXPECT_EQ(log.compute->percentiles[1].percentile, 95);
  EXPECT_DOUBLE_EQ(*log.compute->percentiles[1].ms, 10.8175);
  EXPECT_DOUBLE_EQ(*log.compute_time_s, 4.94479);
  ASSERT_EQ(log.warnings.size(), 1u);  // the continuation line is joined to its warning
  EXPECT_NE(log.warnings[0].find("locking GPU clock"), std::string::npos);
  EXPECT_DOUBLE_EQ(*log.compute_cov_percent, 18.2364);
}

TEST(TrtexecLog, TensorRT8EndToEndLineAndP99Only) {
  const TrtexecLog log = parse("trt8_2.log");
  EXPECT_EQ(log.tensorrt_version, "8.2.3");
  ASSERT_TRUE(log.end_to_end);
  EXPECT_DOUBLE_EQ(*log.end_to_end->mean, 9.50469);
  ASSERT_EQ(log.latency->percentiles.size(), 1u);
  EXPECT_EQ(log.latency->percentiles[0].percentile, 99);
  EXPECT_TRUE(log.warnings.empty());
}

TEST(TrtexecLog, TensorRT7Blocks) {
  const TrtexecLog log = parse("trt7_1.log");
  EXPECT_EQ(log.format, "legacy");
  EXPECT_EQ(log.tensorrt_version, "");  // 7.x banners carry no version
  EXPECT_EQ(log.command, (std::vector<std::string>{"--onnx=yolov3.onnx", "--explicitBatch"}));
  EXPECT_DOUBLE_EQ(*log.latency->min, 16.2468);
  EXPECT_DOUBLE_EQ(*log.end_to_end->max, 309.081);
  EXPECT_DOUBLE_EQ(*log.end_to_end->percentiles[0].ms, 34.9214);
  EXPECT_DOUBLE_EQ(*log.compute->median, 15.8546);
  ASSERT_EQ(log.compute->percentiles.size(), 1u);
  EXPECT_EQ(log.compute->percentiles[0].percentile, 99);
  EXPECT_DOUBLE_EQ(*log.compute->percentiles[0].ms, 17.2852);
  EXPECT_EQ(log.end_to_end->percentiles[0].percentile, 99);
  EXPECT_FALSE(log.enqueue->mean);  // this block printed no mean
  EXPECT_DOUBLE_EQ(*log.enqueue->median, 1.18286);
  EXPECT_DOUBLE_EQ(*log.compute_time_s, 2.97226);
  EXPECT_DOUBLE_EQ(*log.host_walltime_s, 3.03571);
}

TEST(TrtexecLog, InfinitiesZerosExponentsAndCrlf) {
  const TrtexecLog log = parse("trt11_0.log");
  EXPECT_EQ(log.tensorrt_version, "11.0.0");
  EXPECT_EQ(log.device, "NVIDIA H100 80GB HBM3");  // no trailing \r
  EXPECT_FALSE(log.enqueue->min);
  EXPECT_FALSE(log.enqueue->mean);
  EXPECT_EQ(*log.h2d->max, 0);
  EXPECT_DOUBLE_EQ(*log.d2h->percentiles[2].ms, 1.2e-05);
  EXPECT_DOUBLE_EQ(log.latency->percentiles[2].percentile, 99.9);
}

TEST(TrtexecLog, LinesWithoutTheLoggerPrefixStillParse) {
  const std::string text =
      "=== Performance summary ===\nThroughput: 5 qps\n"
      "Latency: min = 1 ms, max = 3 ms, mean = 2 ms, median = 2 ms, percentile(99%) = 3 ms\n"
      "GPU Compute Time: min = 1 ms, max = 3 ms, mean = 2 ms, median = 2 ms, percentile(99%) = "
      "3 ms\n";
  auto log = parse_trtexec_log(text, "pasted");
  ASSERT_TRUE(log.is_ok()) << log.status().to_string();
  EXPECT_DOUBLE_EQ(*log->throughput_qps, 5);
  EXPECT_EQ(log->started_at, "");
}

TEST(TrtexecLog, LogsWithoutFiguresAreErrorsThatSayWhy) {
  auto failed = parse_trtexec_log(testing::read_text(log_path("failed.log")), "failed.log");
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("failed.log: no performance summary"),
            std::string::npos);
  EXPECT_NE(failed.status().message().find("&&&& FAILED"), std::string::npos);
  auto partial =
      parse_trtexec_log(testing::read_text(log_path("no_compute.log")), "no_compute.log");
  ASSERT_FALSE(partial.is_ok());
  EXPECT_NE(partial.status().message().find("no 'GPU Compute Time' line"), std::string::npos);
  EXPECT_FALSE(parse_trtexec_log("", "empty.log").is_ok());
  EXPECT_FALSE(parse_trtexec_log(std::string("\0\x01\xff garbage", 12), "bin").is_ok());
}

TEST(TrtexecSummary, ModelPrecisionBatchAndPolicyFromTheCommandLine) {
  const json j = summary_of(parse("trt10_2.log"), {"trt10_2.log", "ignored", "int8", 3});
  EXPECT_EQ(j["source"]["tool"], "trtexec");
  EXPECT_EQ(j["source"]["version"], "10.2.0");
  EXPECT_EQ(j["model"]["name"], "resnet50");
  EXPECT_EQ(j["model"]["batch"], 8);           // from --shapes, not the option
  EXPECT_EQ(j["build"]["precision"], "fp16");  // from the command line, not the option
  EXPECT_EQ(j["build"]["build_ms"], 48117.3);
  EXPECT_EQ(j["policy"]["warmup_ms"], 500);
  EXPECT_EQ(j["policy"]["min_duration_s"], 5);
  EXPECT_EQ(j["policy"]["min_iterations"], 10);  // trtexec's default
  EXPECT_EQ(j["policy"]["percentiles"], json::parse("[90, 95, 99]"));
  EXPECT_EQ(j["environment"]["device"], "NVIDIA A10");
  EXPECT_EQ(j["results"]["queries_per_stream"], json::parse("[652]"));
  EXPECT_EQ(j["results"]["compute_ms"]["cov_percent"], 18.2364);
  EXPECT_EQ(j["results"]["stable"], false);
  EXPECT_TRUE(j["results"]["end_to_end_ms"].is_null());
}

TEST(TrtexecSummary, ImplicitBatchStreamsAndInt8) {
  const json j = summary_of(parse("trt8_2.log"));
  EXPECT_EQ(j["model"]["name"], "yolov5s_int8");
  EXPECT_EQ(j["model"]["engine"], "yolov5s_int8.engine");
  EXPECT_EQ(j["model"]["batch"], 4);
  EXPECT_EQ(j["build"]["precision"], "int8");
  EXPECT_EQ(j["execution"]["inference_streams"], 2);
  EXPECT_TRUE(j["results"]["queries_per_stream"].is_null());  // not split per stream in the log
  EXPECT_EQ(j["results"]["stable"], true);
  EXPECT_EQ(j["results"]["end_to_end_ms"]["median"], 9.4209);
}

TEST(TrtexecSummary, LegacyAndNonFiniteValuesBecomeNull) {
  const json old = summary_of(parse("trt7_1.log"), {"", "", "", 1});
  EXPECT_TRUE(old["source"]["version"].is_null());
  EXPECT_EQ(old["model"]["batch"], 1);  // the option: the command line has no batch
  EXPECT_EQ(old["build"]["precision"], "fp32");
  EXPECT_TRUE(old["results"]["stable"].is_null());
  const json latest = summary_of(parse("trt11_0.log"));
  EXPECT_EQ(latest["build"]["precision"], "best");
  EXPECT_EQ(latest["build"]["builder_optimization_level"], 5);
  EXPECT_TRUE(latest["results"]["enqueue_ms"]["min"].is_null());
  EXPECT_TRUE(latest["model"]["batch"].is_null());
}

TEST(TrtexecSummary, WithoutACommandLineTheOptionsDecide) {
  auto log = parse_trtexec_log(testing::read_text(log_path("trt10_2.log")).substr(200), "cut");
  ASSERT_TRUE(log.is_ok());
  log->command.clear();
  const json j = summary_of(*log, {"cut", "bert", "int8", 16});
  EXPECT_EQ(j["model"]["name"], "bert");
  EXPECT_EQ(j["model"]["batch"], 16);
  EXPECT_EQ(j["build"]["precision"], "int8");
}

TEST(TrtexecSummary, ABadNumberOnTheCommandLineIsNamed) {
  TrtexecLog log = parse("trt8_2.log");
  log.command.push_back("--warmUp=soon");
  auto j = trtexec_summary_json(log, {});
  ASSERT_FALSE(j.is_ok());
  EXPECT_NE(j.status().message().find("--warmUp=soon"), std::string::npos);
}

TEST(ParseTrtexecCli, WritesTheSummaryOrNothing) {
  const testing::TempDir tmp;  // its own folder: two checkouts may test at once
  const fs::path& dir = tmp.path();
  const fs::path out = dir / "s.json";
  auto ok = testing::run_kiln("parse-trtexec " + log_path("trt10_2.log") + " -o " + out.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("TensorRT 10.2.0"), std::string::npos) << ok.out;
  EXPECT_EQ(json::parse(testing::read_text(out))["results"]["throughput_qps"], 130.298);
  const fs::path bad = dir / "bad.json";
  auto failed =
      testing::run_kiln("parse-trtexec " + log_path("failed.log") + " -o " + bad.string());
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.out.find("no performance summary"), std::string::npos) << failed.out;
  EXPECT_FALSE(fs::exists(bad));
  auto missing = testing::run_kiln("parse-trtexec " + (dir / "nope.log").string() + " -o x.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("nope.log"), std::string::npos) << missing.out;
}

}  // namespace parse_trtexec_test
}  // namespace kiln::cli::report
