#include "kernels/x86_test_util.h"

#include <cmath>

#include "base/cpu_features.h"
#include "parallel/thread_pool.h"

namespace kiln::testing {

std::vector<std::string> x86_isas() {
  const CpuFeatureSet host = host_cpu_features();
  std::vector<std::string> out;
  if ((host & kIsaAvx512) == kIsaAvx512) out.push_back("avx512");
  if ((host & kIsaAvx2) == kIsaAvx2) out.push_back("avx2");
  return out;
}

std::vector<std::string> x86_qconv_isas() {
  std::vector<std::string> out = x86_qisas();
  if ((host_cpu_features() & kIsaAmxInt8) == kIsaAmxInt8) out.insert(out.begin() + 1, "amx");
  return out;
}

std::vector<kernels::x86::Isa> x86_kernel_isas() {
  std::vector<kernels::x86::Isa> out;
  for (const std::string& isa : x86_isas()) {
    out.push_back(isa == "avx512" ? kernels::x86::Isa::kAvx512 : kernels::x86::Isa::kAvx2);
  }
  return out;
}

std::vector<std::string> x86_qisas() {
  const CpuFeatureSet host = host_cpu_features();
  std::vector<std::string> out;
  if ((host & kIsaAvx512Vnni) == kIsaAvx512Vnni) out.push_back("avx512");
  if ((host & kIsaAvx2) == kIsaAvx2) out.push_back("avx2");
  return out;
}

bool host_has_vnni() { return (host_cpu_features() & kIsaAvx512Vnni) == kIsaAvx512Vnni; }

ConvGemmRun make_conv_gemm_run(kernels::x86::Isa isa, const kernels::cpu::Conv2DParams& p,
                               int threads, float w_scale, float res_scale) {
  namespace kx = kernels::x86;
  ConvGemmRun r;
  r.plan = kx::plan_conv_gemm(isa, p, threads);
  const auto nx = static_cast<size_t>(p.batch * p.in_c * p.in_h * p.in_w);
  const auto nw = static_cast<size_t>(p.out_c * p.in_c / p.group * p.k_h * p.k_w);
  const auto ny = static_cast<size_t>(p.batch * p.out_c * p.out_h * p.out_w);
  r.x.resize(nx);
  r.bias.resize(static_cast<size_t>(p.out_c));
  r.res.resize(ny);
  r.y.resize(ny);
  r.packed_w.resize(kx::conv_gemm_packed_weights_floats(isa, p));
  r.scratch.resize(kx::conv_gemm_scratch_floats(r.plan));
  std::vector<float> w(nw);
  for (size_t i = 0; i < nx; ++i) r.x[i] = std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < nw; ++i) w[i] = w_scale * std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < r.bias.size(); ++i) r.bias[i] = 0.1f * static_cast<float>(i % 5) - 0.2f;
  for (size_t i = 0; i < ny; ++i) r.res[i] = res_scale * std::sin(0.11f * static_cast<float>(i));
  kx::conv_gemm_pack_weights(isa, p, w.data(), r.packed_w.data());
  r.epilogue.row_bias = r.bias.data();
  r.epilogue.addend = r.res.data();
  r.epilogue.addend_rs = p.out_h * p.out_w;
  r.epilogue.addend_cs = 1;
  r.epilogue.act = kx::Act::kRelu;
  return r;
}

void expect_matches_reference_prepacked(const std::string& name, const OpCase& c, Tolerance tol,
                                        const PrepackedRun& run) {
  const int threads = run.threads;
  SCOPED_TRACE(name + " prepacked, " + std::to_string(threads) + " thread(s)" +
               (run.fp16_weights ? ", FP16 weights" : "") + ", on " + case_text(c));
  auto og = build_op_graph(c);
  ASSERT_TRUE(og.is_ok()) << og.status().to_string();
  const tactics::Tactic* tactic = tactics::find_tactic(name);
  ASSERT_NE(tactic, nullptr) << "no tactic named " << name;
  tactics::LayerSpec spec = layer_spec(og->graph);
  spec.fp16_weights = run.fp16_weights;
  ASSERT_EQ(tactic->why_not(spec), "");
  auto packed = tactic->prepack(spec);
  ASSERT_TRUE(packed.is_ok()) << packed.status().to_string();
  if (run.fp16_weights) {
    EXPECT_FALSE(packed->defined()) << "an FP16 layer's weights are stored once, as binary16";
  }
  if (packed->defined()) spec.prepacked = &*packed;
  auto kernel = tactic->instantiate(spec);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  std::unique_ptr<parallel::ThreadPool> pool;
  if (threads > 1) {
    pool = std::make_unique<parallel::ThreadPool>(threads);
    (*kernel)->set_thread_pool(pool.get());
  }
  auto got = run_layer_kernel(**kernel, *og);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->run_allocations, 0) << "run() allocated";
  auto want = run_op(run.reference != nullptr ? *run.reference : c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_EQ(got->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(compare_tensors(got->outputs[i], (*want)[i], tol), "") << "output " << i;
  }
}

}  // namespace kiln::testing
