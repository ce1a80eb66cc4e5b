// kiln report's readers: summaries (versions 2 to 4), profiles and folders, and every error
// path: a malformed summary names the file and the field, an empty folder or one without
// summaries is an error, other files are skipped with a note.
#include <gtest/gtest.h>

#include "report/folder_reader.h"
#include "report/summary_reader.h"
#include "report_fixtures.h"
#include "testing/onnx_builder.h"

namespace kiln::cli::report {
namespace report_reader_test {

using json = nlohmann::json;
namespace fs = std::filesystem;
using testing::make_summary;
using testing::write_json_file;
using testing::write_text_file;

void expect_error(const Status& s, StatusCode code, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
}

Status read_status(const json& j) { return read_summary(j, "a.json").status(); }

TEST(ReportReader, ReadsTheFiguresOfASummary) {
  json j = make_summary(
      {.tool = "kiln exec", .precision = "FP16", .batch = 8, .p50_ms = 7, .p99_ms = 9, .qps = 50});
  j["command"] = {"--onnx=m.onnx", "--exportProfile=out/p.json", "--exportProfile", "q.json"};
  j["model"]["saved_engine"] = "engines/m.plan";
  auto r = read_summary(j, "sub/a.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->file, "sub/a.json");
  EXPECT_EQ(r->backend, "kiln");
  EXPECT_EQ(r->precision, "fp16");
  EXPECT_EQ(r->batch, 8);
  EXPECT_EQ(r->threads, 2);
  EXPECT_DOUBLE_EQ(*r->p50_ms, 7);
  EXPECT_DOUBLE_EQ(*r->p99_ms, 9);
  EXPECT_DOUBLE_EQ(r->inferences_per_s(), 400);
  EXPECT_EQ(r->device, "Test CPU");
  EXPECT_EQ(r->engine, "engines/m.plan");
  EXPECT_EQ(r->profile_exports, (std::vector<std::string>{"out/p.json", "q.json"}));
  EXPECT_FALSE(r->accuracy.has_value());
}

TEST(ReportReader, NullsBecomeDefaultsOrGaps) {
  json j = make_summary(
      {.tool = "trtexec", .batch = std::nullopt, .threads = std::nullopt, .p99_ms = std::nullopt});
  j["model"]["name"] = nullptr;
  j["build"]["precision"] = nullptr;
  j["results"]["latency_ms"]["median"] = nullptr;
  auto r = read_summary(j, "t.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->model, "(unnamed)");
  EXPECT_EQ(r->precision, "unknown");
  EXPECT_FALSE(r->batch || r->threads || r->p50_ms || r->p99_ms);
  EXPECT_DOUBLE_EQ(r->inferences_per_s(), 100);  // batch unknown: queries/s
}

TEST(ReportReader, OlderVersionsAreRead) {
  json j = make_summary({});
  j["schema_version"] = 2;
  EXPECT_TRUE(read_summary(j, "v2.json").is_ok());
  j["schema_version"] = 3;  // bench/results before 2026-11-27 evening
  EXPECT_TRUE(read_summary(j, "v3.json").is_ok());
  j["schema_version"] = 1;
  expect_error(read_status(j), StatusCode::kInvalidArgument,
               {"a.json: field 'schema_version': version 1 is not one this kiln reads (2 to"});
  j["schema_version"] = 99;
  expect_error(read_status(j), StatusCode::kInvalidArgument, {"version 99"});
}

TEST(ReportReader, MalformedFieldsAreNamed) {
  const json good = make_summary({});
  const auto with = [&](const json::json_pointer& at, const json& value) {
    json j = good;
    j[at] = value;
    return read_status(j);
  };
  expect_error(with("/results/throughput_qps"_json_pointer, "fast"), StatusCode::kInvalidArgument,
               {"a.json: field 'results.throughput_qps': expected a number, got a string "
                "(\"fast\")"});
  expect_error(with("/results/throughput_qps"_json_pointer, -1), StatusCode::kInvalidArgument,
               {"'results.throughput_qps': is -1; the least allowed is 0"});
  expect_error(with("/source/tool"_json_pointer, " "), StatusCode::kInvalidArgument,
               {"'source.tool': is empty"});
  expect_error(with("/source/tool"_json_pointer, nullptr), StatusCode::kInvalidArgument,
               {"'source.tool': is null; a value is required"});
  expect_error(with("/model/batch"_json_pointer, 0), StatusCode::kInvalidArgument,
               {"'model.batch': is 0; the least allowed is 1"});
  expect_error(with("/model/batch"_json_pointer, 1.5), StatusCode::kInvalidArgument,
               {"'model.batch': expected an integer, got a number (1.5)"});
  expect_error(with("/execution"_json_pointer, json::array()), StatusCode::kInvalidArgument,
               {"'execution': expected an object, got an array"});
  expect_error(with("/results/latency_ms/percentiles/1/ms"_json_pointer, "x"),
               StatusCode::kInvalidArgument, {"'results.latency_ms.percentiles[1].ms'"});
  expect_error(with("/results/latency_ms/percentiles/0"_json_pointer, 3),
               StatusCode::kInvalidArgument, {"'results.latency_ms.percentiles[0]'"});
  expect_error(with("/command/0"_json_pointer, 5), StatusCode::kInvalidArgument,
               {"'command[0]': expected a string"});
  expect_error(with("/profile"_json_pointer, {{"layers", {{{"name", "c"}}}}}),
               StatusCode::kInvalidArgument, {"'profile.layers[0].timeMs': missing"});
  expect_error(with("/accuracy"_json_pointer, {{"layers", json::array()}}),
               StatusCode::kInvalidArgument, {"'accuracy.reference': missing"});
  expect_error(with("/accuracy"_json_pointer, {{"reference", "r"}, {"layers", {{{"rel_err", 1}}}}}),
               StatusCode::kInvalidArgument, {"'accuracy.layers[0].name': missing"});
  json no_model = good;
  no_model.erase("model");
  expect_error(read_status(no_model), StatusCode::kInvalidArgument, {"field 'model': missing"});
  expect_error(read_status(json::array()), StatusCode::kInvalidArgument,
               {"a summary is a JSON object"});
}

TEST(ReportReader, AccuracyAndProfileSections) {
  json j = make_summary({.precision = "int8"});
  j["accuracy"] = {{"reference", "fp32 engine"},
                   {"samples", 500},
                   {"metric", "top1_percent"},
                   {"value", 75.1},
                   {"reference_value", 75.5},
                   {"delta", -0.4},
                   {"layers",
                    {{{"name", "conv1"}, {"rel_err", 0.01}, {"sqnr_db", 40}},
                     {{"name", "fc"}, {"max_abs_err", 0.3}}}}};
  j["profile"] = json::parse(R"({"source": "timed run", "iterations": 10, "total_ms": 30,
      "average_ms": 3, "median_ms": 3, "layers": [{"name": "conv1", "timeMs": 20,
      "averageMs": 2, "medianMs": 2, "percentage": 66.7}]})");
  auto r = read_summary(j, "a.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r->accuracy.has_value());
  EXPECT_EQ(r->accuracy->reference, "fp32 engine");
  EXPECT_DOUBLE_EQ(*r->accuracy->delta, -0.4);
  ASSERT_EQ(r->accuracy->layers.size(), 2u);
  EXPECT_DOUBLE_EQ(*r->accuracy->layers[0].sqnr_db, 40);
  EXPECT_FALSE(r->accuracy->layers[1].rel_err.has_value());
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_DOUBLE_EQ(r->layers[0].average_ms, 2);
  EXPECT_EQ(r->profile_from, "the summary");
}

TEST(ReportReader, ProfilesOfEveryShape) {
  const json kiln = json::parse(R"([{"count": 10},
      {"name": "a", "timeMs": 30, "averageMs": 3, "medianMs": 3, "percentage": 75},
      {"name": "b", "timeMs": 10, "averageMs": 1, "medianMs": 1, "percentage": 25}])");
  ASSERT_TRUE(looks_like_profile(kiln));
  auto r = read_profile(kiln, "p.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->size(), 2u);
  // trtexec 7.x: totals only; per-query times and shares are derived.
  const json old =
      json::parse(R"([{"count": 4}, {"name": "a", "timeMs": 8}, {"name": "b", "timeMs": 24}])");
  r = read_profile(old, "old.json");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_DOUBLE_EQ((*r)[1].average_ms, 6);
  EXPECT_DOUBLE_EQ((*r)[1].percent, 75);
  expect_error(
      read_profile(json::parse(R"([{"count": 0}, {"name": "a", "timeMs": 8}])"), "z.json").status(),
      StatusCode::kInvalidArgument, {"z.json: field '[1].averageMs'"});
  expect_error(read_profile(json::parse(R"([{"count": 1}, {"name": 3, "averageMs": 1}])"), "y.json")
                   .status(),
               StatusCode::kInvalidArgument, {"y.json: field '[1].name': expected a string"});
  expect_error(read_profile(json::parse(R"([{"count": 1}, 7])"), "x.json").status(),
               StatusCode::kInvalidArgument, {"x.json: field '[1]': expected a layer object"});
  EXPECT_FALSE(looks_like_profile(json::parse(R"([{"count": 1, "x": 2}])")));
  EXPECT_FALSE(looks_like_profile(json::object()));
}

TEST(ReportReader, BackendNames) {
  EXPECT_EQ(backend_of_tool("kiln exec"), "kiln");
  EXPECT_EQ(backend_of_tool("Kiln"), "kiln");
  EXPECT_EQ(backend_of_tool(" ONNXRuntime "), "onnxruntime");
  EXPECT_EQ(backend_of_tool("trtexec"), "trtexec");
  EXPECT_EQ(backend_of_tool("kilnish"), "kilnish");
  EXPECT_EQ(backend_of_tool("  "), "");
}

class ReportFolder : public ::testing::Test {
 protected:
  fs::path p(const std::string& name) const { return dir_.path() / name; }
  testing::TempDir dir_;
};

TEST_F(ReportFolder, MissingEmptyOrNotAFolder) {
  expect_error(read_report_folder(p("nope")).status(), StatusCode::kNotFound, {"does not exist"});
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"is empty"});
  write_text_file(p("file.json"), "{}");
  expect_error(read_report_folder(p("file.json")).status(), StatusCode::kInvalidArgument,
               {"is not a folder"});
}

TEST_F(ReportFolder, NoSummaryAmongOtherFilesIsAnError) {
  write_text_file(p("notes.txt"), "hello");
  write_text_file(p("meta.json"), R"({"cpu": "x"})");
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"no benchmark summary", "2 file(s)"});
}

