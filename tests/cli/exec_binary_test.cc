// `kiln exec` through the real binary on a tiny model: the log's structure (banner, trtexec's
// summary lines), every export file against its schema, streams, profiles and errors. Runs are
// kept tiny (--warmUp=0 --duration=0); no test asserts on a time value.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "exec_schemas.h"
#include "json_schema.h"
#include "parallel/openmp_wait.h"
#include "parallel/thread_pool.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace exec_binary_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::OnnxBuilder;
using testing::TempDir;

struct ExecRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
  std::vector<std::string> lines;
};

// Runs `<env> kiln <args>` (env: a command prefix such as "env -u X", or ""); stdout and stderr
// are kept apart.
ExecRun kiln_exec_raw_with_env(const std::string& env, const std::string& args,
                               const fs::path& dir) {
  const fs::path err_file = dir / "stderr.txt";
  const std::string cmd =
      env + " " + std::string(KILN_BINARY) + " " + args + " 2>" + err_file.string();
  FILE* p = popen(cmd.c_str(), "r");
  ExecRun r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) r.lines.push_back(l);
  return r;
}

ExecRun kiln_exec_raw(const std::string& args, const fs::path& dir) {
  return kiln_exec_raw_with_env("", args, dir);
}

ExecRun kiln_exec(const std::string& args, const fs::path& dir) {
  return kiln_exec_raw("exec " + args, dir);
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in.good()) << p;
  return json::parse(in);
}

void expect_conforms(const json& value, const json& schema, const std::string& what) {
  const auto errors = testing::check_schema(value, schema);
  EXPECT_TRUE(errors.empty()) << what << ": " << ::testing::PrintToString(errors);
}

const std::regex kPrefix(R"(^\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] \[([IWEV])\] (.*)$)");
const std::string kNum = R"((?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|inf|nan))";
const std::string kFigures = "min = " + kNum + " ms, max = " + kNum + " ms, mean = " + kNum +
                             " ms, median = " + kNum + " ms(?:, percentile\\(" + kNum +
                             "%\\) = " + kNum + " ms)*";

// The text of every prefixed log line, in order.
std::vector<std::string> log_texts(const ExecRun& r) {
  std::vector<std::string> texts;
  for (const std::string& l : r.lines) {
    std::smatch m;
    if (std::regex_match(l, m, kPrefix)) texts.push_back(m[2]);
  }
  return texts;
}

bool has_line(const ExecRun& r, const std::string& fragment) {
  return r.out.find(fragment) != std::string::npos;
}

class KilnExec : public ::testing::Test {
 protected:
  void SetUp() override {
    // y = Relu(x * w), x[batch, 4].
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {-1, 4}, {"batch", ""}).output("y");
    b.initializer("w", {4}, {1, 2, 3, 4});
    b.node("Mul", {"x", "w"}, {"m"}, "mul");
    b.node("Relu", {"m"}, {"y"}, "relu");
    model_ = b.write(dir_.path()).string();
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  ExecRun exec(const std::string& args) { return kiln_exec(args, dir_.path()); }

  // Every stdout line is a banner line or carries trtexec's log prefix.
  static void expect_structure(const ExecRun& r, bool passed) {
    ASSERT_FALSE(r.lines.empty()) << r.err;
    EXPECT_EQ(r.lines.front().rfind("&&&& RUNNING kiln.exec [kiln v", 0), 0u) << r.lines.front();
    const std::string last = passed ? "&&&& PASSED kiln.exec" : "&&&& FAILED kiln.exec";
    EXPECT_EQ(r.lines.back().rfind(last, 0), 0u) << r.lines.back();
    for (size_t i = 1; i + 1 < r.lines.size(); ++i) {
      EXPECT_TRUE(std::regex_match(r.lines[i], kPrefix)) << "line " << i << ": " << r.lines[i];
    }
  }

  // The summary block, in trtexec's order and shapes.
  static void expect_summary_block(const ExecRun& r) {
    const std::vector<std::string> t = log_texts(r);
    auto at = std::find(t.begin(), t.end(), "=== Performance summary ===");
    ASSERT_NE(at, t.end()) << r.out;
    ASSERT_GE(t.end() - at, 9);
    const std::vector<std::string> shapes = {
        "Throughput: " + kNum + " qps",        "Latency: " + kFigures,
        "Enqueue Time: " + kFigures,           "H2D Latency: " + kFigures,
        "Compute Time: " + kFigures,           "D2H Latency: " + kFigures,
        "Total Host Walltime: " + kNum + " s", "Total Compute Time: " + kNum + " s"};
    for (size_t i = 0; i < shapes.size(); ++i) {
      EXPECT_TRUE(std::regex_match(at[1 + static_cast<long>(i)], std::regex(shapes[i])))
          << at[1 + static_cast<long>(i)];
    }
  }

