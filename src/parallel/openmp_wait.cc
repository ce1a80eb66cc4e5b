#include "parallel/openmp_wait.h"

#include <unistd.h>

#include <cstdlib>

#include "parallel/thread_pool.h"

namespace kiln::parallel {
namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

void reexec_with_openmp_wait(char** argv) {
  if (!env_or_empty("OMP_WAIT_POLICY").empty() || !env_or_empty("GOMP_SPINCOUNT").empty()) return;
  if (argv == nullptr || argv[0] == nullptr) return;
  const bool shared = ThreadPool::backend() == "openmp";
  const int set = shared ? setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1)
                         : setenv("OMP_WAIT_POLICY", "passive", 1);
  if (set != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): carry on; libgomp keeps its default wait in this process.
}

std::string openmp_wait() {
  std::string out;
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
    const std::string v = env_or_empty(name);
    if (v.empty()) continue;
    if (!out.empty()) out += ' ';
    out += std::string(name) + "=" + v;
  }
  return out;
}

}  // namespace kiln::parallel
