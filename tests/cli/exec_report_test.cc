// `kiln exec` report lines parsed back with trtexec's log regexes, and the JSON exports checked
// against their schemas.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "engine/builder.h"
#include "exec/exec_log.h"
#include "exec/exports.h"
#include "exec/report.h"
#include "exec_schemas.h"
#include "frontend/onnx/importer.h"
#include "json_schema.h"
#include "testing/onnx_builder.h"

namespace kiln::cli::exec {
namespace exec_report_test {

using nlohmann::json;
using testing::check_schema;

// The regexes of ../shared/design/ANCHORS.md §1.3 for trtexec's summary, with kiln's metric names
// ("Compute Time" for "GPU Compute Time") added to the alternations.
const std::string kNum = R"((?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|inf|nan))";
const std::regex kThroughput("^Throughput: (" + kNum + ") qps$");
const std::regex kMetric(
    "^(Latency|End-to-End Host Latency|Enqueue Time|H2D Latency|GPU Compute Time|Compute Time|D2H "
    "Latency): min = (" +
    kNum + ") ms, max = (" + kNum + ") ms, mean = (" + kNum + ") ms, median = (" + kNum +
    ") ms((?:, percentile\\((" + kNum + ")%\\) = (" + kNum + ") ms)*)$");
const std::regex kTotal("^Total (Host Walltime|GPU Compute Time|Compute Time): (" + kNum + ") s$");
const std::regex kPercentile("percentile\\((" + kNum + ")%\\) = (" + kNum + ") ms");
const std::regex kLogPrefix(R"(^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] \[[IWEVF]\] )");

json schema(const char* text) { return json::parse(text); }

void expect_conforms(const nlohmann::ordered_json& value, const json& s) {
  const std::vector<std::string> errors = check_schema(json::parse(value.dump()), s);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors) << "\n" << value.dump(1);
}

BenchmarkTrace two_stream_trace() {
  BenchmarkTrace t;
  t.streams = 2;
  t.warmup = {{0, 3, 0}};
  for (int i = 0; i < 40; ++i) {
    const double start = 3 + i;
    t.timed.push_back({start, start + 1 + (i % 4) * 0.25, i % 2});
  }
  return t;
}

TEST(ExecReport, SummaryBlockParsesWithTrtexecRegexes) {
  const std::vector<double> p = {90, 95, 99.9};
  const BenchmarkSummary s = summarize(two_stream_trace(), p);
  const std::vector<std::string> lines = summary_lines(s, p);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0], "=== Performance summary ===");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[1], m, kThroughput)) << lines[1];
  EXPECT_NEAR(std::stod(m[1]), s.throughput_qps, s.throughput_qps * 1e-5);
  const std::vector<std::string> names = {"Latency", "Enqueue Time", "H2D Latency", "Compute Time",
                                          "D2H Latency"};
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& line = lines[2 + i];
    ASSERT_TRUE(std::regex_match(line, m, kMetric)) << line;
    EXPECT_EQ(m[1], names[i]);
    const bool transfer = names[i].find("2") != std::string::npos;
    const Stats& want = names[i] == "Latency"        ? s.latency
                        : names[i] == "Enqueue Time" ? s.enqueue
                                                     : s.compute;
    EXPECT_NEAR(std::stod(m[2]), transfer ? 0 : want.min, 1e-5) << line;
    EXPECT_NEAR(std::stod(m[3]), transfer ? 0 : want.max, 1e-5) << line;
    EXPECT_NEAR(std::stod(m[4]), transfer ? 0 : want.mean, 1e-5) << line;
    EXPECT_NEAR(std::stod(m[5]), transfer ? 0 : want.median, 1e-5) << line;
    const std::string tail = m[6];
    size_t k = 0;
    for (auto it = std::sregex_iterator(tail.begin(), tail.end(), kPercentile);
         it != std::sregex_iterator(); ++it, ++k) {
      ASSERT_LT(k, p.size());
      EXPECT_EQ(std::stod((*it)[1]), p[k]);
      EXPECT_NEAR(std::stod((*it)[2]), transfer ? 0 : want.percentiles[k], 1e-5);
    }
    EXPECT_EQ(k, p.size()) << line;
  }
  ASSERT_TRUE(std::regex_match(lines[7], m, kTotal)) << lines[7];
  EXPECT_EQ(m[1], "Host Walltime");
  EXPECT_NEAR(std::stod(m[2]), s.walltime_ms / 1000, 1e-6);
  ASSERT_TRUE(std::regex_match(lines[8], m, kTotal)) << lines[8];
  EXPECT_EQ(m[1], "Compute Time");
  EXPECT_NEAR(std::stod(m[2]), s.total_compute_ms / 1000, 1e-6);
}

