#include "exec/environment.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>

#include <fstream>
#include <thread>

#include "base/cpu_features.h"
#include "kiln/version.h"
#include "parallel/openmp_wait.h"
#include "parallel/thread_pool.h"

#ifndef KILN_BUILD_TYPE
#define KILN_BUILD_TYPE "unknown"
#endif

namespace kiln::cli::exec {
namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

Environment capture_environment() {
  Environment e;
  e.cpu_model = cpu_brand_string();
  e.cpu_features_detected = cpu_features_to_string(detected_cpu_features());
  e.cpu_features_usable = cpu_features_to_string(host_cpu_features());
  e.isa_cap = isa_cap_from_env();
  e.logical_cpus = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) e.cpus_allowed = CPU_COUNT(&set);
  e.governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  std::ifstream loadavg("/proc/loadavg");
  if (!(loadavg >> e.load_average_1min)) e.load_average_1min = -1;
  e.openmp_wait_policy = parallel::openmp_wait_policy();
  e.openmp_spin_count = parallel::openmp_spin_count();
  e.thread_pool = std::string(parallel::ThreadPool::backend());
  utsname u{};
  if (uname(&u) == 0) e.os = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  e.kiln_version = kVersion;
  e.git_commit = kGitCommit;
  e.build_type = KILN_BUILD_TYPE;
  e.compiler = compiler();
#ifdef NDEBUG
  e.assertions = false;
#else
  e.assertions = true;
#endif
  return e;
}

nlohmann::ordered_json environment_json(const Environment& e) {
  using json = nlohmann::ordered_json;
  return {
      {"cpu",
       {{"model", e.cpu_model},
        {"features_detected", e.cpu_features_detected},
        {"features_usable", e.cpu_features_usable},
        {"isa_cap", e.isa_cap},
        {"logical_cpus", e.logical_cpus},
        {"cpus_allowed", e.cpus_allowed},
        {"governor", e.governor.empty() ? json(nullptr) : json(e.governor)},
        {"load_average_1min",
         e.load_average_1min < 0 ? json(nullptr) : json(e.load_average_1min)}}},
      {"openmp_wait_policy",
       e.openmp_wait_policy.empty() ? json(nullptr) : json(e.openmp_wait_policy)},
      {"openmp_spin_count",
       e.openmp_spin_count.empty() ? json(nullptr) : json(e.openmp_spin_count)},
      {"thread_pool", e.thread_pool},
      {"os", e.os},
      {"device", e.cpu_model},
      {"kiln",
       {{"version", e.kiln_version},
        {"git_commit", e.git_commit},
        {"build_type", e.build_type},
        {"compiler", e.compiler},
        {"assertions", e.assertions}}},
  };
}

}  // namespace kiln::cli::exec
