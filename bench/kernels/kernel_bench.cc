// bench/kernels: every tactic that can run a layer of the suite (kernels/layers.h), timed with
// Google Benchmark at 1 and 2 threads, reported as GFLOP/s and as a fraction of the machine's FMA
// peak measured in the same run (common/fma_peak.h). Speed lives here, never in tests.
//
//   build/release/bench/kernels/kiln_kernel_bench [--benchmark_filter=resnet50]
//
// Counters: GFLOPs = the layer's flops / time; peak = GFLOPs / (measured peak for that many
// threads). INT8 layers (kiln.QConv, kiln.QGemm: "qconv", "qgemm" in their names) report GOPs
// instead, against the measured vpdpbusd peak. KILN_MAX_ISA caps the tactics as it does
// everywhere. --cold reads 1.5x the last-level cache before every timed run (tuner/cold_cache.h),
// so weights, input and output come from memory, and names the runs ".../cold": the far end of how
// a layer may run inside a network (ResNet-50's layers on this VM ran between it and the warm
// runs).
//
// The suite's INT8 convolutions of one group also run on a peer, oneDNN's int8 convolution on NHWC
// uint8 (kernels/onednn_qconv.h), named ".../peer.onednn.int8.nhwc/threads:N" and labelled with
// the implementation oneDNN chose. Its output is checked against kiln's first tactic for the
// layer before timing: more than 1 apart anywhere (rounding order) fails the run and the exit
// status.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/cache_sizes.h"
#include "base/cpu_features.h"
#include "common/fma_peak.h"
#include "kernels/layers.h"
#include "kernels/onednn_qconv.h"
#include "ops/kiln_fused.h"
#include "parallel/thread_pool.h"
#include "tactics/tactic.h"
#include "tuner/cold_cache.h"

namespace kiln::bench {
namespace {

std::map<int, double> g_peak;       // threads -> GFLOP/s, measured before the kernels run
std::map<int, double> g_vnni_peak;  // threads -> GOP/s of vpdpbusd (0 without VNNI)
std::map<int, double> g_amx_peak;   // threads -> GOP/s of tdpbsud (0 without AMX-INT8)
size_t g_flush_bytes = 0;           // --cold: read before each timed run
bool g_peer_mismatch = false;       // a peer's output differed from kiln's

struct Buffers {
  std::vector<Tensor> owned;
  std::vector<TensorView> in, out;
};

// A residual (kiln.FusedConv's and kiln.ConvNchw16c's input 3) is the output's own buffer when the
// tactic runs it in place, as the engine then lays them out (engine/memory_layout.cc).
Buffers make_buffers(const ir::Graph& g, bool residual_in_place) {
  Buffers b;
  const ir::Node& node = g.nodes.front();
  b.owned.reserve(node.inputs.size() + node.outputs.size());
  for (ir::ValueId v : node.inputs) {
    const ir::Value& val = g.value(v);
    if (val.initializer) {
      b.in.push_back(TensorView::of(*val.initializer));
      continue;
    }
    b.owned.emplace_back(val.desc.dtype, val.desc.static_dims());
    Tensor& t = b.owned.back();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kU8) {
        t.data<uint8_t>()[i] = static_cast<uint8_t>(i % 97);
      } else {
        t.data<float>()[i] = 0.01f * static_cast<float>(i % 97);
      }
    }
    b.in.push_back(TensorView::of(b.owned.back()));
  }
  for (ir::ValueId v : node.outputs) {
    b.owned.emplace_back(g.value(v).desc.dtype, g.value(v).desc.static_dims());
    b.out.push_back(TensorView::of(b.owned.back()));
  }
  if (residual_in_place && ops::residual_input(node) == 3 && b.in.size() > 3) {
    std::memcpy(b.out[0].data, b.in[3].data, b.out[0].nbytes());
    b.in[3] = b.out[0];
  }
  return b;
}