TEST(ExecReport, NumbersPrintLikeAnOstream) {
  EXPECT_EQ(format_number(130.298), "130.298");
  EXPECT_EQ(format_number(7.6062812), "7.60628");
  EXPECT_EQ(format_number(0.0000120), "1.2e-05");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(90), "90");
  EXPECT_EQ(format_number(99.9), "99.9");
  EXPECT_EQ(format_number(1234567), "1.23457e+06");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
}

TEST(ExecReport, PrologLines) {
  const BenchmarkSummary s = summarize(two_stream_trace(), {});
  EXPECT_EQ(prolog_lines(s, 200),
            (std::vector<std::string>{"Warmup completed 1 queries over 200 ms",
                                      "Timing trace has 40 queries over 0.04075 s"}));
}

TEST(ExecReport, WarningsForUnstableFewAndConcurrentQueries) {
  const std::vector<double> p = {50, 99};
  const std::vector<std::string> w = summary_warnings(summarize(two_stream_trace(), p), p);
  // Times 1, 1.25, 1.5, 1.75 repeated: CoV 20.3 %; 40 queries make p99 the slowest; 2 streams.
  ASSERT_EQ(w.size(), 4u) << ::testing::PrintToString(w);
  EXPECT_NE(w[0].find("* Compute time is unstable, with coefficient of variance = 20.3279"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[2].find("percentile(99%) of 40 queries is the slowest query"), std::string::npos);
  EXPECT_NE(w[3].find("2 inference streams"), std::string::npos);

  BenchmarkTrace steady;
  for (int i = 0; i < 200; ++i) steady.timed.push_back({double(i), i + 1.0, 0});
  EXPECT_TRUE(summary_warnings(summarize(steady, p), p).empty());
}

TEST(ExecReport, TraceAveragesKeepTheFirstAndLast200) {
  BenchmarkTrace t;
  for (int i = 0; i < 450 * 2; ++i) t.timed.push_back({double(i), i + (i < 400 ? 1.0 : 3.0), 0});
  const std::vector<std::string> lines = trace_lines(t.timed, 2);
  ASSERT_EQ(lines.size(), 2u + 200 + 1 + 200);
  EXPECT_EQ(lines[0], "=== Trace details ===");
  EXPECT_EQ(lines[1], "Trace averages of 2 runs:");
  EXPECT_EQ(lines[2],
            "Average on 2 runs - Compute latency: 1 ms - Host latency: 1 ms (enqueue 1 ms)");
  EXPECT_EQ(lines[202], "... Omitting 50 lines");
  EXPECT_EQ(lines.back(),
            "Average on 2 runs - Compute latency: 3 ms - Host latency: 3 ms (enqueue 3 ms)");
}

TEST(ExecReport, ProfileTableHasTrtexecsColumns) {
  ProfileReport r;
  r.iterations = 290;
  r.rows = {{1, 29.17, 0.1006, 0.0973, 1.7}, {0, 1667.74, 5.7508, 5.7308, 97.7}};
  r.total = {0, 1707.3, 5.8873, 5.8619, 100};
  const std::vector<std::string> lines = profile_table(r, {"conv", "reformat"});
  // The rows of a real trtexec 10 log (NVIDIA/TensorRT sampleReporting.cpp format).
  EXPECT_EQ(lines,
            (std::vector<std::string>{"=== Profile (290 iterations ) ===",
                                      "   Time(ms)     Avg.(ms)   Median(ms)   Time(%)   Layer",
                                      "      29.17       0.1006       0.0973       1.7   reformat",
                                      "    1667.74       5.7508       5.7308      97.7   conv",
                                      "    1707.30       5.8873       5.8619     100.0   Total"}));
}

TEST(ExecReport, LogLinesHaveTrtexecsPrefix) {
  std::ostringstream out;
  ExecLog log(out, false);
  log.info("Throughput: 1 qps");
  log.warn("careful");
  log.verbose("hidden");
  log.raw("&&&& PASSED x");
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, kLogPrefix)) << line;
  EXPECT_EQ(m.suffix().str(), "Throughput: 1 qps");
  std::getline(in, line);
  EXPECT_NE(line.find("] [W] careful"), std::string::npos);
  std::getline(in, line);
  EXPECT_EQ(line, "&&&& PASSED x");  // the verbose line was not printed
}

