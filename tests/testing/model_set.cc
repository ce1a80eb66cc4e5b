#include "testing/model_set.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "runtime/reference_executor.h"

namespace kiln::testing {

std::filesystem::path model_dir() {
  const char* env = std::getenv("KILN_MODEL_DIR");
  return env != nullptr ? std::filesystem::path(env)
                        : std::filesystem::path(KILN_SOURCE_DIR) / "models" / "cache";
}

Tensor run_reference(const ir::Graph& graph, const Tensor& input) {
  auto exec = runtime::ReferenceExecutor::create(graph);
  EXPECT_TRUE(exec.is_ok()) << exec.status().to_string();
  if (!exec.is_ok()) return {};
  auto out = exec->run({{graph.value(graph.inputs[0]).name, input}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() && !out->empty() ? (*out)[0] : Tensor();
}

Tensor repeat_batch(const Tensor& t, int64_t copies) {
  Dims dims = t.dims();
  dims[0] = copies;
  Tensor out(t.dtype(), dims);
  for (int64_t n = 0; n < copies; ++n) {
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + n * t.nbytes(), t.raw_data(), t.nbytes());
  }
  return out;
}

}  // namespace kiln::testing
