// `kiln sweep` option parsing and its cache key hash.
#include <gtest/gtest.h>

#include <initializer_list>

#include "exec/sweep_command.h"

namespace kiln::cli::exec {
namespace exec_sweep_test {

Result<SweepOptions> parse(std::initializer_list<const char*> args) {
  std::vector<std::string> v(args.begin(), args.end());
  return parse_sweep_args(v);
}

void expect_error(std::initializer_list<const char*> args, StatusCode code,
                  std::initializer_list<const char*> fragments) {
  auto r = parse(args);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  for (const char* f : fragments) {
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "'" << f << "' not in: " << r.status().message();
  }
}

TEST(ExecSweep, ParsesOwnAndForwardedFlags) {
  auto r = parse({"--onnx=m.onnx", "--batch=8,1,4", "--out", "res", "--precisions=fp32",
                  "--duration=0.5", "--warmUp=10", "--iterations=3", "--percentile=50,99",
                  "--shapes=x:1x3", "-v"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->onnx, "m.onnx");
  EXPECT_EQ(r->out, "res");
  EXPECT_EQ(r->batches, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(r->precisions, std::vector<std::string>{"fp32"});
  EXPECT_EQ(r->exec.duration_s, 0.5);
  EXPECT_EQ(r->exec.warmup_ms, 10);
  EXPECT_EQ(r->exec.iterations, 3);
  EXPECT_EQ(r->exec.percentiles, (std::vector<double>{50, 99}));
  EXPECT_EQ(r->exec.inference_shapes.at("x"), (Dims{1, 3}));
  EXPECT_EQ(r->exec.batches, r->batches);
  EXPECT_TRUE(r->exec.verbose);
  // The summaries record the sweep's command line.
  EXPECT_EQ(r->exec.args.size(), 11u);
  EXPECT_TRUE(parse({"--help"}).is_ok());
}

TEST(ExecSweep, Errors) {
  const auto kInvalid = StatusCode::kInvalidArgument;
  expect_error({"--batch=1", "--out=r"}, kInvalid, {"--onnx is required"});
  expect_error({"--onnx=m.onnx", "--batch=1"}, kInvalid, {"--out is required"});
  expect_error({"--onnx=m.onnx", "--out=r"}, kInvalid, {"--batch is required"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1,x"}, kInvalid, {"'x' is not an integer"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=2,2"}, kInvalid, {"batch 2 is given twice"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--precisions=fp64"}, kInvalid,
               {"'fp64' is not one of fp32, fp16, int8"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--precisions=fp32,fp32"}, kInvalid,
               {"'fp32' is given twice"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--calib=c.cache"}, kInvalid,
               {"--calib needs int8"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--iterations=0"}, kInvalid,
               {"--iterations"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--dumpProfile"}, kInvalid,
               {"--dumpProfile is a kiln exec flag that kiln sweep does not take"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--batches=2"}, kInvalid,
               {"--batches is a kiln exec flag", "did you mean '--batch'?"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--iteratons=2"}, kInvalid,
               {"unknown flag '--iteratons'; did you mean '--iterations'?"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--zzz"}, kInvalid,
               {"unknown flag '--zzz'"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--out=s"}, kInvalid,
               {"--out is given more than once"});
  expect_error({"--onnx=m.onnx", "--out="}, kInvalid, {"--out: empty value"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch"}, kInvalid, {"--batch needs a value"});
  expect_error({"--onnx=m.onnx", "--out=r", "--batch=1", "--verbose=1"}, kInvalid,
               {"--verbose takes no value"});
  expect_error({"m.onnx"}, kInvalid, {"unexpected argument 'm.onnx'"});
}

TEST(ExecSweep, Fnv1a64KnownValues) {
  // Reference values of 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  // Chained: hashing "bar" from the hash of "foo" equals hashing "foobar".
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
}

}  // namespace exec_sweep_test
}  // namespace kiln::cli::exec
