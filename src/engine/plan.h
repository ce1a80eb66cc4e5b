#pragma once
// The engine's content, in memory: what the builder produces, the serializer writes, the loader
// reads back and the runtime executes. Immutable once built.
//
// An engine is an optimized graph whose nodes are layers, each with the tactic chosen to run it,
// plus one or more optimization profiles (ranges of input shapes), each with its memory plan.
// Values fall in four classes:
//   - constants (weights), stored in the engine file and used in place;
//   - graph inputs and outputs, in buffers the caller binds (or the context owns);
//   - shape values: small integer tensors computed from shapes alone (the Shape -> Gather ->
//     Concat chains of a dynamic model), evaluated when input shapes change, not per inference;
//   - activations, which live in the arena at offsets the memory plan gives.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/tensor.h"
#include "ir/graph.h"
#include "tactics/tactic.h"

namespace kiln::engine {

enum class LayerKind : uint8_t {
  kRun,    // runs on every inference
  kShape,  // evaluated when input shapes change (its inputs are constants or shape values)
};

// Layer::precision of an FP16 layer (--fp16): weights rounded to binary16 and stored so in the
// engine file, activations and arithmetic float32.
inline constexpr std::string_view kFp16Precision = "fp16";

struct Layer {
  LayerKind kind = LayerKind::kRun;
  std::string tactic;  // stable tactic name; empty for shape layers
  // "fp32", "int8" (kiln.QConv / kiln.QGemm) or "fp16" (kFp16Precision); a QuantizeLinear that
  // feeds INT8 layers is "fp32->uint8". The note says why, for layers that could have run in
  // INT8 or FP16.
  std::string precision = "fp32";
  std::string precision_note;
  // Every tactic the builder considered for this layer, with its time or why it lost out.
  std::vector<tactics::TacticTiming> candidates;
  // The tactic's prepacked weights (Tactic::prepack); empty when it has none.
  Tensor packed;
  // `packed` was made by the engine as it loaded (an FP16 layer, whose file stores its weights as
  // binary16 and no packed copy: Engine::create); engine files leave it out.
  bool packed_at_load = false;
};

// The shapes one input may take under a profile. Static inputs have min == opt == max.
struct InputRange {
  std::string input;
  Dims min, opt, max;
};

// How the arena is laid out for one profile, planned at the profile's max shapes.
struct MemoryLayout {
  std::vector<int64_t> offsets;  // per value; -1 when the value does not live in the arena
  std::vector<int64_t> bytes;    // per value; bytes reserved at the offset (max shapes)
  int64_t arena_bytes = 0;
  int64_t no_reuse_bytes = 0;   // what the activations would need without sharing
  int64_t peak_live_bytes = 0;  // the lower bound: the largest set of simultaneously live values
  std::string strategy;         // the planner heuristic that won
};

struct Profile {
  std::vector<InputRange> inputs;  // one per graph input, in graph input order
  MemoryLayout memory;
};

struct Plan {
  ir::Graph graph;            // optimized; graph.nodes[i] is layer i
  std::vector<Layer> layers;  // parallel to graph.nodes
  std::vector<Profile> profiles;
  uint64_t required_features = 0;      // CpuFeatureSet of the chosen tactics
  std::vector<std::string> build_log;  // pass log and decisions, for inspect and --verbose
  // Per value (or empty): the binary16 bits of an FP16 layer's weights, as the engine file holds
  // them. Kept for the values whose float32 copy a loaded engine drops once every reader packed
  // it (Engine::create), so that saving the engine writes them as it read them.
  std::vector<Tensor> fp16_bits;
};

enum class ValueClass : uint8_t { kUnused, kConstant, kInput, kOutput, kShape, kArena };

// The class of every value, derived from the graph and the layer kinds.
std::vector<ValueClass> classify_values(const Plan& plan);

// The weights (input 1) of FP16 layers: float32 constants holding binary16 values (not a graph
// input's default), which an engine file stores as binary16 (lossless) and the loader widens.
std::vector<bool> fp16_stored_values(const Plan& plan);

// Constants that every layer reading them packed into its own weights (a run layer with packed
// weights whose tactic lists the input in Tactic::packed_inputs), neither graph inputs nor
// outputs: the kernels read only their dims, so an engine file stores only those.
// `with_load_packing`: count the weights packed when the engine loaded (Layer::packed_at_load)
// too, which files do not store.
std::vector<bool> packed_only_values(const Plan& plan, bool with_load_packing = false);

// True when `dims` has the range's rank and lies within [min, max] in every dim.
bool range_contains(const InputRange& range, std::span<const int64_t> dims);
// True when the profile's ranges contain `input_dims` (one entry per graph input).
bool profile_contains(const Profile& profile, const std::vector<Dims>& input_dims);
// Index of the first profile that contains `input_dims`, or -1.
int find_profile(const Plan& plan, const std::vector<Dims>& input_dims);

}  // namespace kiln::engine
