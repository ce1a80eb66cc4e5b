#include "doctor_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sched.h>

#include <ostream>

#include "kiln/version.h"
#include "parallel/openmp_wait.h"
#include "parallel/thread_pool.h"

namespace kiln::cli {
namespace {

bool has_all(CpuFeatureSet features, CpuFeatureSet wanted) { return (features & wanted) == wanted; }

std::string fp32_path_line(CpuFeatureSet f) {
  if (has_all(f, kIsaAvx512)) return "FP32: kiln's AVX-512 kernels, and oneDNN's";
  if (has_all(f, kIsaAvx2)) return "FP32: kiln's AVX2+FMA kernels, and oneDNN's";
  return "FP32: kiln's portable kernels, and oneDNN's (no AVX2+FMA: expect slow convolutions)";
}

std::string fp16_path_line(CpuFeatureSet f) {
  if (has_feature(f, CpuFeature::kAvx512Fp16)) {
    return "FP16: --fp16 stores weights in FP16; this CPU has AVX512-FP16, but kiln's kernels "
           "compute in FP32 (converting with F16C)";
  }
  if (has_feature(f, CpuFeature::kF16c)) {
    return "FP16: F16C converts, no FP16 arithmetic: --fp16 halves the engine file's weights, "
           "math stays FP32 (faster only where reading weights bounds a layer: small-batch "
           "GEMMs; a running engine holds float32 weights, docs/fp16.md)";
  }
  return "FP16: no F16C: --fp16 weights are widened in portable code";
}

int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

}  // namespace

// Gains quoted are measured figures (docs/performance.md, "INT8 engines", "INT8 without VNNI", the
// 2026-12-01 and 2026-12-05 sections' "INT8 without VNNI" and the 2026-12-02 section's AMX
// figures).
std::string int8_path_line(CpuFeatureSet f) {
  if (has_all(f, kIsaAmxInt8)) {
    return "INT8: AMX-INT8 for the convolutions (tdpbsud, 16384 int8 multiply-adds per "
           "instruction), AVX512-VNNI for the rest; measured on an Intel Xeon with AMX: ResNet-50 "
           "INT8 5.6-6.3x faster than FP32 (2 threads, four runs)";
  }
  if (has_feature(f, CpuFeature::kAvx512Vnni) && has_all(f, kIsaAvx512)) {
    return "INT8: AVX512-VNNI (vpdpbusd, 64 int8 multiply-adds per instruction); measured: "
           "ResNet-50 INT8 2.6-3.5x faster than FP32 (1 and 2 threads, two runs)";
  }
  if (has_all(f, kIsaAvx2)) {
    return "INT8: AVX2 without VNNI (exact 16-bit products, two vpmaddwd); measured on two AVX2 "
           "hosts (Zen 4, Zen 3): ResNet-50 INT8 1.0-1.4x faster than FP32, 1.5-1.8x with "
           "--int8WeightBits=7 (vpmaddubsw on 7-bit weights); MobileNetV2 INT8 no faster than "
           "FP32 (0.9x; 1.1x with 7-bit weights): depthwise networks gain little";
  }
  return "INT8: portable kernels (no AVX2): not measured; expect little or no gain over FP32";
}

Status doctor_command(std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(const CpuFeatureSet usable, cpu_features_from_env());
  const std::string cap = isa_cap_from_env();
  fmt::print(out, "kiln {} ({})\n", kVersion, kGitCommit);
  fmt::print(out, "CPU: {}\n", cpu_brand_string());
  fmt::print(out, "Features detected: {}\n", cpu_features_to_string(detected_cpu_features()));
  fmt::print(out, "Features used: {}{}\n", cpu_features_to_string(usable),
             cap == "native" ? "" : fmt::format(" (KILN_MAX_ISA={})", cap));
  fmt::print(out, "{}\n{}\n{}\n", fp32_path_line(usable), int8_path_line(usable),
             fp16_path_line(usable));
  fmt::print(out, "Threads: {} CPUs allowed for this process (--threads=0 uses them all)\n",
             cpus_allowed());
  fmt::print(out, "Thread pool: {}; OpenMP wait: {}\n", parallel::ThreadPool::backend(),
             parallel::describe_openmp_wait(parallel::openmp_wait_policy(),
                                            parallel::openmp_spin_count()));
  return Status::ok();
}

}  // namespace kiln::cli
