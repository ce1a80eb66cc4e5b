// The tuner: candidates timed and recorded, sources, levels, budget, and the timing cache.
#include "tuner/tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <set>

#include "engine/builder.h"
#include "engine/engine_test_util.h"
#include "parallel/thread_pool.h"
#include "passes/pass_harness.h"
#include "testing/onnx_builder.h"
#include "testing/tensor_compare.h"
#include "tuner/cold_cache.h"
#include "tuner/timing_cache.h"

namespace kiln {
namespace {

Result<engine::Plan> build(const engine::BuildOptions& options) {
  return engine::build_plan(testing::import_model(testing::small_cnn(false)), options);
}

// The layers that had more than one applicable tactic (the 1x1 convolution at least).
std::vector<const engine::Layer*> contested(const engine::Plan& plan) {
  std::vector<const engine::Layer*> out;
  for (const engine::Layer& l : plan.layers) {
    int applicable = 0;
    for (const tactics::TacticTiming& c : l.candidates) {
      applicable += c.note.rfind("rejected", 0) == 0 ? 0 : 1;
    }
    if (applicable > 1) out.push_back(&l);
  }
  return out;
}

bool log_has(const engine::Plan& plan, std::string_view text) {
  for (const std::string& line : plan.build_log) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Tuner, TimesEveryApplicableCandidateAndKeepsTheFastest) {
  auto plan = build({});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const auto layers = contested(*plan);
  ASSERT_FALSE(layers.empty());
  for (const engine::Layer* l : layers) {
    double best = -1;
    for (const tactics::TacticTiming& c : l->candidates) {
      if (c.note.rfind("rejected", 0) == 0) continue;
      ASSERT_GE(c.ms, 0) << c.tactic << ": " << c.note;
      if (best < 0 || c.ms < best) best = c.ms;
    }
    for (const tactics::TacticTiming& c : l->candidates) {
      if (c.tactic == l->tactic) {
        EXPECT_EQ(c.ms, best) << c.tactic;
      }
    }
  }
  // The reference fallback is listed with the reason it did not compete.
  bool ref_listed = false;
  for (const engine::Layer& l : plan->layers) {
    for (const tactics::TacticTiming& c : l.candidates) {
      if (c.tactic == "ref.generic") {
        ref_listed = true;
        EXPECT_NE(c.note.find("reference fallback"), std::string::npos) << c.note;
      }
    }
  }
  EXPECT_TRUE(ref_listed);
  EXPECT_TRUE(log_has(*plan, "tuning: "));
}

TEST(Tuner, LevelZeroTimesNothing) {
  engine::BuildOptions o;
  o.optimization_level = 0;
  auto plan = build(o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  for (const engine::Layer& l : plan->layers) {
    for (const tactics::TacticTiming& c : l.candidates) EXPECT_LT(c.ms, 0) << c.tactic;
  }
  EXPECT_TRUE(log_has(*plan, "0 times measured"));
}

TEST(Tuner, DisabledSourceLeavesTheReferenceAndStillMatches) {
  engine::BuildOptions o;
  o.tactic_sources = {"-KILN", "-onednn"};  // names are case-insensitive, as trtexec's
  const auto model = testing::small_cnn(false);
  auto engine = testing::build_engine(model, o);
  ASSERT_NE(engine, nullptr);
  for (const engine::Layer& l : engine->plan().layers) {
    if (l.kind == engine::LayerKind::kRun) {
      EXPECT_EQ(l.tactic, "ref.generic");
    }
  }
  const Tensor x = testing::random_f32({2, 3, 8, 8}, 3);
  auto ctx = engine->create_execution_context();
  ASSERT_TRUE(ctx.is_ok());
  auto got = (*ctx)->run({{"x", x}});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(testing::compare_tensors((*got)[0], testing::reference_outputs(model, {{"x", x}})[0],
                                     {1e-5, 1e-6}),
            "");
}

TEST(Tuner, EachSourceCanBeDisabled) {
  for (const std::string& source : tuner::tactic_sources()) {
    engine::BuildOptions o;
    o.tactic_sources = {"-" + source};
    auto plan = build(o);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    for (const engine::Layer& l : plan->layers) {
      const tactics::Tactic* t = tactics::find_tactic(l.tactic);
      if (t != nullptr) {
        EXPECT_NE(t->source(), source) << l.tactic;
      }
      for (const tactics::TacticTiming& c : l.candidates) {
        if (tactics::find_tactic(c.tactic)->source() == source) {
          EXPECT_NE(c.note.find("is disabled"), std::string::npos) << c.tactic << ": " << c.note;
        }
      }
    }
  }
}

TEST(Tuner, TacticSourceErrorsNameTheKnownSources) {
  std::set<std::string, std::less<>> disabled;
  Status s = tuner::apply_tactic_sources(std::vector<std::string>{"-CUDNN"}, disabled);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'CUDNN'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("kiln"), std::string::npos) << s.message();
  s = tuner::apply_tactic_sources(std::vector<std::string>{"kiln"}, disabled);
  EXPECT_NE(s.message().find("+name or -name"), std::string::npos) << s.message();
  ASSERT_TRUE(
      tuner::apply_tactic_sources(std::vector<std::string>{"-kiln", "+kiln"}, disabled).is_ok());
  EXPECT_TRUE(disabled.empty());
}

TEST(Tuner, BadLevelOrBudgetIsRefused) {
  engine::BuildOptions o;
  o.optimization_level = 6;
  EXPECT_EQ(build(o).status().code(), StatusCode::kInvalidArgument);
  o.optimization_level = 3;
  o.budget_s = -1;
  EXPECT_EQ(build(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(Tuner, SpentBudgetFallsBackToThePreferenceOrder) {
  engine::BuildOptions o;
  o.budget_s = 1e-12;
  auto plan = build(o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_TRUE(log_has(*plan, "budget was spent"));
  bool untimed = false;
  for (const engine::Layer* l : contested(*plan)) {
    for (const tactics::TacticTiming& c : l->candidates) {
      untimed |= c.note.find("build budget is spent") != std::string::npos;
    }
  }
  EXPECT_TRUE(untimed);
}

// Candidates are timed round by round: a slow episode of the machine (here the 2nd and 3rd runs
// overall) costs each of two candidates one sample, and the medians still rank them as their
// other runs do; timed one candidate after another, the episode would take two of candidate 0's
// three samples and make it look slower than candidate 1.
TEST(Tuner, CandidatesAreTimedRoundByRoundSoAnEpisodeCostsEachOneSample) {
  std::vector<size_t> order;
  const auto run_once = [&](size_t i) -> Result<double> {
    order.push_back(i);
    const bool episode = order.size() == 2 || order.size() == 3;
    return (i == 0 ? 1.0 : 1.5) + (episode ? 4.0 : 0.0);
  };
  const auto samples = tuner::time_interleaved(2, {.repeats = 3}, run_once, [] { return false; });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 0, 1, 0, 1}));
  ASSERT_EQ(samples.size(), 2u);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  EXPECT_EQ(median(samples[0].ms), 1.0);
  EXPECT_EQ(median(samples[1].ms), 1.5);
}

// A slow candidate leaves after two runs past the cap, a failing one at its failure (its error
// kept), and a stop (the build budget) ends the timing between runs.
TEST(Tuner, InterleavedTimingCapsFailuresAndStops) {
  std::vector<size_t> order;
  const auto run_once = [&](size_t i) -> Result<double> {
    order.push_back(i);
    if (i == 2) return invalid_argument("candidate 2 broke");
    return i == 0 ? 30.0 : 1.0;
  };
  auto samples =
      tuner::time_interleaved(3, {.repeats = 5, .cap_ms = 50.0}, run_once, [] { return false; });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 0, 1, 1, 1, 1}));
  EXPECT_EQ(samples[0].ms.size(), 2u);
  EXPECT_EQ(samples[1].ms.size(), 5u);
  EXPECT_TRUE(samples[2].ms.empty());
  EXPECT_NE(samples[2].error.message().find("candidate 2 broke"), std::string::npos);