TEST(ExecExports, TimesAndProfileMatchTrtexecsSchemas) {
  const BenchmarkTrace t = two_stream_trace();
  const nlohmann::ordered_json times = times_json(t.timed);
  ASSERT_EQ(times.size(), 40u);
  expect_conforms(times, schema(testing::kExportTimesSchema));
  EXPECT_EQ(times[0]["startComputeMs"], 3.0);
  EXPECT_EQ(times[0]["latencyMs"], 1.0);
  EXPECT_EQ(times[0]["h2dMs"], 0.0);

  ProfileReport r;
  r.iterations = 3;
  r.rows = {{1, 3, 1, 1, 75}, {0, 1, 1.0 / 3, 0.25, 25}};
  const nlohmann::ordered_json prof = profile_json(r, {"a", "b"});
  expect_conforms(prof, schema(testing::kExportProfileSchema));
  EXPECT_EQ(prof[0]["count"], 3);
  EXPECT_EQ(prof[1]["name"], "b");
  EXPECT_EQ(prof[2]["medianMs"], 0.25);
}

TEST(ExecExports, SchemaCheckerRejectsViolations) {
  const json s = schema(testing::kExportProfileSchema);
  EXPECT_FALSE(check_schema(json::parse(R"([{"count": -1}])"), s).empty());
  EXPECT_FALSE(check_schema(json::parse(R"([{"count": 1}, {"name": "x"}])"), s).empty());
  EXPECT_FALSE(check_schema(json::parse(R"([{"count": 1, "extra": 2}])"), s).empty());
  EXPECT_FALSE(check_schema(json::parse(R"({"count": 1})"), s).empty());
  EXPECT_TRUE(check_schema(json::parse(R"([{"count": 0}])"), s).empty());
}