  TempDir dir_;
  std::string model_;
};

TEST_F(KilnExec, FullRunWritesEveryExportInItsSchema) {
  // Known input, so the exported output can be checked by hand: Relu(x * [1 2 3 4]).
  const std::vector<float> x = {-1, 2, -3, 4, 5, -6, 7, -8};
  std::ofstream(path("x.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
  const ExecRun r =
      exec("--onnx=" + model_ + " --shapes=x:2x4 --loadInputs=x:" + path("x.bin") +
           " --warmUp=0 --duration=0 --iterations=5 --saveEngine=" + path("m.plan") +
           " --exportTimes=" + path("times.json") + " --exportProfile=" + path("profile.json") +
           " --exportLayerInfo=" + path("layers.json") + " --exportOutput=" + path("out.json") +
           " --exportSummary=" + path("summary.json") + " --dumpProfile --separateProfileRun");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_structure(r, true);
  expect_summary_block(r);
  EXPECT_TRUE(has_line(r, "=== Profile ("));
  EXPECT_TRUE(has_line(r, "Per-layer profile from the separate profiling run"));
  EXPECT_TRUE(fs::exists(path("m.plan")));

  const json times = read_json(path("times.json"));
  expect_conforms(times, json::parse(testing::kExportTimesSchema), "times");
  EXPECT_GE(times.size(), 5u);
  const json profile = read_json(path("profile.json"));
  expect_conforms(profile, json::parse(testing::kExportProfileSchema), "profile");
  EXPECT_GE(profile[0]["count"].get<int>(), 5);
  expect_conforms(read_json(path("layers.json")), json::parse(testing::kExportLayerInfoSchema),
                  "layer info");
  const json out = read_json(path("out.json"));
  expect_conforms(out, json::parse(testing::kExportOutputSchema), "output");
  EXPECT_EQ(out[0]["name"], "y");
  EXPECT_EQ(out[0]["dimensions"], "2x4");
  EXPECT_EQ(out[0]["values"], json::parse("[0, 4, 0, 16, 5, 0, 21, 0]"));

  std::ifstream schema_file(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const json summary = read_json(path("summary.json"));
  expect_conforms(summary, json::parse(schema_file), "summary");
  EXPECT_EQ(summary["results"]["queries"], times.size());
  EXPECT_EQ(summary["model"]["onnx"], model_);
  EXPECT_EQ(summary["model"]["inputs"][0]["dims"], json::parse("[2, 4]"));
  EXPECT_EQ(summary["profile"]["source"], "separate profiling run");
  EXPECT_EQ(summary["policy"]["warmup_ms"], 0);
}

TEST_F(KilnExec, LoadedEngineOnConcurrentStreams) {
  ASSERT_EQ(
      exec("--onnx=" + model_ + " --shapes=x:2x4 --skipInference --saveEngine=" + path("m.plan"))
          .exit_code,
      0);
  const ExecRun r = exec(
      "--loadEngine=" + path("m.plan") +
      " --infStreams=2 --iterations=4 --warmUp=0 --duration=0 --exportSummary=" + path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_structure(r, true);
  expect_summary_block(r);
  EXPECT_TRUE(has_line(r, "Engine loaded in"));
  EXPECT_TRUE(has_line(r, "Created 2 execution context(s) in"));
  EXPECT_TRUE(has_line(r, "2 inference streams run concurrently"));
  const json s = read_json(path("s.json"));
  EXPECT_EQ(s["execution"]["inference_streams"], 2);
  EXPECT_EQ(s["model"]["engine"], path("m.plan"));
  ASSERT_EQ(s["results"]["queries_per_stream"].size(), 2u);
  for (const json& n : s["results"]["queries_per_stream"]) EXPECT_GE(n.get<int>(), 4);
}

// libgomp reads its wait before main, so kiln re-executes itself with its own (a brief spin for
// the openmp pool, passive for kiln's own workers) when the user set none; a wait the user set is
// kept. The summary and the banner record the wait the run had.
TEST_F(KilnExec, OpenMpWaitIsKilnsUnlessTheUserSetOne) {
  const std::string args = "--onnx=" + model_ + " --shapes=x:2x4 --warmUp=0 --duration=0 " +
                           "--iterations=2 --exportSummary=";
  const ExecRun unset = kiln_exec_raw_with_env("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT",
                                               "exec " + args + path("unset.json"), dir_.path());
  ASSERT_EQ(unset.exit_code, 0) << unset.err;
  const std::string kilns = kiln::parallel::ThreadPool::backend() == "openmp"
                                ? std::string("GOMP_SPINCOUNT=") + kiln::parallel::kOpenMpSpinCount
                                : "OMP_WAIT_POLICY=passive";
  const std::string pool(kiln::parallel::ThreadPool::backend());
  EXPECT_TRUE(has_line(unset, "Thread pool: " + pool + "; OpenMP wait: " + kilns)) << unset.out;
  const json env = read_json(path("unset.json"))["environment"];
  if (pool == "openmp") {
    EXPECT_EQ(env["openmp_spin_count"], kiln::parallel::kOpenMpSpinCount);
    EXPECT_EQ(env["openmp_wait_policy"], nullptr);
  } else {
    EXPECT_EQ(env["openmp_wait_policy"], "passive");
  }
  EXPECT_EQ(env["thread_pool"], pool);

  const ExecRun active = kiln_exec_raw_with_env("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=ACTIVE",
                                                "exec " + args + path("active.json"), dir_.path());
  ASSERT_EQ(active.exit_code, 0) << active.err;
  EXPECT_TRUE(has_line(active, "Thread pool: " + pool + "; OpenMP wait: OMP_WAIT_POLICY=active"));
  const json active_env = read_json(path("active.json"))["environment"];
  EXPECT_EQ(active_env["openmp_wait_policy"], "active");
  EXPECT_EQ(active_env["openmp_spin_count"], nullptr);
}

TEST_F(KilnExec, SkipInferenceBuildsSavesAndStops) {
  const ExecRun r = exec("--onnx=" + model_ + " --optShapes=x:3x4 --skipInference --saveEngine=" +
                         path("m.plan") + " --dumpLayerInfo");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_structure(r, true);
  EXPECT_TRUE(fs::exists(path("m.plan")));
  EXPECT_TRUE(has_line(r, "Skipped inference phase since --skipInference is added."));
  EXPECT_TRUE(has_line(r, "Input build shape (profile 0): x=3x4+3x4+3x4"));
  EXPECT_TRUE(has_line(r, "Layer Information:"));
  EXPECT_TRUE(has_line(r, "x[3x4]"));
  EXPECT_FALSE(has_line(r, "Performance summary"));
}

TEST_F(KilnExec, ProfileFromTheTimedRunSaysSo) {
  const ExecRun r =
      exec("--onnx=" + model_ + " --warmUp=0 --duration=0 --iterations=3 --dumpProfile");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r, "Per-layer profile from the timed run"));
  EXPECT_TRUE(has_line(r, "measured during the timed run"));
  EXPECT_TRUE(has_line(r, "   Time(ms)     Avg.(ms)   Median(ms)   Time(%)   Layer"));
}

TEST_F(KilnExec, VerboseAddsTraceAndExplanations) {
  const ExecRun r =
      exec("--onnx=" + model_ + " --warmUp=0 --duration=0 --iterations=4 --avgRuns=2 " +
           "--verbose --dumpOutput --useCudaGraph");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_structure(r, true);
  EXPECT_TRUE(has_line(r, "[V] === Trace details ==="));
  EXPECT_TRUE(has_line(r, "[V] Average on 2 runs - Compute latency: "));
  EXPECT_TRUE(has_line(r, "[V] === Explanations of the performance metrics ==="));
  EXPECT_TRUE(has_line(r, "[W] --useCudaGraph: ignored"));
  EXPECT_TRUE(has_line(r, "[I] Output Tensors:"));
  EXPECT_TRUE(has_line(r, "[I] y: (1x4)"));  // dynamic batch defaults to the profile's 1
}

TEST_F(KilnExec, ErrorsExitWith1AndNameTheProblem) {
  auto expect_error = [&](const std::string& args, std::vector<std::string> fragments) {
    const ExecRun r = exec(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out << r.err;
    expect_structure(r, false);
    for (const std::string& f : fragments) {
      EXPECT_NE(r.err.find(f), std::string::npos) << "'" << f << "' not in: " << r.err;
    }
  };
  expect_error("--onnx=" + model_ + " --iteratons=3",
               {"kiln: error: InvalidArgument: unknown flag '--iteratons'", "'--iterations'"});
  expect_error("--onnx=" + path("missing.onnx"), {"missing.onnx"});
  expect_error("--onnx=" + model_ + " --shapes=x:2x5", {"x", "2x5"});
  expect_error("--onnx=" + model_ + " --saveEngine=" + path("m.plan") +
                   " --exportTimes=" + path("no/such/t.json"),
               {"--exportTimes", "does not exist"});
  EXPECT_FALSE(fs::exists(path("m.plan")));  // checked before anything was built
  expect_error("--loadEngine=" + model_, {model_});
}

TEST_F(KilnExec, ThroughputSearchPicksABatchAndStreams) {
  const ExecRun r = exec("--onnx=" + model_ +
                         " --throughputSearch --batches=1,2 --maxStreams=2 --warmUp=0 "
                         "--duration=0 --iterations=3 --exportSummary=" +
                         path("s.json") + " --exportTimes=" + path("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_structure(r, true);
  EXPECT_TRUE(has_line(r, "=== Throughput search (latency at percentile(99%), bound none) ==="));
  EXPECT_TRUE(has_line(r, "Best: batch "));
  EXPECT_TRUE(has_line(r, "Input build shapes: one profile spanning the searched batches"));
  expect_summary_block(r);
  std::ifstream schema_file(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const json s = read_json(path("s.json"));
  expect_conforms(s, json::parse(schema_file), "summary");
  // No bound: every batch is tried with 1 and 2 streams.
  ASSERT_EQ(s["throughput_search"]["candidates"].size(), 4u);
  const json& best = s["throughput_search"]["best"];
  ASSERT_TRUE(best.is_object());
  EXPECT_EQ(s["execution"]["inference_streams"], best["streams"]);
  EXPECT_EQ(s["model"]["inputs"][0]["dims"][0], best["batch"]);
  EXPECT_EQ(read_json(path("t.json")).size(), s["results"]["queries"]);
}

TEST_F(KilnExec, ThroughputSearchWithAnImpossibleBound) {
  const ExecRun r = exec("--onnx=" + model_ +
                         " --throughputSearch --maxStreams=1 --latencyBound=1e-9 --warmUp=0 "
                         "--duration=0 --iterations=2");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  expect_structure(r, false);
  EXPECT_TRUE(has_line(r, "No configuration meets the latency bound."));
  EXPECT_NE(r.err.find("--latencyBound=1e-09 ms: no batch and stream count meets it"),
            std::string::npos)
      << r.err;
}

TEST_F(KilnExec, SweepWritesSummariesAndAnIndexAndReusesItsEngine) {
  const std::string args = "sweep --onnx=" + model_ + " --batch=1,3 --out=" + path("res") +
                           " --warmUp=0 --duration=0 --iterations=2";
  const ExecRun first = kiln_exec_raw(args, dir_.path());
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(first.lines.front().rfind("&&&& RUNNING kiln.sweep", 0), 0u);
  EXPECT_EQ(first.lines.back().rfind("&&&& PASSED kiln.sweep", 0), 0u);
  EXPECT_TRUE(has_line(first, "=== Sweep summary ==="));
  std::ifstream index_schema(std::string(KILN_SOURCE_DIR) + "/docs/sweep_index.schema.json");
  std::ifstream summary_schema_file(std::string(KILN_SOURCE_DIR) +
                                    "/docs/exec_summary.schema.json");
  const json summary_schema = json::parse(summary_schema_file);
  const json index = read_json(path("res/index.json"));
  expect_conforms(index, json::parse(index_schema), "index");
  ASSERT_EQ(index["runs"].size(), 2u);
  for (const json& run : index["runs"]) {
    EXPECT_FALSE(run["engine_reused"].get<bool>());
    EXPECT_TRUE(fs::exists(fs::path(path("res")) / run["engine"].get<std::string>()));
    const json s = read_json(fs::path(path("res")) / run["summary"].get<std::string>());
    expect_conforms(s, summary_schema, run["summary"].get<std::string>());
    EXPECT_EQ(s["model"]["inputs"][0]["dims"][0], run["batch"]);
    EXPECT_EQ(s["results"]["queries"], run["queries"]);
  }
  EXPECT_EQ(index["runs"][0]["engine"], index["runs"][1]["engine"]);  // one engine per precision

  const ExecRun second = kiln_exec_raw(args, dir_.path());
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_TRUE(has_line(second, "fp32: reusing cached engine"));
  EXPECT_TRUE(read_json(path("res/index.json"))["runs"][0]["engine_reused"].get<bool>());

  // Other tuning (a level, a thread count) makes another engine.
  for (const char* tuning : {" --builderOptimizationLevel=1", " --threads=1"}) {
    const ExecRun other = kiln_exec_raw(args + tuning, dir_.path());
    ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
    EXPECT_FALSE(has_line(other, "fp32: reusing cached engine")) << tuning;
  }
}

TEST_F(KilnExec, HelpPrintsTheFlagsAndNoBanner) {
  const ExecRun r = exec("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("&&&&"), std::string::npos);
  EXPECT_TRUE(has_line(r, "--infStreams=N"));
}

}  // namespace exec_binary_test
}  // namespace kiln