TEST_F(ReportFolder, SkipsOtherFilesWithOneNoteEach) {
  write_json_file(p("runs/deep/a.json"), make_summary({}));
  write_text_file(p("runs/raw.jsonl"), "{}\n");
  write_text_file(p("meta.json"), R"({"cpu": "x"})");
  write_text_file(p("broken.json"), "{ not json");
  write_text_file(p("engine.plan"), "bytes");
  auto r = read_report_folder(dir_.path());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->runs.size(), 1u);
  EXPECT_EQ(r->runs[0].file, "runs/deep/a.json");
  EXPECT_EQ(r->files, 5u);
  ASSERT_EQ(r->notes.size(), 4u);
  const std::string all =
      r->notes[0] + "\n" + r->notes[1] + "\n" + r->notes[2] + "\n" + r->notes[3];
  EXPECT_NE(all.find("skipped broken.json: not valid JSON"), std::string::npos) << all;
  EXPECT_NE(all.find("skipped engine.plan: not a .json file"), std::string::npos) << all;
  EXPECT_NE(all.find("skipped meta.json: JSON that is not a benchmark summary"), std::string::npos);
  EXPECT_NE(all.find("skipped runs/raw.jsonl: bench/peers' raw rows"), std::string::npos);
  for (const std::string& n : r->notes) EXPECT_EQ(n.find('\n'), std::string::npos);
}

