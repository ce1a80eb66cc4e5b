#include "tactics/onednn/onednn_common.h"

#include <fmt/format.h>
#include <omp.h>

#include <array>
#include <cstddef>
#include <cstring>

namespace kiln::tactics::onednn {
namespace {

namespace ref = kernels::ref;

std::string check_f32(const ir::TensorDesc& d, std::string_view kind, size_t i) {
  if (d.dtype == DType::kUndefined || d.dtype == DType::kF32) return "";
  return fmt::format("{} {} is {}; the oneDNN tactics run float32 only", kind, i,
                     dtype_name(d.dtype));
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

OmpThreads::OmpThreads(const parallel::ThreadPool* pool) : previous_(omp_get_max_threads()) {
  omp_set_num_threads(pool == nullptr ? 1 : pool->size());
}

OmpThreads::~OmpThreads() { omp_set_num_threads(previous_); }

std::string require_f32(const LayerSpec& spec) {
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (!spec.has_input(i)) continue;
    if (std::string why = check_f32(spec.inputs[i], "input", i); !why.empty()) return why;
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    if (std::string why = check_f32(spec.outputs[i], "output", i); !why.empty()) return why;
  }
  return "";
}

std::string require_rank(const LayerSpec& spec, size_t i, int min_rank, int max_rank) {
  if (!spec.has_input(i) || i >= spec.inputs.size()) return fmt::format("input {} is absent", i);
  const ir::TensorDesc& d = spec.inputs[i];
  if (!d.has_rank()) return fmt::format("input {} has an unknown rank", i);
  if (d.rank() < min_rank || d.rank() > max_rank) {
    return fmt::format("input {} {} has rank {}; this tactic needs rank {} to {}", i, d.to_string(),
                       d.rank(), min_rank, max_rank);
  }
  return "";
}

ref::ActivationParams activation_of(const ir::Node& node) {
  ref::ActivationParams p;
  p.kind = ref::parse_activation(node.attrs.get_string("activation", ""))
               .value_or(ref::Activation::kNone);
  const std::vector<float> v = node.attrs.get_floats("activation_params");
  if (v.size() > 0) p.alpha = v[0];
  if (v.size() > 1) p.beta = v[1];
  return p;
}

std::string activation_why_not(const ir::Node& node) {
  const std::string name = node.attrs.get_string("activation", "");
  if (!ref::parse_activation(name)) {
    return fmt::format("activation '{}' has no oneDNN eltwise post-op", name);
  }
  // Every kiln activation maps onto oneDNN 2.6's eltwise algorithms (see append_activation).
  return "";
}

void append_activation(const ref::ActivationParams& act, dnnl::post_ops& ops) {
  using A = dnnl::algorithm;
  auto add = [&](A alg, float alpha = 0.0f, float beta = 0.0f) {
    ops.append_eltwise(1.0f, alg, alpha, beta);
  };
  switch (act.kind) {
    case ref::Activation::kNone:
      return;
    case ref::Activation::kRelu:
      return add(A::eltwise_relu);
    case ref::Activation::kClip:
      return add(A::eltwise_clip, act.alpha, act.beta);
    case ref::Activation::kLeakyRelu:
      return add(A::eltwise_relu, act.alpha);
    case ref::Activation::kSigmoid:
      return add(A::eltwise_logistic);
    case ref::Activation::kSilu:
      return add(A::eltwise_swish, 1.0f);  // x * sigmoid(alpha * x)
    case ref::Activation::kHardSwish:
      return add(A::eltwise_hardswish);  // 2.6: x * relu6(x + 3) / 6, no parameters
    case ref::Activation::kHardSigmoid:
      // 2.6 has no hardsigmoid: alpha * x + beta, then clip to [0, 1].
      add(A::eltwise_linear, act.alpha, act.beta);
      return add(A::eltwise_clip, 0.0f, 1.0f);
    case ref::Activation::kGelu:
      return add(A::eltwise_gelu_erf);
    case ref::Activation::kTanh:
      return add(A::eltwise_tanh);
  }
}

std::optional<Dims> known_dims(const ir::TensorDesc& x, bool any_batch) {
  if (!x.has_rank()) return std::nullopt;
  Dims d;
  for (int i = 0; i < x.rank(); ++i) {
    if (x.dim(i).is_known()) {
      d.push_back(x.dim(i).value);
    } else if (i == 0 && any_batch) {
      d.push_back(1);
    } else {
      return std::nullopt;
    }
  }
  return d;
}

dnnl::memory::dims to_dims(std::span<const int64_t> dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size());
  dnnl::memory::dim s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<dnnl::memory::dim>(dims[i], 1);
  }
  return strided_desc(dims, strides);
}

dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

Status layer_status(const ir::Node& node, std::string_view what) {
  return unsupported("node '{}' ({}): oneDNN: {}", node.name, node.op_type, what);
}

Status layer_status(const ir::Node& node, const dnnl::error& e) {
  return layer_status(node, fmt::format("{} (status {})", e.what(), static_cast<int>(e.status)));
}

