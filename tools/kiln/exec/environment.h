#pragma once
// What a benchmark ran on and with, for the report and --exportSummary: CPU, features, the CPUs
// this process may use, frequency governor, load, OS, and how kiln was built.

#include <nlohmann/json.hpp>
#include <string>

namespace kiln::cli::exec {

struct Environment {
  std::string cpu_model;
  std::string cpu_features_detected;  // what cpuid reports
  std::string cpu_features_usable;    // after the KILN_MAX_ISA cap
  std::string isa_cap;                // KILN_MAX_ISA, "native" when unset
  unsigned logical_cpus = 0;          // std::thread::hardware_concurrency
  int cpus_allowed = 0;               // sched_getaffinity: CPUs this process may run on
  std::string governor;               // cpu0's cpufreq scaling governor, "" when unknown
  double load_average_1min = -1;      // /proc/loadavg at start, -1 when unknown
  std::string openmp_wait_policy;     // OMP_WAIT_POLICY as libgomp read it, "" when unset
  std::string openmp_spin_count;      // GOMP_SPINCOUNT as libgomp read it, "" when unset
  std::string thread_pool;            // the pool's backend: "openmp" or "threads"
  std::string os;                     // "Linux 6.1.0 x86_64"
  std::string kiln_version, git_commit, build_type, compiler;
  bool assertions = false;  // built without NDEBUG
};

Environment capture_environment();

nlohmann::ordered_json environment_json(const Environment& env);

}  // namespace kiln::cli::exec
