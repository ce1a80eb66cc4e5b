#pragma once
// After quantize_layers: INT8 layers hand uint8 tensors to each other directly. An INT8 layer whose
// float output is read only by the QuantizeLinear of that output and as the residual (Z) of other
// INT8 layers writes the uint8 tensor itself (output_type 2, the QuantizeLinear's scale and zero
// point), the QuantizeLinear goes, and the residual readers take the uint8 tensor with the same
// encoding (z_scale, z_zero_point). An INT8 layer whose float output only other INT8 layers read
// as their residual, and that has a range, writes it as uint8 too (the downsampling block of a
// ResNet: the main branch's last convolution is the residual of the shortcut's convolution, which
// a QDQ model quantizes and ONNX Runtime adds with QLinearAdd): a quarter of the bytes written and
// read back. A float output anyone else reads (a pooling, an Add, a graph output) stays float.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "quant/tensor_ranges.h"

namespace kiln::quant {

// The (scale, zero point) of a per-tensor uint8 QuantizeLinear with constant parameters; nullopt
// for any other node.
std::optional<std::pair<float, int64_t>> uint8_quantize_params(const ir::Graph& g,
                                                               const ir::Node& n);

// The readers of a float tensor `y` that a uint8 tensor can serve: its one uint8 QuantizeLinear,
// and INT8 layers reading it as their residual (Z). nullopt when anyone else reads it (or it is a
// graph output), or nothing quantizes it.
struct Uint8Readers {
  int quantize = -1;             // the QuantizeLinear node
  std::vector<int> residual_of;  // INT8 layers reading the value as Z
};
std::optional<Uint8Readers> uint8_readers(const ir::Graph& g, const ir::GraphIndex& index,
                                          ir::ValueId y);

// The residual readers take `yq` (uint8, the given encoding) as their Z instead.
void read_residual_as_uint8(ir::Graph& g, const std::vector<int>& readers, ir::ValueId yq,
                            float scale, int64_t zero);

// Returns the number of layers that now write uint8; one log line per fusion. `ranges` gives the
// encodings of residual-only outputs.
int fuse_requantize(ir::Graph& graph, const RangeTable& ranges, std::vector<std::string>& log);

}  // namespace kiln::quant
