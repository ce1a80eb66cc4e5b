// ONNX Runtime's peer runner: dlopens the libonnxruntime.so.1 that the onnxruntime-node npm
// package carries (path in $ORT_LIB; run.sh sets it) and runs the CPU execution provider with the
// settings of PEERS.md: intra-op threads = --threads, inter-op 1, graph optimization level "all",
// sequential execution, default arena. Outputs are allocated by ORT on each run and released, as
// the Node and Python bindings do. Protocol and output: runner_common.h.

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ort_api.h"
#include "runner_common.h"

namespace {

const ort::Api* g_api = nullptr;

void check(ort::Status* s, const char* what) {
  if (s == nullptr) return;
  const char* msg = g_api->get<ort::GetErrorMessageFn>(ort::kGetErrorMessage)(s);
  peers::die(std::string("onnxruntime ") + what + ": " + msg);
}

}  // namespace

int main(int argc, char** argv) {
  const peers::Args args = peers::parse_args(argc, argv);
  const peers::Npy input = peers::tile_batch(peers::read_npy(args.input), args.batch);

  const char* lib = std::getenv("ORT_LIB");
  if (lib == nullptr) peers::die("set ORT_LIB to the path of libonnxruntime.so.1");
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) peers::die(std::string("dlopen: ") + dlerror());
  auto get_base = reinterpret_cast<ort::GetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  if (get_base == nullptr) peers::die(std::string(lib) + " has no OrtGetApiBase");
  const ort::ApiBase* base = get_base();
  const std::string version = base->GetVersionString();
  const void* table = base->GetApi(ort::kApiVersion);
  if (table == nullptr) peers::die("onnxruntime " + version + " does not serve C API version 17");
  const ort::Api api(table);
  g_api = &api;

  ort::Env* env = nullptr;
  check(api.get<ort::CreateEnvFn>(ort::kCreateEnv)(ort::kLoggingWarning, "peers", &env),
        "CreateEnv");
  ort::SessionOptions* so = nullptr;
  check(api.get<ort::CreateSessionOptionsFn>(ort::kCreateSessionOptions)(&so), "SessionOptions");
  auto set = [&](ort::Slot slot, int v, const char* what) {
    check(api.get<ort::SetIntFn>(slot)(so, v), what);
  };
  set(ort::kSetIntraOpNumThreads, args.threads, "SetIntraOpNumThreads");
  set(ort::kSetInterOpNumThreads, 1, "SetInterOpNumThreads");
  set(ort::kSetSessionGraphOptimizationLevel, ort::kEnableAll, "SetGraphOptimizationLevel");
  set(ort::kSetSessionExecutionMode, ort::kSequential, "SetExecutionMode");
  // ONNX Runtime's own per-node profile (a JSON trace <prefix>_<date>.json, written when the
  // session is released), to set layer times beside `kiln exec --exportProfile`'s.
  if (const char* prefix = std::getenv("KILN_PEERS_ORT_PROFILE"); prefix != nullptr) {
    check(api.get<ort::SetPathFn>(ort::kEnableProfiling)(so, prefix), "EnableProfiling");
  }
  ort::Session* session = nullptr;
  check(api.get<ort::CreateSessionFn>(ort::kCreateSession)(env, args.onnx.c_str(), so, &session),
        "CreateSession");

  ort::Allocator* alloc = nullptr;
  check(api.get<ort::GetAllocatorFn>(ort::kGetAllocatorWithDefaultOptions)(&alloc), "allocator");
  size_t n_in = 0, n_out = 0;
  check(api.get<ort::CountFn>(ort::kSessionGetInputCount)(session, &n_in), "input count");
  check(api.get<ort::CountFn>(ort::kSessionGetOutputCount)(session, &n_out), "output count");
  if (n_in != 1) peers::die("the runner feeds models with exactly one input");
  std::vector<char*> in_names(n_in), out_names(n_out);
  check(api.get<ort::GetNameFn>(ort::kSessionGetInputName)(session, 0, alloc, &in_names[0]),
        "input name");
  for (size_t i = 0; i < n_out; ++i) {
    check(api.get<ort::GetNameFn>(ort::kSessionGetOutputName)(session, i, alloc, &out_names[i]),
          "output name");
  }

  ort::MemoryInfo* mem = nullptr;
  check(api.get<ort::CreateCpuMemoryInfoFn>(ort::kCreateCpuMemoryInfo)(ort::kArenaAllocator,
                                                                       ort::kMemTypeDefault, &mem),
        "CpuMemoryInfo");
  std::vector<char> data = input.bytes;  // ORT wants a mutable buffer
  ort::Value* in_value = nullptr;
  const int elem = input.dtype == "int64" ? ort::kElementInt64 : ort::kElementFloat;
  check(api.get<ort::CreateTensorWithDataFn>(ort::kCreateTensorWithDataAsOrtValue)(
            mem, data.data(), data.size(), input.shape.data(), input.shape.size(), elem, &in_value),
        "input tensor");

  const auto run = api.get<ort::RunFn>(ort::kRun);
  const auto release = api.get<ort::ReleaseValueFn>(ort::kReleaseValue);
  std::vector<ort::Value*> outs(n_out, nullptr);
  const ort::Value* inputs[] = {in_value};
  const peers::Timing t = peers::time_runs(args, [&] {
    check(run(session, nullptr, in_names.data(), inputs, 1, out_names.data(), n_out, outs.data()),
          "Run");
    for (ort::Value*& v : outs) {
      release(v);
      v = nullptr;
    }
  });
  // One more run, outside the timing, whose first output is kept and checked.
  check(run(session, nullptr, in_names.data(), inputs, 1, out_names.data(), n_out, outs.data()),
        "Run");
  void* out0 = nullptr;
  check(api.get<ort::GetTensorMutableDataFn>(ort::kGetTensorMutableData)(outs[0], &out0),
        "output data");
  const std::string checked = peers::check_output(args, static_cast<const float*>(out0));
  peers::print_result("onnxruntime", args, t,
                      "onnxruntime " + version + " (CPU EP, npm onnxruntime-node)", checked);
  std::fflush(stdout);
  // The session owns thread pools; exiting without releasing it is fine for a one-shot process,
  // unless it profiles: releasing it writes the trace.
  if (std::getenv("KILN_PEERS_ORT_PROFILE") != nullptr) {
    api.get<void (*)(ort::Session*)>(ort::kReleaseSession)(session);
  }
  std::_Exit(0);
}