json summary_schema() {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

TEST(ExecExports, SummaryMatchesTheDocumentedSchema) {
  const std::vector<std::string> args = {"--onnx=m.onnx", "--dumpProfile", "--infStreams=2"};
  auto options = parse_exec_args(args);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  RunRecord rec;
  rec.options = &*options;
  rec.environment = capture_environment();
  rec.started_at = "2026-01-02T03:04:05Z";
  rec.import_ms = 1.5;
  rec.build_ms = 2;
  rec.inputs = {{"x", "float32", {2, 4}}};
  rec.outputs = {{"y", "float32", {2, 4}}};
  rec.summary = summarize(two_stream_trace(), options->percentiles);
  rec.warnings = summary_warnings(rec.summary, options->percentiles);
  rec.streams = 2;
  ProfileReport prof;
  prof.iterations = 1;
  prof.rows = {{0, 1, 1, 1, 100}};
  prof.total = {0, 1, 1, 1, 100};
  rec.profile = prof;
  rec.profile_source = "timed run";
  rec.layer_names = {"relu"};
  const nlohmann::ordered_json j = summary_json(rec);
  expect_conforms(j, summary_schema());
  EXPECT_EQ(j["source"]["tool"], "kiln exec");
  EXPECT_EQ(j["model"]["name"], "m");
  EXPECT_EQ(j["model"]["batch"], 2);
  EXPECT_EQ(j["environment"]["device"], rec.environment.cpu_model);
  EXPECT_EQ(j["results"]["queries"], 40);
  EXPECT_EQ(j["results"]["queries_per_stream"], json::parse("[20, 20]"));
  EXPECT_EQ(j["execution"]["cores_used"], 2);
  EXPECT_EQ(j["results"]["compute_ms"]["percentiles"][2]["percentile"], 99);
  EXPECT_EQ(j["profile"]["layers"][0]["name"], "relu");
  EXPECT_FALSE(j["results"]["stable"]);
  EXPECT_TRUE(j["throughput_search"].is_null());
  // Without a profile the section is null, which the schema allows.
  rec.profile.reset();
  expect_conforms(summary_json(rec), summary_schema());
  // A search section, checked against its definition.
  SearchResult search;
  search.candidates.resize(1);
  search.candidates[0].latency_ms = 1;
  search.best = 0;
  rec.search = search;
  const nlohmann::ordered_json with_search = summary_json(rec);
  expect_conforms(with_search, summary_schema());
  EXPECT_EQ(with_search["throughput_search"]["best"]["streams"], 1);
  EXPECT_TRUE(with_search["throughput_search"]["latency_bound_ms"].is_null());
  rec.search->candidates[0].batch = 0;  // violates the schema's minimum: the check must notice
  EXPECT_FALSE(check_schema(json::parse(summary_json(rec).dump()), summary_schema()).empty());
}

TEST(ExecExports, LayerInfoOfABuiltEngine) {
  testing::TempDir dir;
  testing::OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 4}, {"batch", ""}).output("y");
  b.initializer("w", {4}, {1, 2, 3, 4});
  b.node("Mul", {"x", "w"}, {"m"}, "mul");
  b.node("Relu", {"m"}, {"y"}, "relu");
  auto graph = frontend::import_onnx_file(b.write(dir.path()));
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  engine::BuildOptions dynamic;  // a fixed profile would make the graph static
  dynamic.profiles.push_back({{"x", ShapeRange{{1, 4}, {3, 4}, {8, 4}}}});
  auto plan = engine::build_plan(std::move(*graph), dynamic);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto shapes = engine::resolve_shapes(plan->graph, plan->layers, {{3, 4}});
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().to_string();

  const nlohmann::ordered_json detailed =
      layer_info_json(*plan, &*shapes, ProfilingVerbosity::kDetailed);
  expect_conforms(detailed, schema(testing::kExportLayerInfoSchema));
  EXPECT_EQ(detailed["Bindings"], json::parse(R"(["x", "y"])"));
  ASSERT_FALSE(detailed["Layers"].empty());
  const auto& first = detailed["Layers"][0];
  EXPECT_EQ(first["Inputs"][0]["Name"], "x");
  EXPECT_EQ(first["Inputs"][0]["Dimensions"], json::parse("[3, 4]"));
  EXPECT_EQ(first["Inputs"][0]["Format/Datatype"], "Row major linear FP32");
  EXPECT_EQ(first["WeightBytes"], 16);  // w, 4 floats, is a weight, not an input

  // Without resolved shapes the dynamic dim is -1, as TensorRT's inspector prints it.
  const nlohmann::ordered_json model_dims =
      layer_info_json(*plan, nullptr, ProfilingVerbosity::kDetailed);
  EXPECT_EQ(model_dims["Layers"][0]["Inputs"][0]["Dimensions"], json::parse("[-1, 4]"));

  const nlohmann::ordered_json names =
      layer_info_json(*plan, &*shapes, ProfilingVerbosity::kLayerNamesOnly);
  expect_conforms(names, schema(testing::kExportLayerNamesSchema));
  EXPECT_EQ(names["Layers"].size(), plan->layers.size());
}

}  // namespace exec_report_test
}  // namespace kiln::cli::exec
