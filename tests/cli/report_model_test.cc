// kiln report's grouping and comparisons on hand-made summaries: rows per configuration, medians
// over repeated runs, speed-up over fp32 and over each peer, and the tables built from them.
#include "report/report_model.h"

#include <gtest/gtest.h>

#include <fstream>

#include "json_schema.h"
#include "report/report_figures.h"
#include "report/report_tables.h"
#include "report/summary_reader.h"
#include "report_fixtures.h"

namespace kiln::cli::report {
namespace report_model_test {

using json = nlohmann::json;
using testing::SummarySpec;
// Inside a TEST body `Run` names testing::Test::Run.
using RunList = std::vector<Run>;

Run run_of(const SummarySpec& spec) {
  auto r = read_summary(testing::make_summary(spec), spec.tool + "-" + spec.precision + ".json");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? *r : Run{};
}

const Row* find(const ReportModel& m, const std::string& backend, const std::string& precision,
                int64_t batch) {
  for (const Row& r : m.rows) {
    if (r.key.backend == backend && r.key.precision == precision && r.key.batch == batch) return &r;
  }
  return nullptr;
}

TEST(ReportModel, TheFixtureIsAValidSummary) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const json schema = json::parse(in);
  json s = testing::make_summary({});
  EXPECT_TRUE(testing::check_schema(s, schema).empty())
      << ::testing::PrintToString(testing::check_schema(s, schema));
  s["source"]["tool"] = "onnxruntime";  // version 3: any tool
  s["accuracy"] = {{"reference", "PyTorch"},
                   {"max_abs_err", 1e-5},
                   {"layers", {{{"name", "conv"}, {"rel_err", 0.01}}}}};
  EXPECT_TRUE(testing::check_schema(s, schema).empty())
      << ::testing::PrintToString(testing::check_schema(s, schema));
  s["accuracy"].erase("reference");
  EXPECT_FALSE(testing::check_schema(s, schema).empty());
}

TEST(ReportModel, GroupsOrdersAndTakesMedians) {
  RunList runs = {
      run_of({.tool = "onnxruntime", .batch = 8, .p50_ms = 50, .qps = 20}),
      run_of({.precision = "int8", .batch = 1, .p50_ms = 4, .p99_ms = 5, .qps = 250}),
      run_of({.batch = 1, .p50_ms = 10, .p99_ms = 12, .qps = 100}),
      run_of({.batch = 1, .p50_ms = 12, .p99_ms = 20, .qps = 80}),  // a repeat of the fp32 run
      run_of({.batch = 1, .p50_ms = 14, .p99_ms = std::nullopt, .qps = 70}),
      run_of({.tool = "onnxruntime", .batch = 1, .p50_ms = 15, .qps = 66}),
      run_of({.model = "vit_tiny", .batch = 1, .p50_ms = 3, .qps = 300}),
  };
  const ReportModel m = build_report_model(runs);
  ASSERT_EQ(m.rows.size(), 5u);
  // Model in first-seen order, then fp32 before int8, batch, kiln before peers.
  EXPECT_EQ(m.rows[0].key.backend, "kiln");
  EXPECT_EQ(m.rows[0].key.precision, "fp32");
  EXPECT_EQ(m.rows[1].key.backend, "onnxruntime");
  EXPECT_EQ(m.rows[1].key.batch, 1);
  EXPECT_EQ(m.rows[2].key.batch, 8);
  EXPECT_EQ(m.rows[3].key.precision, "int8");
  EXPECT_EQ(m.rows[4].key.model, "vit_tiny");
  EXPECT_EQ(m.models, (std::vector<std::string>{"resnet50", "vit_tiny"}));
  EXPECT_EQ(m.backends, (std::vector<std::string>{"kiln", "onnxruntime"}));
  const Row& fp32 = m.rows[0];
  EXPECT_EQ(fp32.runs.size(), 3u);
  EXPECT_DOUBLE_EQ(*fp32.p50_ms, 12);                 // median of 10, 12, 14
  EXPECT_DOUBLE_EQ(*fp32.p99_ms, 16);                 // median of the two recorded: 12, 20
  EXPECT_DOUBLE_EQ(fp32.inferences_per_s, 80);        // median of 100, 80, 70 (batch 1)
  EXPECT_DOUBLE_EQ(m.rows[2].inferences_per_s, 160);  // 20 qps x batch 8
  EXPECT_FALSE(m.threads_vary);
}

TEST(ReportModel, SpeedupsOverFp32AndOverPeers) {
  RunList runs = {
      run_of({.batch = 1, .p50_ms = 10}),
      run_of({.precision = "int8", .batch = 1, .p50_ms = 4}),
      run_of({.precision = "int8", .batch = 4, .p50_ms = 8}),  // no fp32 at batch 4
      run_of({.tool = "onnxruntime", .batch = 1, .p50_ms = 15}),
      run_of({.tool = "pytorch", .batch = 1, .p50_ms = 5}),
      run_of({.tool = "trtexec", .batch = 1, .threads = std::nullopt, .p50_ms = 2}),
  };
  const ReportModel m = build_report_model(runs);
  EXPECT_EQ(m.reference, "kiln");
  EXPECT_EQ(m.peers, (std::vector<std::string>{"trtexec", "onnxruntime", "pytorch"}));
  EXPECT_TRUE(m.threads_vary);  // trtexec's threads are unknown
  EXPECT_DOUBLE_EQ(*find(m, "kiln", "int8", 1)->speedup_vs_fp32, 2.5);
  EXPECT_DOUBLE_EQ(*find(m, "kiln", "fp32", 1)->speedup_vs_fp32, 1);
  EXPECT_FALSE(find(m, "kiln", "int8", 4)->speedup_vs_fp32.has_value());
  ASSERT_EQ(m.peer_cells.size(), 3u);  // one per kiln row
  const PeerCell& c = m.peer_cells[0];
  EXPECT_EQ(c.reference->key.precision, "fp32");
  EXPECT_DOUBLE_EQ(*c.speedup.at("onnxruntime"), 1.5);
  EXPECT_DOUBLE_EQ(*c.speedup.at("pytorch"), 0.5);
  EXPECT_DOUBLE_EQ(*c.speedup.at("trtexec"), 0.2);  // matched though its threads are unknown
  EXPECT_FALSE(m.peer_cells[1].speedup.at("onnxruntime").has_value());  // no int8 peer row
}

TEST(ReportModel, WithoutKilnTheFirstBackendIsTheReference) {
  RunList runs = {run_of({.tool = "pytorch", .p50_ms = 20}),
                  run_of({.tool = "onnxruntime", .p50_ms = 10})};
  const ReportModel m = build_report_model(runs);
  EXPECT_EQ(m.reference, "onnxruntime");
  EXPECT_EQ(m.peers, std::vector<std::string>{"pytorch"});
  EXPECT_DOUBLE_EQ(*m.peer_cells.at(0).speedup.at("pytorch"), 2);
}

TEST(ReportModel, ThreadsAndStreamsSeparateConfigurations) {
  RunList runs = {run_of({.threads = 1, .p50_ms = 20}), run_of({.threads = 2, .p50_ms = 12}),
                  run_of({.streams = 2, .threads = 1, .p50_ms = 21}),
                  run_of({.tool = "opencv", .threads = 2, .p50_ms = 24}),
                  run_of({.tool = "opencv", .threads = 1, .p50_ms = 30})};
  const ReportModel m = build_report_model(runs);
  EXPECT_EQ(m.rows.size(), 5u);
  EXPECT_TRUE(m.threads_vary);
  ASSERT_EQ(m.peer_cells.size(), 3u);
  EXPECT_DOUBLE_EQ(*m.peer_cells[0].speedup.at("opencv"), 1.5);    // 1 thread: 30 / 20
  EXPECT_DOUBLE_EQ(*m.peer_cells[1].speedup.at("opencv"), 2);      // 2 threads: 24 / 12
  EXPECT_FALSE(m.peer_cells[2].speedup.at("opencv").has_value());  // 2 streams: no peer
  EXPECT_EQ(format_threads(2, 1), "2\u00d71");
  EXPECT_EQ(format_threads(1, std::nullopt), "\u2014");
}

TEST(ReportModel, MedianOfEvenAndOdd) {
  EXPECT_FALSE(median({}).has_value());
  EXPECT_DOUBLE_EQ(*median({3}), 3);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
  EXPECT_LT(precision_rank("fp32"), precision_rank("fp16"));
  EXPECT_LT(precision_rank("fp16"), precision_rank("int8"));
  EXPECT_LT(precision_rank("int8"), precision_rank("int8+fp16"));
}

TEST(ReportTables, ColumnsFollowTheData) {
  RunList runs = {run_of({.p50_ms = 10}), run_of({.precision = "int8", .p50_ms = 5}),
                  run_of({.tool = "onnxruntime", .p50_ms = 20})};
  runs[1].accuracy = Accuracy{"fp32 engine", 100, "top1_percent", 75.1, 75.5, -0.4, 0.2, {}};
  runs[0].engine_bytes = 3 << 20;
  const ReportModel m = build_report_model(runs);
  const std::vector<Table> tables = build_tables(m, ReportInputs{runs, {}, 3});
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[0].id, "results");
  EXPECT_EQ(tables[1].id, "peers");
  EXPECT_EQ(tables[2].id, "runs");
  const Table& t = tables[0];
  const auto col = [&](const std::string& h) {
    return std::find(t.headers.begin(), t.headers.end(), h) - t.headers.begin();
  };
  ASSERT_LT(col("speed-up over fp32"), static_cast<long>(t.headers.size()));
  ASSERT_LT(col("engine"), static_cast<long>(t.headers.size()));
  EXPECT_EQ(col("activations"), static_cast<long>(t.headers.size()));  // none recorded: no column
  EXPECT_EQ(col("threads"), static_cast<long>(t.headers.size()));      // all the same: no column
  ASSERT_EQ(t.rows[2][col("precision")].text, "int8");                 // after both fp32 rows
  EXPECT_EQ(t.rows[2][col("speed-up over fp32")].text, "2.00\u00d7");
  EXPECT_EQ(t.rows[2][col("speed-up over fp32")].css_class, "faster");
  EXPECT_EQ(t.rows[0][col("speed-up over fp32")].text, "\u2014");  // fp32 itself
  EXPECT_EQ(t.rows[2][col("accuracy \u0394")].text, "top1_percent \u22120.4");
  EXPECT_EQ(t.rows[2][col("accuracy \u0394")].title, "compared with fp32 engine");
  EXPECT_EQ(t.rows[0][col("engine")].text, "3.0 MiB");
  EXPECT_EQ(tables[1].headers.back(), "speed-up over onnxruntime");
  EXPECT_EQ(tables[1].rows[0].back().text, "2.00\u00d7");
  EXPECT_EQ(tables[1].rows[1].back().text, "\u2014");  // no int8 onnxruntime row
}

