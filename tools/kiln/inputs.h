#pragma once
// The input tensors of a run, shared by `kiln run` and `kiln exec`: loaded from --loadInputs files
// (.npy, or raw binary as trtexec reads it) or random, with dims from --shapes or a fallback.

#include <functional>
#include <map>
#include <string>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/graph.h"
#include "runtime/input_check.h"

namespace kiln::cli {

struct InputFlags {
  std::map<std::string, Dims> shapes;        // --shapes
  std::map<std::string, std::string> files;  // --loadInputs
  uint64_t seed = 0;                         // random inputs
};

// The dims of an input that --shapes does not give.
using DefaultDims = std::function<Dims(const ir::Value&)>;
// One report line: severity 'I' or 'W', and the text.
using LogLine = std::function<void(char severity, const std::string& text)>;

// The declared dims with symbolic ones set to 1.
Dims declared_dims(const ir::Value& in);

// One tensor per graph input except those with an initializer that no flag names (they keep their
// default). Names in the flags that are not graph inputs are InvalidArgument errors.
Result<runtime::NamedTensors> make_inputs(const ir::Graph& g, const InputFlags& flags,
                                          const DefaultDims& fallback, const LogLine& log);

}  // namespace kiln::cli
