#pragma once
// The few ONNX Runtime C API entry points kiln's code uses (bench/peers/ort_runner.cc and the
// tests' tests/testing/ort_runtime.cc), declared by hand so that they build without ONNX Runtime's
// headers (the npm package ships the shared library only).
//
// The C API is a table of function pointers (OrtApi) returned by OrtApiBase::GetApi(version). The
// table only ever grows at its end, so a slot's index is stable across releases: we read slots by
// index. The indices below were checked against include/onnxruntime/core/session/
// onnxruntime_c_api.h (struct OrtApi, counting its members from 0). GetApi returns null for a
// version the library does not serve, every call's status is checked, and each runner checks its
// output against PyTorch's reference: a wrong slot cannot go unnoticed.

#include <cstddef>
#include <cstdint>

namespace ort {

struct Status;  // opaque; nullptr means success
struct Env;
struct Session;
struct SessionOptions;
struct Value;
struct MemoryInfo;
struct RunOptions;
struct Allocator;

// Enum values from the C API.
constexpr int kLoggingWarning = 2;    // OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING
constexpr int kEnableAll = 99;        // GraphOptimizationLevel::ORT_ENABLE_ALL
constexpr int kSequential = 0;        // ExecutionMode::ORT_SEQUENTIAL
constexpr int kArenaAllocator = 1;    // OrtAllocatorType::OrtArenaAllocator
constexpr int kMemTypeDefault = 0;    // OrtMemType::OrtMemTypeDefault
constexpr int kElementFloat = 1;      // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT
constexpr int kElementInt64 = 7;      // ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64
constexpr uint32_t kApiVersion = 17;  // any version <= the library's own is served

struct ApiBase {
  const void* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};
using GetApiBaseFn = const ApiBase* (*)();

// Slot indices in struct OrtApi.
enum Slot : int {
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetOptimizedModelFilePath = 11,
  kSetSessionExecutionMode = 13,
  kEnableProfiling = 14,
  kSetSessionGraphOptimizationLevel = 23,
  kSetIntraOpNumThreads = 24,
  kSetInterOpNumThreads = 25,
  kSessionGetInputCount = 30,
  kSessionGetOutputCount = 31,
  kSessionGetInputName = 36,
  kSessionGetOutputName = 37,
  kCreateTensorWithDataAsOrtValue = 49,
  kGetTensorMutableData = 51,
  kCreateCpuMemoryInfo = 69,
  kGetAllocatorWithDefaultOptions = 78,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseMemoryInfo = 94,
  kReleaseSession = 95,
  kReleaseValue = 96,
  kReleaseSessionOptions = 100,
};

// Function types of those slots (all return Status*, nullptr on success, except the two noted).
using GetErrorMessageFn = const char* (*)(const Status*);
using CreateEnvFn = Status* (*)(int level, const char* logid, Env** out);
using CreateSessionFn = Status* (*)(const Env*, const char* path, const SessionOptions*,
                                    Session** out);
using RunFn = Status* (*)(Session*, const RunOptions*, const char* const* input_names,
                          const Value* const* inputs, size_t input_count,
                          const char* const* output_names, size_t output_count, Value** outputs);
using CreateSessionOptionsFn = Status* (*)(SessionOptions** out);
using SetIntFn = Status* (*)(SessionOptions*, int);  // execution mode, opt level, thread counts
using CountFn = Status* (*)(const Session*, size_t* out);
using GetNameFn = Status* (*)(const Session*, size_t index, Allocator*, char** out);
using CreateTensorWithDataFn = Status* (*)(const MemoryInfo*, void* data, size_t bytes,
                                           const int64_t* shape, size_t rank, int element_type,
                                           Value** out);
using GetTensorMutableDataFn = Status* (*)(Value*, void** out);
using CreateCpuMemoryInfoFn = Status* (*)(int allocator_type, int mem_type, MemoryInfo** out);
using GetAllocatorFn = Status* (*)(Allocator** out);
using ReleaseValueFn = void (*)(Value*);                           // returns nothing
using SetPathFn = Status* (*)(SessionOptions*, const char* path);  // ORTCHAR_T is char on Linux
// The Release* slots return nothing; each takes its own type (void* here: one signature for all).
using ReleaseFn = void (*)(void*);

// The table as an array of slots.
class Api {
 public:
  explicit Api(const void* table) : slots_(static_cast<void* const*>(table)) {}
  template <typename Fn>
  Fn get(Slot s) const {
    return reinterpret_cast<Fn>(slots_[s]);
  }

 private:
  void* const* slots_;
};

}  // namespace ort