TEST_F(ReportFolder, AMalformedSummaryIsAnErrorNamingFileAndField) {
  write_json_file(p("ok.json"), make_summary({}));
  json bad = make_summary({});
  bad["results"]["latency_ms"]["median"] = "12 ms";
  write_json_file(p("sub/bad.json"), bad);
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"sub/bad.json: field 'results.latency_ms.median': expected a number"});
}

TEST_F(ReportFolder, ATruncatedSummaryIsAnError) {
  const std::string text = make_summary({}).dump(2);
  write_text_file(p("cut.json"), text.substr(0, text.find("\"source\"")));  // after "schema"
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"cut.json: not valid JSON", "parse error"});
}

TEST_F(ReportFolder, SweepIndexGivesEngineFilesAndMustNameRealSummaries) {
  write_json_file(p("res/m-fp32-b1.json"), make_summary({.tool = "trtexec"}));
  write_text_file(p("res/engines/m.plan"), std::string(3000, 'x'));
  const json index = {{"schema", "kiln.sweep.index"},
                      {"schema_version", 1},
                      {"runs", {{{"summary", "m-fp32-b1.json"}, {"engine", "engines/m.plan"}}}}};
  write_json_file(p("res/index.json"), index);
  auto r = read_report_folder(dir_.path());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->runs[0].engine_bytes, 3000);
  EXPECT_FALSE(r->runs[0].activation_bytes.has_value());  // not a kiln run: not loaded

  json broken = index;
  broken["runs"].push_back({{"summary", "gone.json"}, {"engine", "engines/m.plan"}});
  write_json_file(p("res/index.json"), broken);
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"res/index.json: field 'runs[1].summary'", "gone.json' does not exist"});
}

