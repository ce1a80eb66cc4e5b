// Runs ONNX's backend conformance data (Debian's libonnx-testdata) through the importer and the
// reference executor. Cases whose ops kiln does not support are skipped, naming the ops; every
// other case must match ONNX's expected outputs within its tolerance (rtol 1e-3, atol 1e-7 by
// default).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <regex>

#include "expectations.h"
#include "frontend/onnx/importer.h"
#include "runtime/reference_executor.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const char* data_root() {
  const char* env = std::getenv("KILN_ONNX_TESTDATA");
  return env != nullptr ? env : "/usr/share/libonnx-testdata/data";
}

struct Case {
  std::string suite;  // node, pytorch-converted, ...
  std::string name;   // test_abs
  fs::path dir;
};

std::vector<Case> list_cases() {
  std::vector<Case> cases;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    const fs::path root = fs::path(data_root()) / suite;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (fs::exists(entry.path() / "model.onnx")) {
        cases.push_back({suite, entry.path().filename().string(), entry.path()});
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.dir < b.dir; });
  return cases;
}

// gtest prints the case by name instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.suite << "/" << c.name; }

struct Tally {
  std::atomic<int> passed{0}, failed{0}, skipped{0};
  std::map<std::string, int> unsupported;  // first line of the skip reason -> count
};
Tally& tally() {
  static Tally t;
  return t;
}

// Counts each unsupported op once per case; other reasons by their first line.
void count_skip_reasons(const std::string& msg) {
  std::string first = msg.substr(0, msg.find('\n'));
  first = first.substr(first.find(": ") == std::string::npos ? 0 : first.find(": ") + 2);
  const std::string kOps = "unsupported op(s): ";
  if (first.rfind(kOps, 0) != 0) {
    ++tally().unsupported[first];
    return;
  }
  std::string list = first.substr(kOps.size());
  for (size_t pos = 0; pos <= list.size();) {
    const size_t end = std::min(list.find(", ", pos), list.size());
    ++tally().unsupported["op " + list.substr(pos, end - pos)];
    pos = end + 2;
  }
}

class OnnxBackend : public ::testing::TestWithParam<Case> {};

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// Feeds input_<i>.pb to the i-th graph input, as ONNX's backend test runner does.
Result<runtime::NamedTensors> load_inputs(const ir::Graph& g, const fs::path& set_dir) {
  runtime::NamedTensors feeds;
  const auto files = sorted_files(set_dir, "input_");
  for (size_t i = 0; i < files.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor t, frontend::load_tensor_proto_file(files[i]));
    if (i >= g.inputs.size()) return invalid_argument("more input files than graph inputs");
    feeds[g.value(g.inputs[i]).name] = std::move(t);
  }
  return feeds;
}

// Returns the Unsupported status when the run hits a feature kiln refuses at run time (e.g. Dropout
// with a training_mode input that turns out true); every other problem is a test failure.
Status run_data_set(const ir::Graph& g, const runtime::ReferenceExecutor& exec,
                    const fs::path& set_dir, const testing::Tolerance& tol) {
  auto feeds = load_inputs(g, set_dir);
  EXPECT_TRUE(feeds.is_ok()) << feeds.status().to_string();
  if (!feeds.is_ok()) return Status::ok();
  auto outputs = exec.run(*feeds);
  if (!outputs.is_ok() && outputs.status().code() == StatusCode::kUnsupported) {
    return outputs.status();
  }
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  if (!outputs.is_ok()) return Status::ok();
  const auto files = sorted_files(set_dir, "output_");
  EXPECT_EQ(files.size(), outputs->size()) << "number of outputs";
  for (size_t i = 0; i < std::min(files.size(), outputs->size()); ++i) {
    auto expected = frontend::load_tensor_proto_file(files[i]);
    EXPECT_TRUE(expected.is_ok()) << expected.status().to_string();
    if (!expected.is_ok()) continue;
    EXPECT_EQ(testing::compare_tensors((*outputs)[i], *expected, tol), "")
        << "output " << i << " '" << g.value(g.outputs[i]).name << "' of " << set_dir.filename();
  }
  return Status::ok();
}

TEST_P(OnnxBackend, MatchesExpectedOutputs) {
  const Case& c = GetParam();
  auto graph = frontend::import_onnx_file(c.dir / "model.onnx");
  if (!graph.is_ok() && graph.status().code() == StatusCode::kUnsupported) {
    ++tally().skipped;
    count_skip_reasons(graph.status().message());
    GTEST_SKIP() << graph.status().message();
  }
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  auto exec = runtime::ReferenceExecutor::create(*graph);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  testing::Tolerance tol;
  if (auto e = conformance::find_expectation(c.suite + "/" + c.name)) tol = e->tolerance;
  for (const auto& entry : fs::directory_iterator(c.dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      const Status unsupported = run_data_set(*graph, *exec, entry.path(), tol);
      if (!unsupported.is_ok()) {
        ++tally().skipped;
        count_skip_reasons(unsupported.message());
        GTEST_SKIP() << unsupported.message();
      }
    }
  }
  if (HasFailure()) {
    ++tally().failed;
  } else {
    ++tally().passed;
  }
}

std::string case_test_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.suite + "_" + info.param.name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxBackend, ::testing::ValuesIn(list_cases()), case_test_name);

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Tally& t = tally();
    std::vector<std::pair<int, std::string>> reasons;
    for (const auto& [reason, n] : t.unsupported) reasons.emplace_back(n, reason);
    std::sort(reasons.rbegin(), reasons.rend());
    std::printf("\nSkipped cases by reason:\n");
    for (const auto& [n, reason] : reasons) std::printf("  %4d  %s\n", n, reason.c_str());
    std::printf("\nONNX conformance: %d passed, %d failed, %d skipped\n", t.passed.load(),
                t.failed.load(), t.skipped.load());
  }
};
const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
