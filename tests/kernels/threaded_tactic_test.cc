// Builtin tactics that split rows or elements over the context's pool give the reference's
// results with a pool of 2 and 3 threads, on sizes that do split (above the grain) and with tails.
#include <gtest/gtest.h>

#include "kernels/tactic_test_util.h"
#include "parallel/thread_pool.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {
namespace {

void expect_threaded_matches_reference(const std::string& name, const OpCase& c, int threads) {
  SCOPED_TRACE(name + " " + case_text(c) + " threads " + std::to_string(threads));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const tactics::Tactic* tactic = tactics::find_tactic(name);
  ASSERT_NE(tactic, nullptr);
  const tactics::LayerSpec spec = layer_spec(og->graph);
  ASSERT_EQ(tactic->why_not(spec), "");
  auto kernel = tactic->instantiate(spec);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  parallel::ThreadPool pool(threads);
  (*kernel)->set_thread_pool(&pool);
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->run_allocations, 0);
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(compare_tensors(got->outputs[i], (*want)[i], kPointTol), "") << "output " << i;
  }
}

TEST(ThreadedTactics, UnarySplitsElements) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "Sigmoid", .inputs = {in(random_f32({3, 97, 131}, 1))}};
    expect_threaded_matches_reference("eltwise.sigmoid.f32", c, threads);
  }
}

TEST(ThreadedTactics, SoftmaxSplitsRows) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "Softmax", .opset = 13, .inputs = {in(random_f32({3, 301, 97}, 2))}};
    expect_threaded_matches_reference("softmax.f32", c, threads);
  }
}

TEST(ThreadedTactics, LayerNormSplitsRowsAndTheirStatistics) {
  for (int threads : {2, 3}) {
    OpCase c{.op_type = "LayerNormalization",
             .attrs = attrs({{"axis", int64_t{-1}}}),
             .inputs = {in(random_f32({5, 197, 96}, 3)), constant(random_f32({96}, 4)),
                        constant(random_f32({96}, 5))},
             .num_outputs = 3};
    expect_threaded_matches_reference("layernorm.f32", c, threads);
  }
}

}  // namespace
}  // namespace kiln::testing