  int runs = 0;
  samples = tuner::time_interleaved(
      2, {.repeats = 5}, [&](size_t) -> Result<double> { return ++runs; },
      [&] { return runs >= 3; });
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(samples[0].ms.size(), 2u);
  EXPECT_EQ(samples[1].ms.size(), 1u);
}

// Layers whose every round takes under short_round_ms run short_repeats rounds; one long round
// (the candidates' times summed) keeps a layer at `repeats`, and the cap still ends a candidate.
TEST(Tuner, ShortRoundsRunMoreRepeats) {
  const tuner::Rounds rounds{
      .repeats = 3, .cap_ms = 1e9, .short_repeats = 9, .short_round_ms = 1.0};
  const auto never = [] { return false; };
  auto fixed = [](double ms) { return [ms](size_t) -> Result<double> { return ms; }; };
  auto samples = tuner::time_interleaved(2, rounds, fixed(0.2), never);
  EXPECT_EQ(samples[0].ms.size(), 9u);
  EXPECT_EQ(samples[1].ms.size(), 9u);
  // 2 x 0.5 ms a round: not under 1 ms.
  samples = tuner::time_interleaved(2, rounds, fixed(0.5), never);
  EXPECT_EQ(samples[0].ms.size(), 3u);
  // Short rounds until the fourth, which is long: no round after it.
  int run = 0;
  const auto slow_fourth = [&](size_t) -> Result<double> { return ++run == 7 ? 5.0 : 0.1; };
  samples = tuner::time_interleaved(2, rounds, slow_fourth, never);
  EXPECT_EQ(samples[0].ms.size(), 4u);
  EXPECT_EQ(samples[1].ms.size(), 4u);
  // The cap ends a candidate within the extra rounds too.
  samples = tuner::time_interleaved(
      1, {.repeats = 3, .cap_ms = 0.5, .short_repeats = 9, .short_round_ms = 1.0}, fixed(0.1),
      never);
  EXPECT_EQ(samples[0].ms.size(), 6u);
}

