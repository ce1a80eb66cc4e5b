// `kiln exec` option parsing: trtexec's defaults, every flag's value rules and every error path.
#include "exec/exec_options.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "parallel/thread_pool.h"

namespace kiln::cli::exec {
namespace exec_options_test {

Result<ExecOptions> parse(std::initializer_list<const char*> args) {
  std::vector<std::string> v(args.begin(), args.end());
  return parse_exec_args(v);
}

// Parses `args` (after --onnx=m.onnx) and expects success.
ExecOptions parse_ok(std::initializer_list<const char*> args) {
  std::vector<std::string> v = {"--onnx=m.onnx"};
  v.insert(v.end(), args.begin(), args.end());
  auto r = parse_exec_args(v);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? *r : ExecOptions{};
}

// Expects an error with `code` whose message holds every fragment.
void expect_error(std::initializer_list<const char*> args, StatusCode code,
                  std::initializer_list<const char*> fragments) {
  auto r = parse(args);
  ASSERT_FALSE(r.is_ok()) << "accepted: "
                          << ::testing::PrintToString(
                                 std::vector<std::string>(args.begin(), args.end()));
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  for (const char* f : fragments) {
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "'" << f << "' not in: " << r.status().message();
  }
}

void expect_invalid(std::initializer_list<const char*> args,
                    std::initializer_list<const char*> fragments) {
  expect_error(args, StatusCode::kInvalidArgument, fragments);
}

TEST(ExecOptions, TrtexecDefaults) {
  const ExecOptions o = parse_ok({});
  EXPECT_EQ(o.onnx, "m.onnx");
  EXPECT_EQ(o.iterations, 10);
  EXPECT_EQ(o.warmup_ms, 200);
  EXPECT_EQ(o.duration_s, 3);
  EXPECT_EQ(o.avg_runs, 10);
  EXPECT_EQ(o.percentiles, (std::vector<double>{90, 95, 99}));
  EXPECT_EQ(o.inf_streams, 1);
  // --threads defaults to the cores this process may use, divided among the streams.
  EXPECT_EQ(o.threads, parallel::default_thread_count());
  EXPECT_EQ(o.builder_optimization_level, 3);
  EXPECT_FALSE(o.separate_profile_run);
  EXPECT_FALSE(o.wants_profile());
  EXPECT_TRUE(o.profiles.empty());
  EXPECT_TRUE(o.notes.empty());
  EXPECT_EQ(o.args, std::vector<std::string>{"--onnx=m.onnx"});
}

TEST(ExecOptions, InferenceAndReportingFlags) {
  const ExecOptions o = parse_ok(
      {"--iterations=5", "--warmUp=12.5", "--duration=0.25", "--avgRuns=3",
       "--percentile=50,99.9,100", "--infStreams=4", "--threads=1", "--separateProfileRun",
       "--dumpProfile", "--exportTimes=t.json", "--exportProfile=p.json", "--exportOutput=o.json",
       "--exportLayerInfo=l.json", "--exportSummary=s.json", "--dumpOutput", "--dumpLayerInfo",
       "--loadInputs=x:a.npy,'y:0':b.bin", "--seed=18446744073709551615", "-v"});
  EXPECT_EQ(o.iterations, 5);
  EXPECT_EQ(o.warmup_ms, 12.5);
  EXPECT_EQ(o.duration_s, 0.25);
  EXPECT_EQ(o.avg_runs, 3);
  EXPECT_EQ(o.percentiles, (std::vector<double>{50, 99.9, 100}));
  EXPECT_EQ(o.inf_streams, 4);
  EXPECT_TRUE(o.separate_profile_run && o.dump_profile && o.dump_output && o.dump_layer_info);
  EXPECT_TRUE(o.wants_profile());
  EXPECT_EQ(o.export_times, "t.json");
  EXPECT_EQ(o.export_summary, "s.json");
  EXPECT_EQ(o.load_inputs.at("x"), "a.npy");
  EXPECT_EQ(o.load_inputs.at("y:0"), "b.bin");
  EXPECT_EQ(o.seed, UINT64_MAX);
  EXPECT_TRUE(o.verbose);
}

TEST(ExecOptions, SpaceSeparatedValuesAndShortFlags) {
  auto r = parse({"--loadEngine", "e.plan", "--iterations", "7", "-h"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->load_engine, "e.plan");
  EXPECT_EQ(r->iterations, 7);
  EXPECT_TRUE(r->help);
  // --help skips the cross-flag checks: no model is needed.
  EXPECT_TRUE(parse({"--help"}).is_ok());
}

TEST(ExecOptions, ShapesAloneMakeAStaticProfile) {
  const ExecOptions o = parse_ok({"--shapes=x:2x3,'a:0':4"});
  ASSERT_EQ(o.profiles.size(), 1u);
  EXPECT_EQ(o.profiles[0].at("x").min, (Dims{2, 3}));
  EXPECT_EQ(o.profiles[0].at("x").max, (Dims{2, 3}));
  EXPECT_EQ(o.profiles[0].at("a:0").opt, (Dims{4}));
  EXPECT_EQ(o.inference_shapes.at("x"), (Dims{2, 3}));
}

TEST(ExecOptions, ProfileRangesWithInferenceShapes) {
  const ExecOptions o =
      parse_ok({"--minShapes=x:1x3", "--optShapes=x:4x3", "--maxShapes=x:8x3", "--minShapes=x:9x3",
                "--optShapes=x:9x3", "--maxShapes=x:16x3", "--shapes=x:2x3"});
  ASSERT_EQ(o.profiles.size(), 2u);
  EXPECT_EQ(o.profiles[0].at("x").min, (Dims{1, 3}));
  EXPECT_EQ(o.profiles[0].at("x").opt, (Dims{4, 3}));
  EXPECT_EQ(o.profiles[1].at("x").max, (Dims{16, 3}));
  EXPECT_EQ(o.inference_shapes.at("x"), (Dims{2, 3}));
}

TEST(ExecOptions, OptShapesAloneMeansMinEqualsOptEqualsMax) {
  const ExecOptions o = parse_ok({"--optShapes=x:4x3"});
  ASSERT_EQ(o.profiles.size(), 1u);
  EXPECT_EQ(o.profiles[0].at("x").min, (Dims{4, 3}));
  EXPECT_EQ(o.profiles[0].at("x").max, (Dims{4, 3}));
}

TEST(ExecOptions, RecordedBuildFlags) {
  const ExecOptions o = parse_ok({"--builderOptimizationLevel=5",
                                  "--memPoolSize=workspace:1G,tacticSharedMem:512K,dlaSRAM:0.5",
                                  "--precisionConstraints=none", "--disablePasses=a,b",
                                  "--profilingVerbosity=layer_names_only"});
  EXPECT_EQ(o.builder_optimization_level, 5);
  EXPECT_EQ(o.mem_pool_mib.at("workspace"), 1024);
  EXPECT_EQ(o.mem_pool_mib.at("tacticSharedMem"), 0.5);
  EXPECT_EQ(o.mem_pool_mib.at("dlaSRAM"), 0.5);
  EXPECT_EQ(o.disable_passes, "a,b");
  EXPECT_EQ(o.profiling_verbosity, ProfilingVerbosity::kLayerNamesOnly);
}

TEST(ExecOptions, CpuMeaninglessFlagsAreAcceptedWithANote) {
  const ExecOptions o = parse_ok({"--useCudaGraph", "--noDataTransfers", "--useSpinWait",
                                  "--device=0", "--threads", "--separateProfileRun"});
  ASSERT_EQ(o.notes.size(), 6u);
  EXPECT_NE(o.notes[0].find("--useCudaGraph"), std::string::npos);
  EXPECT_NE(o.notes[1].find("--noDataTransfers"), std::string::npos);
  EXPECT_NE(o.notes[2].find("--useSpinWait"), std::string::npos);
  EXPECT_NE(o.notes[3].find("--device"), std::string::npos);
  EXPECT_NE(o.notes[4].find("--threads"), std::string::npos);
  // --separateProfileRun without a profile flag does nothing, and says so.
  EXPECT_NE(o.notes[5].find("no effect"), std::string::npos);
  EXPECT_EQ(o.threads, parallel::default_thread_count());
}

TEST(ExecOptions, ModelChoiceErrors) {
  expect_invalid({}, {"--onnx", "--loadEngine"});
  expect_invalid({"--iterations=3"}, {"give a model"});
  expect_invalid({"--onnx=m.onnx", "--loadEngine=e.plan"}, {"not both"});
  expect_invalid({"--loadEngine=e.plan", "--saveEngine=f.plan"}, {"--saveEngine needs --onnx"});
  expect_invalid({"--loadEngine=e.plan", "--disablePasses=x"}, {"--disablePasses needs --onnx"});
  expect_invalid({"--loadEngine=e.plan", "--minShapes=x:1", "--maxShapes=x:2"},
                 {"--minShapes", "need --onnx"});
  expect_invalid({"--onnx="}, {"--onnx", "empty file name"});
}

TEST(ExecOptions, UnknownFlagsNameTheFlagAndSuggestTheClosest) {
  expect_invalid({"--onnx=m.onnx", "--iteration=3"}, {"'--iteration'", "'--iterations'"});
  expect_invalid({"--onnx=m.onnx", "--warmup=3"}, {"'--warmup'", "'--warmUp'"});
  expect_invalid({"--onnxx=m.onnx"}, {"'--onnxx'", "'--onnx'"});
  expect_invalid({"--onnx=m.onnx", "--useCudaGrph"}, {"'--useCudaGraph'"});
  auto r = parse({"--onnx=m.onnx", "--frob"});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("unknown flag '--frob'"), std::string::npos);
  EXPECT_EQ(r.status().message().find("did you mean"), std::string::npos) << r.status().message();
}

TEST(ExecOptions, SyntaxErrors) {
  expect_invalid({"--onnx=m.onnx", "stray"}, {"unexpected argument 'stray'"});
  expect_invalid({"--onnx=m.onnx", "--dumpProfile=yes"}, {"--dumpProfile takes no value"});
  expect_invalid({"--onnx=m.onnx", "--useCudaGraph=1"}, {"--useCudaGraph takes no value"});
  expect_invalid({"--onnx=m.onnx", "--device"}, {"--device needs a value"});
  expect_invalid({"--onnx"}, {"--onnx needs a value"});
  expect_invalid({"--onnx", "--dumpProfile"}, {"--onnx needs a value"});
  expect_invalid({"--onnx=m.onnx", "--iterations=3", "--iterations=4"},
                 {"--iterations is given more than once"});
}

TEST(ExecOptions, IntegerFlagRanges) {
  expect_invalid({"--onnx=m.onnx", "--iterations=0"}, {"--iterations", "0 is not in [1,"});
  expect_invalid({"--onnx=m.onnx", "--iterations=abc"}, {"--iterations", "not an integer"});
  expect_invalid({"--onnx=m.onnx", "--iterations=1.5"}, {"--iterations", "not an integer"});
  expect_invalid({"--onnx=m.onnx", "--iterations=99999999999999999999"},
                 {"--iterations", "not an integer"});
  expect_invalid({"--onnx=m.onnx", "--avgRuns=0"}, {"--avgRuns"});
  expect_invalid({"--onnx=m.onnx", "--infStreams=0"}, {"--infStreams"});
  expect_invalid({"--onnx=m.onnx", "--infStreams=257"}, {"--infStreams", "[1, 256]"});
  expect_invalid({"--onnx=m.onnx", "--threads=0"}, {"--threads"});
  expect_invalid({"--onnx=m.onnx", "--builderOptimizationLevel=6"},
                 {"--builderOptimizationLevel", "[0, 5]"});
  expect_invalid({"--onnx=m.onnx", "--seed=-1"}, {"--seed", "not a non-negative"});
}

TEST(ExecOptions, TimeFlagRanges) {
  expect_invalid({"--onnx=m.onnx", "--warmUp=-1"}, {"--warmUp", "negative"});
  expect_invalid({"--onnx=m.onnx", "--warmUp=abc"}, {"--warmUp", "not a number"});
  expect_invalid({"--onnx=m.onnx", "--warmUp=nan"}, {"--warmUp", "not a number"});
  expect_invalid({"--onnx=m.onnx", "--duration=inf"}, {"--duration", "not a number"});
  expect_invalid({"--onnx=m.onnx", "--duration=-2"}, {"--duration", "negative"});
  expect_error({"--onnx=m.onnx", "--duration=-1"}, StatusCode::kUnsupported,
               {"--duration=-1", "not implemented"});
}

TEST(ExecOptions, PercentileErrors) {
  expect_invalid({"--onnx=m.onnx", "--percentile=101"}, {"--percentile", "101", "[0, 100]"});
  expect_invalid({"--onnx=m.onnx", "--percentile=-1"}, {"--percentile", "[0, 100]"});
  expect_invalid({"--onnx=m.onnx", "--percentile="}, {"--percentile", "not a number"});
  expect_invalid({"--onnx=m.onnx", "--percentile=90,,99"}, {"--percentile", "not a number"});
  expect_invalid({"--onnx=m.onnx", "--percentile=p99"}, {"'p99' is not a number"});
}

TEST(ExecOptions, ShapeAndInputErrors) {
  expect_invalid({"--onnx=m.onnx", "--shapes=x:1xq"}, {"--shapes", "'q'"});
  expect_invalid({"--onnx=m.onnx", "--minShapes=x"}, {"--minShapes", "name:value"});
  expect_invalid({"--onnx=m.onnx", "--minShapes=x:1", "--optShapes=x:2"},
                 {"--minShapes and --maxShapes"});
  expect_invalid({"--onnx=m.onnx", "--minShapes=x:1", "--maxShapes=y:2"}, {"input 'y'"});
  expect_invalid({"--onnx=m.onnx", "--loadInputs=x"}, {"--loadInputs", "name:value"});
  expect_invalid({"--onnx=m.onnx", "--loadInputs=x:a.bin,x:b.bin"}, {"'x' is given twice"});
  expect_invalid({"--onnx=m.onnx", "--loadInputs=x:"}, {"no file given for 'x'"});
}

TEST(ExecOptions, PrecisionFlags) {
  expect_invalid({"--onnx=m.onnx", "--layerPrecisions=conv:fp64"}, {"conv", "'fp64'"});
  expect_invalid({"--onnx=m.onnx", "--layerPrecisions=*a*:fp16"}, {"more than one '*'"});
  expect_invalid({"--onnx=m.onnx", "--layerPrecisions=conv:"}, {"no precision given for 'conv'"});
  expect_invalid({"--onnx=m.onnx", "--precisionConstraints=maybe"}, {"'maybe'", "obey"});
  expect_invalid({"--onnx=m.onnx", "--tacticSources=CUDNN"}, {"--tacticSources", "'CUDNN'"});
  expect_invalid({"--onnx=m.onnx", "--calib="}, {"--calib", "empty"});
  const ExecOptions o = parse_ok(
      {"--int8", "--calib=c.cache", "--layerPrecisions=conv*:fp32", "--precisionConstraints=obey"});
  EXPECT_TRUE(o.int8);
  EXPECT_EQ(o.calib, "c.cache");
  EXPECT_EQ(o.layer_precisions.at("conv*"), "fp32");
  EXPECT_EQ(o.precision_constraints, "obey");
  // Precision applies when an engine is built, so it needs --onnx.
  auto loaded = parse({"--loadEngine=e.plan", "--int8"});
  ASSERT_FALSE(loaded.is_ok());
  EXPECT_NE(loaded.status().message().find("need --onnx"), std::string::npos);
  // --fp16 builds FP16 layers; like the other precision flags it needs --onnx.
  EXPECT_TRUE(parse_ok({"--fp16"}).fp16);
  auto r = parse({"--loadEngine=e.plan", "--fp16"});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("need --onnx"), std::string::npos);
}

TEST(ExecOptions, TuningAndThreadFlags) {
  const ExecOptions o =
      parse_ok({"--timingCacheFile=t.cache", "--tacticSources=-onednn,+kiln", "--threads=3",
                "--builderOptimizationLevel=5", "--buildBudget=2.5", "--infStreams=2"});
  EXPECT_EQ(o.timing_cache_file, "t.cache");
  EXPECT_EQ(o.tactic_sources, (std::vector<std::string>{"-onednn", "+kiln"}));
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.builder_optimization_level, 5);
  EXPECT_EQ(o.build_budget_s, 2.5);
  expect_invalid({"--onnx=m.onnx", "--buildBudget=0"}, {"--buildBudget", "not positive"});
  expect_invalid({"--onnx=m.onnx", "--builderOptimizationLevel=6"}, {"--builderOptimizationLevel"});
  // Streams share the cores unless --threads says otherwise.
  EXPECT_EQ(parse_ok({"--infStreams=64"}).threads, 1);
}