TEST_F(ReportFolder, AnUnreadableKilnEngineGivesItsSizeAndANote) {
  json s = make_summary({});
  s["model"]["saved_engine"] = "/nowhere/m.plan";  // recorded elsewhere; found next to the summary
  write_json_file(p("a.json"), s);
  write_text_file(p("m.plan"), "not an engine");
  auto r = read_report_folder(dir_.path());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->runs[0].engine_bytes, 13);
  EXPECT_FALSE(r->runs[0].activation_bytes.has_value());
  ASSERT_EQ(r->notes.size(), 2u);  // m.plan skipped as a file, and its arena not read
  EXPECT_NE(r->notes[1].find("activation memory not read"), std::string::npos) << r->notes[1];
}

TEST_F(ReportFolder, ProfilesAreMatchedByTheExportProfileFlag) {
  json s = make_summary({.tool = "trtexec"});
  s["command"] = {"--onnx=m.onnx", "--exportProfile=/tmp/elsewhere/prof.json"};
  write_json_file(p("a.json"), s);
  write_text_file(p("prof.json"),
                  R"([{"count": 2}, {"name": "conv", "timeMs": 4, "averageMs": 2,
                      "medianMs": 2, "percentage": 100}])");
  write_text_file(p("orphan.json"), R"([{"count": 2}])");
  auto r = read_report_folder(dir_.path());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->runs[0].layers.size(), 1u);
  EXPECT_EQ(r->runs[0].profile_from, "prof.json");
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("skipped orphan.json: a per-layer profile that no summary"),
            std::string::npos);
  write_text_file(p("prof.json"), R"([{"count": 2}, {"name": "conv"}])");
  expect_error(read_report_folder(dir_.path()).status(), StatusCode::kInvalidArgument,
               {"prof.json: field '[1].timeMs': missing"});
}

}  // namespace report_reader_test
}  // namespace kiln::cli::report