TEST(ReportTables, NumberFormats) {
  EXPECT_EQ(format_value(259.5235), "259.5");
  EXPECT_EQ(format_value(12.345), "12.35");
  EXPECT_EQ(format_value(0.0123), "0.01230");
  EXPECT_EQ(format_value(123456.7), "123457");
  EXPECT_EQ(format_value(0.0), "0");
  EXPECT_EQ(format_value(std::nullopt), "\u2014");
  EXPECT_EQ(format_value(NAN), "\u2014");
  EXPECT_EQ(format_ratio(2.0 / 3), "0.67\u00d7");
  EXPECT_EQ(format_bytes(900), "900 B");
  EXPECT_EQ(format_bytes(512 * 1024), "512 KiB");
  EXPECT_EQ(format_bytes(int64_t{3} << 30), "3.00 GiB");
  Accuracy a;
  a.max_abs_err = 6.33e-5;
  EXPECT_EQ(format_accuracy(a), "max |err| 6.3e-05");
}

TEST(ReportFigures, OneLatencyAndThroughputChartPerModelPlusProfilesAndErrors) {
  RunList runs = {run_of({.batch = 1, .p50_ms = 10}), run_of({.batch = 4, .p50_ms = 30}),
                  run_of({.model = "a<b>", .batch = 1, .p50_ms = 3})};
  runs[0].layers = {{"conv1", 4, 40}, {"relu", 1, 10}, {"fc", 5, 50}};
  runs[0].profile_from = "the summary";
  runs[1].accuracy =
      Accuracy{"fp32", {}, "", {}, {}, {}, {}, {{"conv1", 0.02, 0.5, {}}, {"fc", 0.1, 1.0, {}}}};
  const ReportModel m = build_report_model(runs);
  std::vector<std::string> notes;
  const std::vector<Figure> f = build_figures(m, notes);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(f[0].id, "latency-resnet50");
  EXPECT_EQ(f[1].id, "throughput-resnet50");
  EXPECT_EQ(f[2].id, "latency-a-b-");
  EXPECT_EQ(f[4].kind, "layers");
  EXPECT_EQ(f[5].kind, "layer-error");
  EXPECT_NE(f[2].svg.find("a&lt;b&gt;"), std::string::npos);
  EXPECT_LT(f[5].svg.find(">fc<"), f[5].svg.find(">conv1<"));  // the largest error first
  EXPECT_TRUE(notes.empty());
}

TEST(ReportFigures, ChartsWithoutDataAreLeftOutWithANote) {
  RunList runs = {run_of({.batch = std::nullopt})};
  runs[0].p50_ms.reset();
  const ReportModel m = build_report_model(runs);
  std::vector<std::string> notes;
  EXPECT_TRUE(build_figures(m, notes).empty());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("resnet50: no run recorded a median latency"), std::string::npos);
  EXPECT_NE(notes[1].find("no throughput chart"), std::string::npos);
}

TEST(ReportFigures, LongProfilesGroupTheRest) {
  RunList runs = {run_of({})};
  for (int i = 0; i < 30; ++i) {
    runs[0].layers.push_back({"layer" + std::to_string(i), static_cast<double>(i + 1), 1});
  }
  const ReportModel m = build_report_model(runs);
  std::vector<std::string> notes;
  const std::vector<Figure> f = build_figures(m, notes);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NE(f[2].svg.find("other 18 layers"), std::string::npos);
  EXPECT_NE(f[2].svg.find(">layer29<"), std::string::npos);
  EXPECT_EQ(f[2].svg.find(">layer0<"), std::string::npos);
}

}  // namespace report_model_test
}  // namespace kiln::cli::report
