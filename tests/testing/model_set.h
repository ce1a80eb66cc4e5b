#pragma once
// The exported model set (models/export.py) as tests see it: where it is, and running a model on
// one input with the reference executor.

#include <filesystem>

#include "base/tensor.h"
#include "ir/graph.h"

namespace kiln::testing {

// Whether this is a sanitizer preset's build. The reference executor runs the largest models in
// 9-31 s each under AddressSanitizer (92 s of the unit suite's 226 there); the model tests compare
// those outputs in the release build only and still run their passes under the sanitizers.
#ifdef KILN_TEST_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// $KILN_MODEL_DIR, else <source>/models/cache.
std::filesystem::path model_dir();

// The graph's first output on `input` (fed to its first input); records a test failure and returns
// an undefined tensor when the run fails.
Tensor run_reference(const ir::Graph& graph, const Tensor& input);

// `copies` copies of a batch-1 tensor stacked along a new leading batch axis.
Tensor repeat_batch(const Tensor& t, int64_t copies);

}  // namespace kiln::testing
