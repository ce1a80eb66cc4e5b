#pragma once
// The layers bench/kernels times: the shapes that carry the time in the model set (ResNet-50's
// convolutions, MobileNetV2's depthwise convolutions, a transformer encoder's matrix products),
// each as a one-node graph with its real dims and deterministic weights; in float32 and as the
// INT8 layers (kiln.QConv, kiln.QGemm) the quantization passes make of them.

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace kiln::bench {

struct BenchLayer {
  std::string name;                  // "resnet50.conv3x3_64_56"
  double flops = 0;                  // per run (a multiply-add counts 2)
  bool int8 = false;                 // an INT8 layer: GOP/s against the VNNI peak
  int repeats = 1;                   // how often the shape occurs in its network
  std::unique_ptr<ir::Graph> graph;  // one node; shapes inferred
};

// Every layer of the suite, or an error if a graph fails to build (a bug: it names the layer).
Result<std::vector<BenchLayer>> bench_layers();

}  // namespace kiln::bench
