// Several execution contexts on one engine, running at the same time from different threads. Built
// into its own small binary so that scripts/test.sh can run it under ThreadSanitizer.
#include <gtest/gtest.h>

#include <thread>

#include "engine/engine_test_util.h"
#include "runtime/execution_context.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

// kiln's own tactics only: oneDNN runs on libgomp's threads, whose synchronization
// ThreadSanitizer cannot see (Debian's libgomp is not instrumented), so it reports races inside
// oneDNN that are not there. What this test checks — contexts sharing an engine, each with its own
// pool — does not depend on the tactic source.
engine::BuildOptions batch_profile() {
  engine::BuildOptions o;
  o.profiles.push_back({{"x", ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}}});
  o.tactic_sources = {"-onednn"};
  return o;
}

// Each thread has its own context, batch size and thread count (odd ones split their layers over a
// pool of two); all share the engine's weights.
TEST(ExecutionContext, ContextsRunConcurrently) {
  const auto model = testing::small_cnn(true);
  auto engine = testing::build_engine(model, batch_profile());
  ASSERT_NE(engine, nullptr);
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(testing::random_f32({1 + t, 3, 8, 8}, 100 + static_cast<uint64_t>(t)));
    expected.push_back(testing::reference_outputs(model, {{"x", inputs.back()}})[0]);
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ctx = engine->create_execution_context({.threads = 1 + t % 2});
      if (!ctx.is_ok()) {
        failures[static_cast<size_t>(t)] = ctx.status().to_string();
        return;
      }
      for (int i = 0; i < 20; ++i) {
        auto got = (*ctx)->run({{"x", inputs[static_cast<size_t>(t)]}});
        std::string diff = got.is_ok()
                               ? testing::compare_tensors(
                                     (*got)[0], expected[static_cast<size_t>(t)], {1e-5, 1e-6})
                               : got.status().to_string();
        if (!diff.empty()) {
          failures[static_cast<size_t>(t)] = diff;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], "") << t;
}

}  // namespace
}  // namespace kiln
