#pragma once
// kiln's public C++ API: TensorRT's object model on CPUs.
//
//   auto network = kiln::Network::from_onnx_file("resnet50.onnx");      // parse and check
//   kiln::BuilderConfig config;                                         // profiles, passes, log
//   auto engine = kiln::Builder::build(*network, config);               // optimize, plan, tune
//   engine->save("resnet50.plan");                                      // atomic write
//   auto loaded = kiln::Runtime::load("resnet50.plan");                 // mmap, verify, check CPU
//   auto ctx = loaded->create_execution_context();                      // one per thread
//   ctx->set_input_shape("input", dims); ctx->set_tensor_address("input", ptr);
//   ctx->execute();
//
// Every call that can fail returns Status or Result<T> (kiln/status.h); nothing throws. Engines are
// immutable and cheap to copy (shared); execution contexts are movable, one per concurrent caller.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/profile.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// Call first in main() of a program that runs engines on more than one thread. kiln's layers and
// oneDNN's run on libgomp's threads, which read how long to spin after a layer (GOMP_SPINCOUNT,
// OMP_WAIT_POLICY) before main. When neither is set, this sets kiln's (GOMP_SPINCOUNT=10000: a
// few hundred microseconds, then sleep) and re-executes the program with `argv`; it returns only
// if the user set a wait, or exec failed. Without it libgomp spins several milliseconds after each
// layer, burning a core between inferences. See docs/performance.md.
void use_kiln_openmp_wait(char** argv);

namespace runtime {
class Engine;
class ExecutionContext;
}  // namespace runtime
namespace ir {
class Graph;
}  // namespace ir

struct BuilderConfig {
  // Empty: one profile with every dynamic dim set to 1 (logged as a warning), as trtexec does.
  std::vector<OptimizationProfile> profiles;
  // Graph passes to skip, by name (see `kiln build --listPasses`).
  std::vector<std::string> disabled_passes;
  // Receives the build log line by line: warnings, each fusion named by its ONNX nodes, each
  // layer's tactic.
  std::function<void(std::string_view)> log;
  // Threads the tuner times each layer's candidate tactics with (0: one per available core). Use
  // the count the engine will run with: the fastest tactic on 1 thread is not always the fastest
  // on 2.
  int threads = 0;
  // TensorRT's BuilderFlag::kINT8: convolutions and GEMMs run in INT8 where a range is known.
  bool int8 = false;
  // TensorRT's BuilderFlag::kFP16: the other convolutions and GEMMs store their weights as
  // binary16; arithmetic stays float32 (docs/fp16.md says when that is faster).
  bool fp16 = false;
  // The INT8 ranges: a kiln calibration file (kiln calibrate) or a TensorRT calibration cache.
  // Empty with int8: trtexec's placeholder ranges (for measuring speed; outputs are not accurate).
  std::filesystem::path calibration_file;
  // 8, or 7 (kiln build --int8WeightBits=7): weights kiln quantizes land in [-63, 63], which CPUs
  // without VNNI run with vpmaddubsw, exactly and faster, at half the weights' resolution.
  int int8_weight_bits = 8;
};

// An imported, checked ONNX model (TensorRT's INetworkDefinition filled by its ONNX parser).
class Network {
 public:
  static Result<Network> from_onnx_file(const std::filesystem::path& path);
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;
  ~Network();

  const ir::Graph& graph() const { return *graph_; }

 private:
  explicit Network(std::unique_ptr<ir::Graph> graph);
  std::unique_ptr<ir::Graph> graph_;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::string shape;  // "float32[batch,3,224,224]" style, symbols kept
  bool is_input = false;
};

class ExecutionContext;

class Engine {
 public:
  // Inputs then outputs, in model order.
  std::vector<TensorInfo> io_tensors() const;
  int num_profiles() const;
  // The range of `input` under profile `profile`.
  Result<ShapeRange> profile_shape(int profile, std::string_view input) const;
  // Writes the engine file atomically.
  Status save(const std::filesystem::path& path) const;
  // `threads` split each layer's work (the calling thread included); 0: one per available core.
  // The context creates its thread pool once; executing never starts a thread.
  Result<ExecutionContext> create_execution_context(int threads = 1) const;

  const runtime::Engine& impl() const { return *impl_; }

 private:
  friend class Builder;
  friend class Runtime;
  explicit Engine(std::shared_ptr<const runtime::Engine> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const runtime::Engine> impl_;
};

class Builder {
 public:
  static Result<Engine> build(const Network& network, const BuilderConfig& config = {});
};

class Runtime {
 public:
  // Maps the file; refuses a truncated or corrupted file, another format version, or a CPU that
  // lacks a feature the engine's kernels need (naming it).
  static Result<Engine> load(const std::filesystem::path& path);
};

class ExecutionContext {
 public:
  ExecutionContext(ExecutionContext&&) noexcept;
  ExecutionContext& operator=(ExecutionContext&&) noexcept;
  ~ExecutionContext();

  Status set_input_shape(std::string_view input, std::span<const int64_t> dims);
  Status set_tensor_address(std::string_view name, const void* data);
  Result<Dims> tensor_shape(std::string_view name);
  // The hot path: runs on the bound buffers, allocating nothing once shapes are set.
  Status execute();
  // Convenience: binds `inputs` by name, executes, returns the outputs in model order.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor, std::less<>>& inputs);

  runtime::ExecutionContext& impl() { return *impl_; }

 private:
  friend class Engine;
  explicit ExecutionContext(std::unique_ptr<runtime::ExecutionContext> impl);
  std::unique_ptr<runtime::ExecutionContext> impl_;
};

}  // namespace kiln