namespace {

// The stored weights' header: magic, oneDNN's major, minor and patch version, the descriptor's
// size and bytes (dnnl_memory_desc_t is plain data in oneDNN 2), padded to keep the data aligned.
constexpr char kMagic[8] = {'k', 'i', 'l', 'n', 'd', 'n', 'n', 'w'};
constexpr size_t kVersionAt = sizeof(kMagic), kDescAt = kVersionAt + 4 * sizeof(uint32_t);
constexpr size_t kHeaderBytes = (kDescAt + sizeof(dnnl_memory_desc_t) + 63) / 64 * 64;

std::array<uint32_t, 4> header_words() {
  const dnnl_version_t* v = dnnl_version();
  return {static_cast<uint32_t>(v->major), static_cast<uint32_t>(v->minor),
          static_cast<uint32_t>(v->patch), static_cast<uint32_t>(sizeof(dnnl_memory_desc_t))};
}

// The descriptor and data of an engine's stored weights, checked against this oneDNN.
Result<std::pair<dnnl::memory::desc, const std::byte*>> read_stored(const Tensor& stored) {
  const auto* bytes = static_cast<const std::byte*>(stored.raw_data());
  const size_t n = stored.nbytes();
  if (bytes == nullptr || n < kHeaderBytes || std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0) {
    return invalid_argument("the engine's packed oneDNN weights ({} bytes) have no header", n);
  }
  std::array<uint32_t, 4> words;
  std::memcpy(words.data(), bytes + kVersionAt, sizeof(words));
  if (words != header_words()) {
    const std::array<uint32_t, 4> here = header_words();
    return invalid_argument(
        "the engine's weights were packed by oneDNN {}.{}.{}, this is {}.{}.{}: rebuild the engine",
        words[0], words[1], words[2], here[0], here[1], here[2]);
  }
  dnnl_memory_desc_t raw;
  std::memcpy(&raw, bytes + kDescAt, sizeof(raw));
  const dnnl::memory::desc desc(raw);
  if (raw.format_kind != dnnl_blocked || n != kHeaderBytes + desc.get_size()) {
    return invalid_argument(
        "the engine's packed oneDNN weights ({} bytes) do not match their header", n);
  }
  return std::pair{desc, bytes + kHeaderBytes};
}

}  // namespace

Status PackedWeights::pack(const void* weights, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& to) {
  if (packed_as(to)) return Status::ok();
  const size_t bytes = to.get_size();
  data_ = Tensor(DType::kU8, {static_cast<int64_t>(std::max<size_t>(bytes, 1))});
  const dnnl::engine& eng = cpu_engine();
  dnnl::memory src(from, eng, const_cast<void*>(weights));
  dnnl::memory dst(to, eng, data_.raw_data());
  dnnl::stream s(eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  desc_ = to;
  return Status::ok();
}

Status PackedWeights::adopt(const Tensor& stored, const dnnl::memory::desc& to) {
  if (packed_as(to)) return Status::ok();
  KILN_ASSIGN_OR_RETURN(auto found, read_stored(stored));
  const auto& [desc, data] = found;
  if (desc != to) return pack(data, desc, to);
  data_ = Tensor::borrow(DType::kU8, {static_cast<int64_t>(std::max<size_t>(to.get_size(), 1))},
                         data, nullptr);
  desc_ = to;
  return Status::ok();
}

Status check_stored_weights(const ir::Node& node, const Tensor& stored) {
  const auto found = read_stored(stored);
  return found.is_ok() ? Status::ok() : layer_status(node, found.status().message());
}

Result<Tensor> stored_weights(const void* weights, const dnnl::memory::desc& from,
                              const dnnl::memory::desc& to) {
  if (to.data.format_kind != dnnl_blocked) return Tensor();
  const size_t bytes = to.get_size();
  Tensor out(DType::kU8, {static_cast<int64_t>(kHeaderBytes + bytes)});
  auto* p = static_cast<std::byte*>(out.raw_data());
  std::memcpy(p, kMagic, sizeof(kMagic));
  const std::array<uint32_t, 4> words = header_words();
  std::memcpy(p + kVersionAt, words.data(), sizeof(words));
  std::memcpy(p + kDescAt, &to.data, sizeof(to.data));
  const dnnl::engine& eng = cpu_engine();
  dnnl::memory src(from, eng, const_cast<void*>(weights));
  dnnl::memory dst(to, eng, p + kHeaderBytes);
  dnnl::stream s(eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  return out;
}

int Exec::add(int arg, const dnnl::memory::desc& md) {
  mems_.emplace_back(md, cpu_engine(), nullptr);
  args_.push_back(dnnl_exec_arg_t{arg, mems_.back().get()});
  return static_cast<int>(mems_.size()) - 1;
}

void Exec::bind(int slot, const void* data) {
  dnnl_memory_set_data_handle(mems_[static_cast<size_t>(slot)].get(), const_cast<void*>(data));
}

void Exec::init(dnnl::primitive prim, const dnnl::memory::desc& scratchpad) {
  prim_ = std::move(prim);
  stream_ = dnnl::stream(cpu_engine());
  mems_.clear();
  args_.clear();
  mems_.reserve(8);  // add() keeps handles in args_; the memories own them
  const size_t bytes = scratchpad.get_size();
  if (bytes > 0) {
    scratchpad_ = Tensor(DType::kU8, {static_cast<int64_t>(bytes)});
    const int slot = add(DNNL_ARG_SCRATCHPAD, scratchpad);
    bind(slot, scratchpad_.raw_data());
  }
}

Status Exec::execute() {
  if (dnnl_primitive_execute(prim_.get(), stream_.get(), static_cast<int>(args_.size()),
                             args_.data()) != dnnl_success) {
    return internal_error("oneDNN primitive execution failed");
  }
  dnnl_stream_wait(stream_.get());
  return Status::ok();
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace kiln::tactics::onednn
