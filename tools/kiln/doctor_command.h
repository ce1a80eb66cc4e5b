#pragma once
// `kiln doctor`: what this CPU gives kiln before anything is built — the kernel paths FP32, INT8
// and FP16 will take (after any KILN_MAX_ISA cap), the speed-up INT8 gave on such a path when it
// was measured, threads, and the OpenMP wait policy. `kiln build --int8` prints the INT8 line too.

#include <iosfwd>
#include <string>

#include "base/cpu_features.h"
#include "base/status.h"

namespace kiln::cli {

// One line: the INT8 kernel path for `features` and the measured gain over FP32 on it.
std::string int8_path_line(CpuFeatureSet features);

Status doctor_command(std::ostream& out);

}  // namespace kiln::cli
