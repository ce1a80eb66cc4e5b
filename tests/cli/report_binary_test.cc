// `kiln report` through the real binary: a real sweep and a profiled `kiln exec` run of a tiny
// model, plus a peer's summary, rendered as HTML and as markdown; the errors' exit codes and
// messages; and the output written atomically (never created or clobbered by a failed run).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "kiln_process.h"
#include "report_fixtures.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace report_binary_test {

namespace fs = std::filesystem;
using testing::run_kiln;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class KilnReport : public ::testing::Test {
 protected:
  void SetUp() override {
    // y = Relu(x * w), x[batch, 4].
    testing::OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {-1, 4}, {"batch", ""}).output("y");
    b.initializer("w", {4}, {1, 2, 3, 4});
    b.node("Mul", {"x", "w"}, {"m"}, "mul");
    b.node("Relu", {"m"}, {"y"}, "relu");
    model_ = b.write(dir_.path()).string();
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  // A sweep at batch 1 and 2, a profiled exec run at batch 4 and a peer's summary in res/.
  void make_results() {
    const testing::KilnRun sweep =
        run_kiln("sweep --onnx=" + model_ + " --batch=1,2 --out=" + path("res") +
                 " --warmUp=0 --duration=0 --iterations=2");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
    const testing::KilnRun exec = run_kiln(
        "exec --onnx=" + model_ + " --shapes=x:4x4 --warmUp=0 --duration=0 --iterations=2 " +
        "--exportProfile=" + path("res/profile.json") + " --exportSummary=" + path("res/b4.json") +
        " --saveEngine=" + path("res/b4.plan"));
    ASSERT_EQ(exec.exit_code, 0) << exec.out;
    testing::write_json_file(path("res/peers/model-onnxruntime.json"),
                             testing::make_summary({.tool = "onnxruntime",
                                                    .model = fs::path(model_).stem().string(),
                                                    .batch = 1,
                                                    .threads = 2}));
  }

  testing::TempDir dir_;
  std::string model_;
};

TEST_F(KilnReport, HtmlFromARealSweepAProfileAndAPeer) {
  make_results();
  const testing::KilnRun r =
      run_kiln("report " + path("res") + " -o " + path("report.html") + " --title='T <&>'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("note: skipped engines/"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("report.html: 4 run(s)"), std::string::npos) << r.out;
  const std::string html = testing::read_text(path("report.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>T &lt;&amp;&gt;</title>"), std::string::npos);
  EXPECT_EQ(count(html, "<table"), 3u);  // results, kiln against onnxruntime, runs read
  EXPECT_EQ(count(html, "<svg"), 3u);    // latency, throughput, per-layer time
  EXPECT_GE(count(html, "class=\"bar\""), 5u);
  EXPECT_GE(count(html, "class=\"series\""), 1u);
  EXPECT_NE(html.find("speed-up over onnxruntime"), std::string::npos);
  EXPECT_NE(html.find("activations"), std::string::npos);  // the kiln engines' arenas
  EXPECT_EQ(r.out.find("skipped profile.json"), std::string::npos)
      << r.out;  // its summary names it
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no other URL
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("NaN"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
}

TEST_F(KilnReport, MarkdownWithChartsAsSvgFiles) {
  make_results();
  fs::create_directories(path("out"));
  const testing::KilnRun r =
      run_kiln("report " + path("res") + " -o " + path("out/r.md") + " --title=MD");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string md = testing::read_text(path("out/r.md"));
  EXPECT_EQ(md.rfind("# MD\n", 0), 0u);
  EXPECT_NE(md.find("| model | precision | batch |"), std::string::npos) << md;
  EXPECT_EQ(count(md, "](r."), 3u) << md;
  std::smatch m;
  const std::regex link(R"(\]\((r\.[a-z0-9-]+\.svg)\))");
  std::string rest = md;
  size_t files = 0;
  while (std::regex_search(rest, m, link)) {
    const std::string svg = testing::read_text(path("out/" + m[1].str()));
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << m[1];
    ++files;
    rest = m.suffix();
  }
  EXPECT_EQ(files, 3u);
  // --format overrides the extension.
  ASSERT_EQ(
      run_kiln("report " + path("res") + " -o " + path("out/r.txt") + " --format=md").exit_code, 0);
  EXPECT_EQ(testing::read_text(path("out/r.txt")).rfind("# kiln benchmark report", 0), 0u);
}

TEST_F(KilnReport, ErrorsExitWith1AndWriteNothing) {
  fs::create_directories(path("empty"));
  testing::KilnRun r = run_kiln("report " + path("empty") + " -o " + path("r.html"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("kiln: error: InvalidArgument: '"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is empty"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("r.html")));

  nlohmann::json bad = testing::make_summary({});
  bad["model"]["batch"] = "eight";
  testing::write_json_file(path("bad/s.json"), bad);
  testing::write_text_file(path("r.html"), "previous report");
  r = run_kiln("report " + path("bad") + " -o " + path("r.html"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("s.json: field 'model.batch': expected an integer"), std::string::npos)
      << r.out;
  EXPECT_EQ(testing::read_text(path("r.html")), "previous report");  // untouched

  r = run_kiln("report " + path("missing") + " -o " + path("x.html"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("NotFound"), std::string::npos) << r.out;
  r = run_kiln("report " + path("bad") + " -o " + path("no/such/dir/x.html"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("-o: folder"), std::string::npos) << r.out;
  r = run_kiln("report " + path("bad") + " -o " + path("x.pdf") + " --format=pdf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--format"), std::string::npos) << r.out;
  r = run_kiln("report " + path("bad"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--output"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();  // no temp files
  }
}

}  // namespace report_binary_test
}  // namespace kiln
