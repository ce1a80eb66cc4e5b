#include "testing/ort_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "ort_api.h"

namespace kiln::testing {
namespace {

// The library stays loaded for the process: ONNX Runtime's thread pools and statics outlive a
// session, and unloading it under them is not supported.
Result<const ort::Api*> ort_load_api(const std::string& library) {
  static std::string loaded;
  static const ort::Api* api = nullptr;
  if (api && loaded == library) return api;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return not_found("dlopen {}: {}", library, dlerror());
  auto get_base = reinterpret_cast<ort::GetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  if (!get_base) return invalid_argument("{} has no OrtGetApiBase", library);
  const void* table = get_base()->GetApi(ort::kApiVersion);
  if (!table) return unsupported("{} does not serve C API version {}", library, ort::kApiVersion);
  static ort::Api holder(table);
  holder = ort::Api(table);
  api = &holder;
  loaded = library;
  return api;
}

// Releases what a run created, in reverse order, whatever happens.
class OrtCleanup {
 public:
  ~OrtCleanup() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
  }
  void add(std::function<void()> f) { steps_.push_back(std::move(f)); }

 private:
  std::vector<std::function<void()>> steps_;
};

}  // namespace

std::string ort_library_path() {
  if (const char* env = std::getenv("KILN_ORT_LIB"); env && *env) return env;
  // The npm package's layout: bin/napi-v<N>/linux/x64/libonnxruntime.so.1.
  const std::filesystem::path bin =
      std::filesystem::path(KILN_SOURCE_DIR) / "bench/.cache/node_modules/onnxruntime-node/bin";
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(bin, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string();
    if (path.find("linux/x64/libonnxruntime.so.1") != std::string::npos) return path;
  }
  return {};
}

Result<std::vector<float>> ort_run(const std::string& library, const std::string& model,
                                   const std::string& input_name, const std::vector<int64_t>& dims,
                                   std::vector<float> input, const std::string& output_name,
                                   const std::vector<int64_t>& output_dims,
                                   const OrtRunOptions& options) {
  KILN_ASSIGN_OR_RETURN(const ort::Api* api, ort_load_api(library));
  OrtCleanup cleanup;
  auto release = [&](ort::Slot slot, void* p) {
    if (p) cleanup.add([api, slot, p] { api->get<ort::ReleaseFn>(slot)(p); });
  };
  auto check = [&](ort::Status* s, const char* what) -> Status {
    if (!s) return Status::ok();
    const std::string msg = api->get<ort::GetErrorMessageFn>(ort::kGetErrorMessage)(s);
    api->get<ort::ReleaseFn>(ort::kReleaseStatus)(s);
    return internal_error("onnxruntime {} ({}): {}", what, model, msg);
  };
  ort::Env* env = nullptr;
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::CreateEnvFn>(ort::kCreateEnv)(ort::kLoggingWarning, "kiln-tests", &env),
            "CreateEnv"));
  release(ort::kReleaseEnv, env);
  ort::SessionOptions* so = nullptr;
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::CreateSessionOptionsFn>(ort::kCreateSessionOptions)(&so), "options"));
  release(ort::kReleaseSessionOptions, so);
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::SetIntFn>(ort::kSetIntraOpNumThreads)(so, options.threads), "threads"));
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::SetIntFn>(ort::kSetInterOpNumThreads)(so, 1), "inter-op threads"));
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::SetIntFn>(ort::kSetSessionGraphOptimizationLevel)(so, ort::kEnableAll),
            "optimization level"));
  if (!options.optimized_model_path.empty()) {
    KILN_RETURN_IF_ERROR(check(api->get<ort::SetPathFn>(ort::kSetOptimizedModelFilePath)(
                                   so, options.optimized_model_path.c_str()),
                               "optimized model path"));
  }
  ort::Session* session = nullptr;
  KILN_RETURN_IF_ERROR(
      check(api->get<ort::CreateSessionFn>(ort::kCreateSession)(env, model.c_str(), so, &session),
            "CreateSession"));
  release(ort::kReleaseSession, session);
  ort::MemoryInfo* mem = nullptr;
  KILN_RETURN_IF_ERROR(check(api->get<ort::CreateCpuMemoryInfoFn>(ort::kCreateCpuMemoryInfo)(
                                 ort::kArenaAllocator, ort::kMemTypeDefault, &mem),
                             "CpuMemoryInfo"));
  release(ort::kReleaseMemoryInfo, mem);
  int64_t out_count = 1;
  for (int64_t d : output_dims) out_count *= d;
  std::vector<float> output(static_cast<size_t>(out_count));
  const auto tensor = api->get<ort::CreateTensorWithDataFn>(ort::kCreateTensorWithDataAsOrtValue);
  ort::Value* in_value = nullptr;
  ort::Value* out_value = nullptr;
  KILN_RETURN_IF_ERROR(check(tensor(mem, input.data(), input.size() * sizeof(float), dims.data(),
                                    dims.size(), ort::kElementFloat, &in_value),
                             "input tensor"));
  release(ort::kReleaseValue, in_value);
  KILN_RETURN_IF_ERROR(
      check(tensor(mem, output.data(), output.size() * sizeof(float), output_dims.data(),
                   output_dims.size(), ort::kElementFloat, &out_value),
            "output tensor"));
  release(ort::kReleaseValue, out_value);
  const char* in_names[] = {input_name.c_str()};
  const char* out_names[] = {output_name.c_str()};
  const ort::Value* inputs[] = {in_value};
  KILN_RETURN_IF_ERROR(check(api->get<ort::RunFn>(ort::kRun)(session, nullptr, in_names, inputs, 1,
                                                             out_names, 1, &out_value),
                             "Run"));
  return output;
}

}  // namespace kiln::testing
