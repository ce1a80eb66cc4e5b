// Structured fuzzing of the importer, shape functions and reference kernels: ONNX's conformance
// models with their integer/float attributes and integer input values replaced by hostile ones
// (negative, zero, huge, out of range). Whatever happens must be a clean Status — never a crash, a
// hang or a sanitizer report (CI runs this under ASan+UBSan).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "frontend/onnx/importer.h"
#include "onnx/onnx_pb.h"
#include "runtime/reference_executor.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int kTrials = 6;
const fs::path kData = "/usr/share/libonnx-testdata/data/node";

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    s_ = s_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return s_ >> 17;
  }
  int64_t pick_int() {
    static constexpr int64_t kValues[] = {-1,
                                          0,
                                          1,
                                          2,
                                          3,
                                          -2,
                                          7,
                                          1 << 20,
                                          int64_t{1} << 40,
                                          std::numeric_limits<int64_t>::max(),
                                          std::numeric_limits<int64_t>::min(),
                                          -1000};
    return kValues[next() % std::size(kValues)];
  }
  float pick_float() {
    static constexpr float kValues[] = {0.f,
                                        -1.f,
                                        1e30f,
                                        -1e30f,
                                        1e-30f,
                                        0.5f,
                                        std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::quiet_NaN()};
    return kValues[next() % std::size(kValues)];
  }

 private:
  uint64_t s_;
};

void mutate_attribute(onnx::AttributeProto& a, Rng& rng) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      a.set_i(rng.pick_int());
      break;
    case onnx::AttributeProto::FLOAT:
      a.set_f(rng.pick_float());
      break;
    case onnx::AttributeProto::INTS:
      if (a.ints_size() > 0 && rng.next() % 4 == 0) {
        a.mutable_ints()->RemoveLast();  // wrong length
      } else if (a.ints_size() > 0) {
        a.set_ints(static_cast<int>(rng.next() % static_cast<uint64_t>(a.ints_size())),
                   rng.pick_int());
      }
      break;
    case onnx::AttributeProto::STRING:
      a.set_s(rng.next() % 2 ? "" : "no_such_mode");
      break;
    default:
      break;
  }
}

// Integer initializers (shapes, axes, indices, pads) get hostile values too.
void mutate_int_tensor(onnx::TensorProto& t, Rng& rng) {
  if (t.data_type() != onnx::TensorProto::INT64 || t.int64_data_size() == 0) return;
  t.set_int64_data(static_cast<int>(rng.next() % static_cast<uint64_t>(t.int64_data_size())),
                   rng.pick_int());
}

// One line per node with its (mutated) attributes and int64 initializers, for KILN_FUZZ_VERBOSE:
// enough to rebuild a failing case as a unit test.
std::string describe_mutation(const onnx::GraphProto& g) {
  std::ostringstream os;
  auto ints = [&os](const auto& v) {
    os << '[';
    for (int i = 0; i < v.size() && i < 16; ++i) os << (i ? ", " : "") << v.Get(i);
    os << (v.size() > 16 ? ", ...]" : "]");
  };
  for (const auto& node : g.node()) {
    os << "  " << node.op_type() << ':';
    for (const auto& a : node.attribute()) {
      os << ' ' << a.name() << '=';
      if (a.type() == onnx::AttributeProto::INT) os << a.i();
      if (a.type() == onnx::AttributeProto::FLOAT) os << a.f();
      if (a.type() == onnx::AttributeProto::INTS) ints(a.ints());
      if (a.type() == onnx::AttributeProto::STRING) os << '"' << a.s() << '"';
    }
    os << '\n';
  }
  for (const auto& init : g.initializer()) {
    if (init.data_type() != onnx::TensorProto::INT64 || init.int64_data_size() == 0) continue;
    os << "  initializer " << init.name() << " = ";
    ints(init.int64_data());
    os << '\n';
  }
  return os.str();
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

runtime::NamedTensors load_inputs(const ir::Graph& g, const fs::path& dir) {
  runtime::NamedTensors feeds;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto t = frontend::load_tensor_proto_file(dir / "test_data_set_0" /
                                              ("input_" + std::to_string(i) + ".pb"));
    if (t.is_ok()) feeds[g.value(g.inputs[i]).name] = *t;
  }
  return feeds;
}

TEST(AttributeMutation, NeverCrashes) {
  if (!fs::is_directory(kData)) GTEST_SKIP() << "ONNX test data not installed (libonnx-testdata)";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(kData)) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  // KILN_FUZZ_SEED explores other mutations; KILN_FUZZ_VERBOSE names each case before it runs.
  const char* seed = std::getenv("KILN_FUZZ_SEED");
  const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  Rng rng(seed != nullptr ? std::strtoull(seed, nullptr, 10) : 2026);
  int imported = 0, ran = 0;
  for (const fs::path& dir : cases) {
    onnx::ModelProto base;
    if (!base.ParseFromString(read_bytes(dir / "model.onnx"))) continue;
    for (int trial = 0; trial < kTrials; ++trial) {
      onnx::ModelProto m = base;
      auto* graph = m.mutable_graph();
      for (auto& node : *graph->mutable_node()) {
        for (auto& a : *node.mutable_attribute()) {
          if (rng.next() % 2 == 0) mutate_attribute(a, rng);
        }
      }
      for (auto& init : *graph->mutable_initializer()) mutate_int_tensor(init, rng);
      SCOPED_TRACE(dir.filename().string() + " trial " + std::to_string(trial));
      if (verbose) {
        std::fprintf(stderr, "%s trial %d\n%s", dir.filename().c_str(), trial,
                     describe_mutation(*graph).c_str());
      }
      auto g = frontend::import_onnx_bytes(m.SerializeAsString(), dir.string());
      if (!g.is_ok()) continue;
      ++imported;
      // Mutated shapes easily ask for tens of GiB; the executor refuses tensors above its limit
      // with a Status (that refusal is under test too). The default limit, half of physical
      // memory, would let one case fill a shared CI machine, so this test sets 1 GiB.
      auto exec = runtime::ReferenceExecutor::create(*g, {.max_tensor_bytes = uint64_t{1} << 30});
      if (!exec.is_ok()) continue;
      runtime::NamedTensors feeds = load_inputs(*g, dir);
      for (auto& [name, t] : feeds) {
        if (t.dtype() == DType::kI64 && t.numel() > 0 && rng.next() % 3 == 0) {
          t = t.clone();
          const int64_t v = rng.pick_int();  // value before position: keeps seeds reproducible
          const uint64_t at = rng.next() % static_cast<uint64_t>(t.numel());
          t.data<int64_t>()[at] = v;
          if (verbose) {
            std::fprintf(stderr, "  input %s [%llu] = %lld\n", name.c_str(),
                         static_cast<unsigned long long>(at),
                         static_cast<long long>(t.data<int64_t>()[at]));
          }
        }
      }
      if (exec->run(feeds).is_ok()) ++ran;
    }
  }
  std::printf("mutated models: %d imported, %d ran to completion\n", imported, ran);
}

}  // namespace
}  // namespace kiln