void run_layer(benchmark::State& state, const BenchLayer* layer, const tactics::Tactic* tactic,
               int threads) {
  const ir::Graph& g = *layer->graph;
  tactics::LayerSpec spec = tactics::make_layer_spec(g, g.nodes.front());
  Result<Tensor> packed = tactic->prepack(spec);
  if (!packed.is_ok()) return state.SkipWithError(packed.status().to_string().c_str());
  if (packed->defined()) spec.prepacked = &*packed;
  auto kernel = tactic->instantiate(spec);
  if (!kernel.is_ok()) return state.SkipWithError(kernel.status().to_string().c_str());
  std::unique_ptr<parallel::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<parallel::ThreadPool>(threads);
  (*kernel)->set_thread_pool(pool.get());
  Buffers b = make_buffers(g, tactic->residual_in_place());
  if (Status s = (*kernel)->reshape(b.in, b.out); !s.is_ok()) {
    return state.SkipWithError(s.to_string().c_str());
  }
  std::unique_ptr<tuner::CacheFlusher> flusher;
  if (g_flush_bytes > 0) flusher = std::make_unique<tuner::CacheFlusher>(g_flush_bytes);
  double seconds = 0;
  for (auto _ : state) {
    if (flusher) flusher->flush(pool.get(), g_flush_bytes);
    const auto t0 = std::chrono::steady_clock::now();
    Status s = (*kernel)->run(b.in, b.out);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.is_ok()) return state.SkipWithError(s.to_string().c_str());
    state.SetIterationTime(t);
    seconds += t;
  }
  const double gflops = layer->flops * static_cast<double>(state.iterations()) / seconds * 1e-9;
  // INT8 layers: GOP/s (a multiply-add counts 2) against the VNNI peak, or the AMX tactics' own.
  const bool amx = has_feature(tactic->required_features(), CpuFeature::kAmxInt8);
  const double peak = !layer->int8 ? g_peak[threads]
                      : amx        ? g_amx_peak[threads]
                                   : g_vnni_peak[threads];
  state.counters[layer->int8 ? "GOPs" : "GFLOPs"] = gflops;
  if (peak > 0) state.counters["peak_pct"] = 100.0 * gflops / peak;
  if (layer->repeats > 1) state.counters["repeats"] = layer->repeats;
}

// The tactics this suite times for a layer: allocation-free ones the host runs that take it.
bool timed_here(const tactics::Tactic& t, const tactics::LayerSpec& spec) {
  return !t.allocates() && (t.required_features() & ~host_cpu_features()) == 0 &&
         t.why_not(spec).empty();
}

// The first tactic timed here for the layer (the order tactics_for lists them in).
const tactics::Tactic* first_tactic(const ir::Graph& g) {
  const ir::Node& node = g.nodes.front();
  const tactics::LayerSpec spec = tactics::make_layer_spec(g, node);
  for (const tactics::Tactic* t : tactics::tactics_for(node.domain, node.op_type)) {
    if (timed_here(*t, spec)) return t;
  }
  return nullptr;
}

// kiln's output of the layer on the buffers' input, by its first tactic, on one thread.
Result<std::vector<uint8_t>> kiln_output(const BenchLayer& layer, Buffers& b) {
  const ir::Graph& g = *layer.graph;
  const tactics::Tactic* t = first_tactic(g);
  if (t == nullptr) return internal_error("{}: no kiln tactic runs it here", layer.name);
  tactics::LayerSpec spec = tactics::make_layer_spec(g, g.nodes.front());
  KILN_ASSIGN_OR_RETURN(Tensor packed, t->prepack(spec));
  if (packed.defined()) spec.prepacked = &packed;
  KILN_ASSIGN_OR_RETURN(auto kernel, t->instantiate(spec));
  KILN_RETURN_IF_ERROR(kernel->reshape(b.in, b.out));
  KILN_RETURN_IF_ERROR(kernel->run(b.in, b.out));
  const auto* y = static_cast<const uint8_t*>(b.out[0].data);
  return std::vector<uint8_t>(y, y + b.out[0].nbytes());
}