TEST(ExecOptions, UnimplementedTrtexecFlagsAreUnsupported) {
  expect_error({"--onnx=m.onnx", "--batch=4"}, StatusCode::kUnsupported,
               {"--batch", "trtexec flag", "--shapes"});
  expect_error({"--onnx=m.onnx", "--streams=2"}, StatusCode::kUnsupported, {"--infStreams"});
  expect_error({"--onnx=m.onnx", "--sleepTime=1"}, StatusCode::kUnsupported, {"--sleepTime"});
}

TEST(ExecOptions, MemPoolErrors) {
  expect_invalid({"--onnx=m.onnx", "--memPoolSize=heap:1"}, {"unknown pool 'heap'", "workspace"});
  expect_invalid({"--onnx=m.onnx", "--memPoolSize=workspace:big"}, {"'big' is not a number"});
  expect_invalid({"--onnx=m.onnx", "--memPoolSize=workspace:-4M"}, {"negative size -4M"});
  expect_invalid({"--onnx=m.onnx", "--memPoolSize=workspace:"}, {"no size given for 'workspace'"});
  expect_invalid({"--onnx=m.onnx", "--memPoolSize=workspace:1,workspace:2"},
                 {"'workspace' is given twice"});
}

TEST(ExecOptions, ReportingConflicts) {
  expect_invalid({"--onnx=m.onnx", "--profilingVerbosity=all"}, {"'all'", "detailed"});
  expect_invalid({"--onnx=m.onnx", "--profilingVerbosity=none", "--exportLayerInfo=l.json"},
                 {"--exportLayerInfo", "--profilingVerbosity=none"});
  expect_invalid({"--onnx=m.onnx", "--exportTimes=a.json", "--exportSummary=a.json"},
                 {"--exportTimes and --exportSummary both write 'a.json'"});
  for (const char* flag :
       {"--exportTimes=t.json", "--exportOutput=o.json", "--exportProfile=p.json",
        "--exportSummary=s.json", "--dumpOutput", "--dumpProfile", "--loadInputs=x:a.npy"}) {
    auto r = parse({"--onnx=m.onnx", "--skipInference", flag});
    ASSERT_FALSE(r.is_ok()) << flag;
    EXPECT_NE(r.status().message().find("--skipInference"), std::string::npos);
  }
  // Layer information does not need inference.
  EXPECT_TRUE(parse({"--onnx=m.onnx", "--skipInference", "--exportLayerInfo=l.json"}).is_ok());
}