// A candidate whose first run takes more than outpaced_ratio times the round's fastest plus the
// slack is not run again (marked outpaced); one within the slack, and every candidate with the
// ratio off, runs every round.
TEST(Tuner, ACandidateOutpacedInTheFirstRoundIsNotRunAgain) {
  std::vector<size_t> order;
  const auto run_once = [&](size_t i) -> Result<double> {
    order.push_back(i);
    return std::array{1.0, 40.0, 13.9}[i];
  };
  const auto never = [] { return false; };
  auto samples = tuner::time_interleaved(
      3, {.repeats = 3, .outpaced_ratio = 4.0, .outpaced_slack_ms = 10.0}, run_once, never);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 0, 2, 0, 2}));
  EXPECT_EQ(samples[1].ms, std::vector<double>{40.0});
  EXPECT_TRUE(samples[1].outpaced);
  EXPECT_FALSE(samples[0].outpaced);
  EXPECT_FALSE(samples[2].outpaced);
  EXPECT_EQ(samples[2].ms.size(), 3u);
  order.clear();
  samples = tuner::time_interleaved(3, {.repeats = 2}, run_once, never);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_FALSE(samples[1].outpaced);
}

// INT8 activations must not be all zeros: the portable QGemm skips zero inputs and was timed
// 140x faster than it runs on real data. Wider integers stay zero (valid indices).
TEST(Tuner, TimingInputsAreArbitraryBytesZeroIndicesAndSmallFloats) {
  for (DType dt : {DType::kU8, DType::kI8}) {
    Tensor t(dt, {4096});
    tuner::fill_timing_input(t);
    std::set<uint8_t> seen;
    const auto* p = static_cast<const uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) seen.insert(p[i]);
    EXPECT_GT(seen.size(), 200u) << dtype_name(dt);
  }
  Tensor idx(DType::kI64, {64});
  tuner::fill_timing_input(idx);
  for (int64_t i = 0; i < idx.numel(); ++i) EXPECT_EQ(idx.data<int64_t>()[i], 0);
  Tensor f(DType::kF32, {4096});
  tuner::fill_timing_input(f);
  for (int64_t i = 0; i < f.numel(); ++i) {
    EXPECT_GE(f.data<float>()[i], -1.0f);
    EXPECT_LT(f.data<float>()[i], 1.0f);
  }
}

