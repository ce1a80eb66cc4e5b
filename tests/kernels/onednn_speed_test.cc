// Not tests of speed (no assertion; disabled): print the oneDNN conv tactic's time against the
// builtin one on ResNet-50 layers, at 1 and 2 threads, and what oneDNN's blocked layout (nChw16c)
// would gain. Run with:
//   kiln_unit_tests --gtest_also_run_disabled_tests --gtest_filter='OnednnSpeed.*'
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "kernels/tactic_test_util.h"
#include "parallel/thread_pool.h"
#include "tactics/onednn/onednn_common.h"

namespace kiln::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Layer {
  const char* what;
  int64_t cin, cout, hw, k, stride, pad;
  int64_t out_hw() const { return (hw + 2 * pad - k) / stride + 1; }
  double gflop() const {
    return 2.0 * static_cast<double>(cin * cout * k * k * out_hw() * out_hw()) / 1e9;
  }
};

const Layer kLayers[] = {
    {"3x3 64->64 56x56", 64, 64, 56, 3, 1, 1},
    {"1x1 256->64 56x56", 256, 64, 56, 1, 1, 0},
    {"7x7/2 3->64 224x224 (stem)", 3, 64, 224, 7, 2, 3},
};

OpCase layer_case(const Layer& l) {
  OpCase c;
  c.op_type = "Conv";
  c.attrs =
      attrs({{"strides", Ints{l.stride, l.stride}}, {"pads", Ints{l.pad, l.pad, l.pad, l.pad}}});
  c.inputs = {in(random_f32({1, l.cin, l.hw, l.hw}, 1)),
              constant(random_f32({l.cout, l.cin, l.k, l.k}, 2)),
              constant(random_f32({l.cout}, 3))};
  return c;
}

// The best of `reps` timings of fn, in ms, after a warm-up call.
double best_ms(int reps, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

double tactic_ms(const std::string& name, const OpCase& c, parallel::ThreadPool* pool) {
  auto og = build_op_graph(c);
  EXPECT_TRUE(og.is_ok());
  const tactics::LayerSpec spec = layer_spec(og->graph);
  auto kernel = tactics::find_tactic(name)->instantiate(spec);
  EXPECT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  (*kernel)->set_thread_pool(pool);
  const Tensor& x = og->feeds.begin()->second;
  const ir::Node& node = og->graph.nodes[0];
  std::vector<TensorView> in{TensorView::of(x)};
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    in.push_back(TensorView::of(*og->graph.value(node.inputs[i]).initializer));
  }
  const ir::TensorDesc& yd = og->graph.value(node.outputs[0]).desc;
  Tensor y(DType::kF32, yd.static_dims());
  std::vector<TensorView> out{TensorView::of(y)};
  EXPECT_TRUE((*kernel)->reshape(in, out).is_ok());
  return best_ms(10, [&] { (void)(*kernel)->run(in, out); });
}

TEST(OnednnSpeed, DISABLED_ConvAgainstBuiltin) {
  for (int threads : {1, 2}) {
    parallel::ThreadPool pool(threads);
    for (const Layer& l : kLayers) {
      const OpCase c = layer_case(l);
      const char* builtin = l.k == 1 ? "conv.1x1_gemm.f32" : "conv.direct.f32";
      std::printf("%d thread(s) %-28s ", threads, l.what);
      std::fflush(stdout);  // a crash in a kernel shows which layer
      const double b = tactic_ms(builtin, c, &pool);
      const double o = tactic_ms("onednn.conv.f32", c, &pool);
      std::printf("%-18s %7.2f ms %6.1f GFLOP/s | onednn.conv.f32 %7.2f ms %6.1f GFLOP/s\n",
                  builtin, b, l.gflop() / b * 1e3, o, l.gflop() / o * 1e3);
    }
  }
}

// oneDNN's convolution on plain nchw (what the tactic does) against its preferred blocked layout
// (format_tag::any, nChw16c here), alone and with the reorders a per-layer use would need.
TEST(OnednnSpeed, DISABLED_BlockedLayoutAgainstPlain) {
  using dnnl::memory;
  namespace od = tactics::onednn;
  const dnnl::engine& eng = od::cpu_engine();
  dnnl::stream s(eng);
  for (int threads : {1, 2}) {
    parallel::ThreadPool pool(threads);
    od::OmpThreads omp(&pool);
    for (const Layer& l : kLayers) {
      const memory::dims src{1, l.cin, l.hw, l.hw}, w{l.cout, l.cin, l.k, l.k}, b{l.cout},
          dst{1, l.cout, l.out_hw(), l.out_hw()}, st{l.stride, l.stride}, pad{l.pad, l.pad};
      auto pd_for = [&](memory::format_tag act) {
        auto md = [&](const memory::dims& d, memory::format_tag t) {
          return memory::desc(d, memory::data_type::f32, t);
        };
        dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct, md(src, act),
                                          md(w, memory::format_tag::any),
                                          md(b, memory::format_tag::x), md(dst, act), st, pad, pad);
        return dnnl::convolution_forward::primitive_desc(d, eng);
      };
      auto time_conv = [&](const dnnl::convolution_forward::primitive_desc& pd, bool reorders) {
        memory user_src({src, memory::data_type::f32, memory::format_tag::nchw}, eng);
        memory user_dst({dst, memory::data_type::f32, memory::format_tag::nchw}, eng);
        memory csrc(pd.src_desc(), eng), cdst(pd.dst_desc(), eng), cw(pd.weights_desc(), eng),
            cb(pd.bias_desc(), eng);
        dnnl::convolution_forward conv(pd);
        dnnl::reorder to(user_src, csrc), from(cdst, user_dst);
        return best_ms(20, [&] {
          if (reorders) to.execute(s, user_src, csrc);
          conv.execute(s, {{DNNL_ARG_SRC, csrc},
                           {DNNL_ARG_WEIGHTS, cw},
                           {DNNL_ARG_BIAS, cb},
                           {DNNL_ARG_DST, cdst}});
          if (reorders) from.execute(s, cdst, user_dst);
          s.wait();
        });
      };
      const auto plain = pd_for(memory::format_tag::nchw);
      const auto blocked = pd_for(memory::format_tag::any);
      const double p = time_conv(plain, false);
      const double bl = time_conv(blocked, false);
      const double blr = time_conv(blocked, true);
      std::printf(
          "%d thread(s) %-28s nchw %7.2f ms (%s) | blocked %7.2f ms (%s), with reorders %7.2f ms\n",
          threads, l.what, p, plain.impl_info_str(), bl, blocked.impl_info_str(), blr);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