TEST(ExecOptions, ThroughputSearchFlags) {
  const ExecOptions o =
      parse_ok({"--throughputSearch", "--batches=4,1,2", "--maxStreams=2", "--latencyBound=5.5"});
  EXPECT_TRUE(o.throughput_search);
  EXPECT_EQ(o.batches, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(o.max_streams, 2);
  EXPECT_EQ(o.latency_bound_ms, 5.5);
  const ExecOptions d = parse_ok({"--throughputSearch"});
  EXPECT_TRUE(d.batches.empty());
  EXPECT_EQ(d.max_streams, 0);  // the CPUs allowed, decided at run time
  EXPECT_EQ(d.latency_bound_ms, 0);
}

TEST(ExecOptions, ThroughputSearchErrors) {
  expect_invalid({"--onnx=m.onnx", "--batches=1,2"}, {"--batches needs --throughputSearch"});
  expect_invalid({"--onnx=m.onnx", "--maxStreams=2"}, {"--maxStreams needs --throughputSearch"});
  expect_invalid({"--onnx=m.onnx", "--latencyBound=3"},
                 {"--latencyBound needs --throughputSearch"});
  expect_invalid({"--onnx=m.onnx", "--throughputSearch", "--batches=0"}, {"--batches", "[1,"});
  expect_invalid({"--onnx=m.onnx", "--throughputSearch", "--batches=2,x"},
                 {"--batches", "'x' is not an integer"});
  expect_invalid({"--onnx=m.onnx", "--throughputSearch", "--batches=2,2"},
                 {"batch 2 is given twice"});
  expect_invalid({"--onnx=m.onnx", "--throughputSearch", "--latencyBound=0"}, {"not positive"});
  expect_invalid({"--onnx=m.onnx", "--throughputSearch", "--maxStreams=0"}, {"--maxStreams"});
  for (const char* flag : {"--infStreams=2", "--skipInference", "--loadInputs=x:a.npy",
                           "--dumpProfile", "--exportProfile=p.json", "--separateProfileRun",
                           "--dumpOutput", "--exportOutput=o.json"}) {
    auto r = parse({"--onnx=m.onnx", "--throughputSearch", flag});
    ASSERT_FALSE(r.is_ok()) << flag;
    EXPECT_NE(r.status().message().find("cannot be combined with --throughputSearch"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(ExecOptions, EditDistance) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("--WarmUp", "--warmup"), 0u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
  EXPECT_EQ(closest_flag("--dumpProfil"), "--dumpProfile");
  EXPECT_EQ(closest_flag("--infstreams"), "--infStreams");
  EXPECT_EQ(closest_flag("--xyz"), "");
}

TEST(ExecOptions, HelpListsEveryFlagGroup) {
  const std::string help = exec_help();
  for (const char* s : {"--onnx=<file>", "--percentile=P1,P2", "--infStreams=N", "--exportSummary",
                        "--useCudaGraph", "Inference options", "Reporting options"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s;
  }
}

}  // namespace exec_options_test
}  // namespace kiln::cli::exec