TEST(TimingCache, WarmRebuildMeasuresNothingAndChoosesTheSame) {
  testing::TempDir dir;
  engine::BuildOptions o;
  o.timing_cache_path = (dir.path() / "t.cache").string();
  auto cold = build(o);
  ASSERT_TRUE(cold.is_ok()) << cold.status().to_string();
  EXPECT_FALSE(log_has(*cold, " 0 times measured"));
  auto warm = build(o);
  ASSERT_TRUE(warm.is_ok()) << warm.status().to_string();
  EXPECT_TRUE(log_has(*warm, " 0 times measured"));
  ASSERT_EQ(warm->layers.size(), cold->layers.size());
  for (size_t i = 0; i < cold->layers.size(); ++i) {
    EXPECT_EQ(warm->layers[i].tactic, cold->layers[i].tactic) << i;
  }
}

TEST(TimingCache, RoundTripAndOtherMachine) {
  testing::TempDir dir;
  const auto path = dir.path() / "t.cache";
  tuner::TimingCache cache("cpu A");
  cache.add("Conv|in:f32[1,3,8,8]", "conv.direct.f32", 0.25);
  ASSERT_TRUE(cache.save(path).is_ok());
  std::string note;
  auto same = tuner::TimingCache::load(path, "cpu A", &note);
  ASSERT_TRUE(same.is_ok()) << same.status().to_string();
  EXPECT_EQ(same->find("Conv|in:f32[1,3,8,8]", "conv.direct.f32"), 0.25);
  EXPECT_FALSE(same->find("Conv|in:f32[1,3,8,8]", "other").has_value());
  auto other = tuner::TimingCache::load(path, "cpu B", &note);
  ASSERT_TRUE(other.is_ok());
  EXPECT_EQ(other->size(), 0u);
  EXPECT_NE(note.find("cpu A"), std::string::npos) << note;
  auto missing = tuner::TimingCache::load(dir.path() / "none.cache", "cpu A", &note);
  ASSERT_TRUE(missing.is_ok());
  EXPECT_EQ(missing->size(), 0u);
}

TEST(TimingCache, CorruptFilesAreErrorsNamingTheFile) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.cache";
  for (const char* text :
       {"not json", "{\"format\": \"other\"}",
        "{\"format\": \"kiln-timing-cache\", \"version\": 99, \"machine\": \"m\", \"layers\": {}}",
        "{\"format\": \"kiln-timing-cache\", \"version\": 1, \"machine\": \"m\", "
        "\"layers\": {\"L\": {\"t\": \"fast\"}}}"}) {
    std::ofstream(path) << text;
    auto r = tuner::TimingCache::load(path, "m", nullptr);
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find(path.string()), std::string::npos) << r.status().message();
  }
}

// Weights over the threshold (a core's L2 by default) are flushed from the caches before every
// timed run, and the candidates say they were timed so; under it nothing is flushed.
TEST(Tuner, LayersWithWeightsPastTheThresholdAreTimedCold) {
  auto plan = build({.optimization_level = 0});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto classifier = testing::small_cnn_classifier(*plan);
  ASSERT_TRUE(classifier.is_ok()) << classifier.status().to_string();
  const tuner::TuningLayer& fc = *classifier;
  EXPECT_EQ(tuner::constant_bytes(fc.spec), (20u + 5u) * sizeof(float));
  for (const size_t threshold : {size_t{64}, size_t{1} << 20}) {
    const bool cold = threshold == 64;
    tuner::Tuner t({.threads = 1, .cold_weight_bytes = threshold});
    auto choice = t.choose(fc);
    ASSERT_TRUE(choice.is_ok()) << choice.status().to_string();
    int timed = 0;
    for (const tactics::TacticTiming& c : choice->candidates) {
      if (c.ms < 0) continue;
      ++timed;
      EXPECT_EQ(c.note, cold ? "timed with cold caches" : "") << c.tactic;
    }
    ASSERT_GT(timed, 1);
    EXPECT_EQ(t.flushes() > 0, cold) << threshold;
    if (cold) {
      EXPECT_GE(t.flushes(), 2 * timed);  // level 3: at least two runs per candidate
    }
  }
}

