#include "parallel/openmp_wait.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kiln::parallel {

void reexec_with_passive_openmp_wait(char** argv) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (policy != nullptr && *policy != '\0') return;
  if (argv == nullptr || argv[0] == nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): carry on; libgomp keeps its default policy in this process.
}

std::string openmp_wait_policy() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::string p = policy == nullptr ? "" : policy;
  std::transform(p.begin(), p.end(), p.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return p;
}

}  // namespace kiln::parallel
