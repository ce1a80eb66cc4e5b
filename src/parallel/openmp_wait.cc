#include "parallel/openmp_wait.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
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

std::string openmp_wait_policy() {
  std::string p = env_or_empty("OMP_WAIT_POLICY");
  std::transform(p.begin(), p.end(), p.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return p;
}

std::string openmp_spin_count() { return env_or_empty("GOMP_SPINCOUNT"); }

std::string describe_openmp_wait(const std::string& policy, const std::string& spin_count) {
  // Appended piece by piece: GCC 12's -Wrestrict misreads `"..." + std::string&&` here.
  std::string out;
  if (!policy.empty()) out.append("OMP_WAIT_POLICY=").append(policy);
  if (!spin_count.empty()) {
    if (!out.empty()) out += ' ';
    out.append("GOMP_SPINCOUNT=").append(spin_count);
  }
  return out.empty() ? "libgomp's default" : out;
}

}  // namespace kiln::parallel