// By default every layer is timed cold, however small its weights, and the activations it reads
// (not graph inputs) are rewritten before each run without a change of value (tuner/cold_cache.h).
TEST(Tuner, EveryLayerIsTimedColdByDefault) {
  auto plan = build({.optimization_level = 0});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto classifier = testing::small_cnn_classifier(*plan);
  ASSERT_TRUE(classifier.is_ok()) << classifier.status().to_string();
  tuner::Tuner t({.threads = 2});
  auto choice = t.choose(*classifier);
  ASSERT_TRUE(choice.is_ok()) << choice.status().to_string();
  EXPECT_GT(t.flushes(), 0);
  for (const tactics::TacticTiming& c : choice->candidates) {
    if (c.ms >= 0) {
      EXPECT_EQ(c.note.rfind("timed with cold caches", 0), 0u) << c.tactic << ": " << c.note;
    }
  }
  std::vector<uint8_t> bytes(64 * 1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> before = bytes;
  parallel::ThreadPool pool(2);
  tuner::CacheFlusher(1 << 16).touch(&pool, bytes.data(), bytes.size());
  EXPECT_EQ(bytes, before);
}

// A candidate on threads of its own (oneDNN's) is charged, with a pool, for the segment of the
// pool it interrupts in the network (ThreadPool::run_segment); kiln's are timed inside one.
TEST(Tuner, CandidatesOnThreadsOfTheirOwnAreChargedForTheSegmentTheyBreak) {
  auto plan = build({.optimization_level = 0});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto classifier = testing::small_cnn_classifier(*plan);
  ASSERT_TRUE(classifier.is_ok()) << classifier.status().to_string();
  int charged = 0;
  for (int threads : {1, 2}) {
    tuner::Tuner t({.threads = threads});
    auto choice = t.choose(*classifier);
    ASSERT_TRUE(choice.is_ok()) << choice.status().to_string();
    for (const tactics::TacticTiming& c : choice->candidates) {
      if (c.ms < 0) continue;
      const tactics::Tactic* tactic = tactics::find_tactic(c.tactic);
      ASSERT_NE(tactic, nullptr) << c.tactic;
      const bool noted = c.note.find("for the pool's segment it interrupts") != std::string::npos;
      EXPECT_EQ(noted, threads > 1 && tactic->runs_own_threads()) << c.tactic << ": " << c.note;
      charged += noted ? 1 : 0;
    }
  }
  if (tactics::find_tactic("onednn.gemm.f32") != nullptr) {
    EXPECT_GT(charged, 0);
  }
}

// Exactly the tactics that start OpenMP regions of their own (oneDNN's) run outside the pool.
TEST(Tuner, OnlyOnednnTacticsRunOnThreadsOfTheirOwn) {
  for (const tactics::Tactic* t : tactics::all_tactics()) {
    EXPECT_EQ(t->runs_own_threads(), t->source() == "onednn") << t->name();
  }
}

TEST(TimingCache, LayerSignatureSeparatesShapesAndThreads) {
  auto plan = build({.optimization_level = 0});
  ASSERT_TRUE(plan.is_ok());
  const ir::Node& conv = plan->graph.nodes.front();
  tuner::TuningLayer a{tactics::make_layer_spec(plan->graph, conv), {}, {}, {}};
  for (size_t i = 0; i < conv.inputs.size(); ++i) a.input_dims.push_back({2, 3, 8, 8});
  a.output_dims = {{2, 4, 8, 8}};
  tuner::TuningLayer b = a;
  b.input_dims[0] = {1, 3, 8, 8};
  EXPECT_NE(tuner::layer_signature(a, 1), tuner::layer_signature(b, 1));
  EXPECT_NE(tuner::layer_signature(a, 1), tuner::layer_signature(a, 2));
  EXPECT_EQ(tuner::layer_signature(a, 2), tuner::layer_signature(a, 2));
  // A graph input is timed from memory, an activation as just written: not one time.
  tuner::TuningLayer c = a;
  c.graph_inputs = {true};
  EXPECT_NE(tuner::layer_signature(a, 1), tuner::layer_signature(c, 1));
}

}  // namespace
}  // namespace kiln