void run_onednn_peer(benchmark::State& state, const BenchLayer* layer, int threads) {
  Buffers b = make_buffers(*layer->graph, false);
  Result<std::vector<uint8_t>> want = kiln_output(*layer, b);
  if (!want.is_ok()) return state.SkipWithError(want.status().to_string().c_str());
  auto peer = OnednnQConv::make(*layer->graph, static_cast<const uint8_t*>(b.in[0].data), threads);
  if (!peer.is_ok()) return state.SkipWithError(peer.status().to_string().c_str());
  (*peer)->run();
  const std::vector<uint8_t> got = (*peer)->output_nchw();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(int{got[i]} - int{(*want)[i]}) > 1) {
      g_peer_mismatch = true;
      return state.SkipWithError(fmt::format("oneDNN ({}) gives {} at element {}, kiln {}",
                                             (*peer)->impl(), got[i], i, (*want)[i])
                                     .c_str());
    }
  }
  std::unique_ptr<tuner::CacheFlusher> flusher;
  if (g_flush_bytes > 0) flusher = std::make_unique<tuner::CacheFlusher>(g_flush_bytes);
  double seconds = 0;
  for (auto _ : state) {
    if (flusher) flusher->flush(nullptr, g_flush_bytes);
    const auto t0 = std::chrono::steady_clock::now();
    (*peer)->run();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(t);
    seconds += t;
  }
  const double gops = layer->flops * static_cast<double>(state.iterations()) / seconds * 1e-9;
  state.counters["GOPs"] = gops;
  if (g_vnni_peak[threads] > 0) state.counters["peak_pct"] = 100.0 * gops / g_vnni_peak[threads];
  if (layer->repeats > 1) state.counters["repeats"] = layer->repeats;
  state.SetLabel((*peer)->impl());
}

void register_all(const std::vector<BenchLayer>& layers, const std::vector<int>& thread_counts) {
  for (const BenchLayer& layer : layers) {
    const ir::Node& node = layer.graph->nodes.front();
    const tactics::LayerSpec spec = tactics::make_layer_spec(*layer.graph, node);
    for (const tactics::Tactic* t : tactics::tactics_for(node.domain, node.op_type)) {
      if (!timed_here(*t, spec)) continue;
      for (int threads : thread_counts) {
        benchmark::RegisterBenchmark(fmt::format("{}/{}/threads:{}{}", layer.name, t->name(),
                                                 threads, g_flush_bytes > 0 ? "/cold" : "")
                                         .c_str(),
                                     run_layer, &layer, t, threads)
            ->Unit(benchmark::kMillisecond)
            ->UseManualTime();
      }
    }
    if (layer.int8 && node.op_type == "QConv" && node.attrs.get_int("group", 1) == 1) {
      for (int threads : thread_counts) {
        benchmark::RegisterBenchmark(
            fmt::format("{}/peer.onednn.int8.nhwc/threads:{}{}", layer.name, threads,
                        g_flush_bytes > 0 ? "/cold" : "")
                .c_str(),
            run_onednn_peer, &layer, threads)
            ->Unit(benchmark::kMillisecond)
            ->UseManualTime();
      }
    }
  }
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln;
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--cold") {
      bench::g_flush_bytes = host_cache_sizes().llc_bytes * 3 / 2;
    } else {
      std::fprintf(stderr, "kiln_kernel_bench: unknown flag '%s' (Google Benchmark's, or --cold)\n",
                   argv[i]);
      return 1;
    }
  }
  const std::vector<int> thread_counts = {1, std::max(2, parallel::default_thread_count())};
  for (int t : thread_counts) {
    double best = 0;
    for (int r = 0; r < 3; ++r) best = std::max(best, bench::fma_peak_gflops(t));
    bench::g_peak[t] = best;
    std::fprintf(stderr, "measured FMA peak, %d thread(s): %.1f GFLOP/s (%s)\n", t, best,
                 cpu_brand_string().c_str());
    double vnni = 0;
    for (int r = 0; r < 3; ++r) vnni = std::max(vnni, bench::vnni_peak_gops(t));
    bench::g_vnni_peak[t] = vnni;
    if (vnni > 0) {
      std::fprintf(stderr, "measured VNNI peak (vpdpbusd), %d thread(s): %.1f GOP/s\n", t, vnni);
    }
    double amx = 0;
    for (int r = 0; r < 3; ++r) amx = std::max(amx, bench::amx_peak_gops(t));
    bench::g_amx_peak[t] = amx;
    if (amx > 0) {
      std::fprintf(stderr, "measured AMX-INT8 peak (tdpbsud), %d thread(s): %.1f GOP/s\n", t, amx);
    }
  }
  Result<std::vector<bench::BenchLayer>> layers = bench::bench_layers();
  if (!layers.is_ok()) {
    std::fprintf(stderr, "kiln_kernel_bench: %s\n", layers.status().to_string().c_str());
    return 1;
  }
  bench::register_all(*layers, thread_counts);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (bench::g_peer_mismatch) {
    std::fprintf(stderr, "kiln_kernel_bench: a peer's output differed from kiln's (see above)\n");
    return 1;
  }
  return 0;
}
