// --throughputSearch: choosing the winner, the build profile and the report table.
#include <gtest/gtest.h>

#include "exec/throughput_search.h"
#include "frontend/onnx/importer.h"
#include "testing/onnx_builder.h"

namespace kiln::cli::exec {
namespace exec_search_test {

SearchCandidate candidate(int64_t batch, int streams, double per_s, bool within) {
  SearchCandidate c;
  c.batch = batch;
  c.streams = streams;
  c.inferences_per_s = per_s;
  c.within_bound = within;
  return c;
}

TEST(ExecThroughputSearch, BestIsTheFastestWithinTheBound) {
  EXPECT_EQ(pick_best({candidate(1, 1, 100, true), candidate(1, 2, 180, true),
                       candidate(4, 1, 300, false), candidate(4, 2, 250, true)}),
            3u);
  // Ties go to fewer streams, then to the smaller batch.
  EXPECT_EQ(pick_best({candidate(2, 2, 100, true), candidate(4, 1, 100, true)}), 1u);
  EXPECT_EQ(pick_best({candidate(4, 1, 100, true), candidate(2, 1, 100, true)}), 1u);
  EXPECT_FALSE(pick_best({candidate(1, 1, 100, false)}).has_value());
  EXPECT_FALSE(pick_best({}).has_value());
}

ir::Graph graph_with(bool dynamic_batch) {
  testing::TempDir dir;
  testing::OnnxBuilder b;
  if (dynamic_batch) {
    b.input("x", onnx::TensorProto::FLOAT, {-1, 4}, {"batch", ""});
  } else {
    b.input("x", onnx::TensorProto::FLOAT, {2, 4});
  }
  b.output("y");
  b.node("Relu", {"x"}, {"y"}, "relu");
  auto g = frontend::import_onnx_file(b.write(dir.path()));
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  return std::move(g).value();
}

TEST(ExecThroughputSearch, ProfileSpansTheBatches) {
  ExecOptions o;
  o.batches = {1, 2, 8};
  auto spec = search_profile(graph_with(true), o);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  EXPECT_EQ(spec->at("x").min, (Dims{1, 4}));
  EXPECT_EQ(spec->at("x").opt, (Dims{8, 4}));
  EXPECT_EQ(spec->at("x").max, (Dims{8, 4}));
  // Without --batches the run shapes make a static profile.
  o.batches.clear();
  o.inference_shapes["x"] = {3, 4};
  spec = search_profile(graph_with(true), o);
  ASSERT_TRUE(spec.is_ok());
  EXPECT_EQ(spec->at("x").min, (Dims{3, 4}));
  EXPECT_EQ(spec->at("x").max, (Dims{3, 4}));
}

TEST(ExecThroughputSearch, BatchesNeedADynamicFirstDim) {
  ExecOptions o;
  o.batches = {1, 2};
  auto spec = search_profile(graph_with(false), o);
  ASSERT_FALSE(spec.is_ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("no input has a dynamic first dimension (inputs: x "),
            std::string::npos)
      << spec.status().message();
  o.batches.clear();
  EXPECT_TRUE(search_profile(graph_with(false), o)->empty());
}

TEST(ExecThroughputSearch, TableAndVerdict) {
  SearchResult r;
  r.percentile = 99;
  r.bound_ms = 5;
  r.candidates = {candidate(1, 1, 100, true), candidate(1, 2, 150, false)};
  r.candidates[0].summary.throughput_qps = 100;
  r.candidates[0].latency_ms = 2.5;
  r.candidates[1].summary.throughput_qps = 150;
  r.candidates[1].latency_ms = 7;
  r.best = 0;
  EXPECT_EQ(search_lines(r),
            (std::vector<std::string>{
                "=== Throughput search (latency at percentile(99%), bound 5 ms) ===",
                "   Batch   Streams   Throughput(qps)   Inferences/s   Latency(ms)   Within bound",
                "       1         1            100.00         100.00        2.5000            yes",
                "       1         2            150.00         150.00        7.0000             no",
                "Best: batch 1, 1 stream(s): 100 inferences/s, percentile(99%) = 2.5 ms"}));
  r.best.reset();
  EXPECT_EQ(search_lines(r).back(), "No configuration meets the latency bound.");
}

}  // namespace exec_search_test
}  // namespace kiln::cli::exec
