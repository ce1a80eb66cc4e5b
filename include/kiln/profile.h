#pragma once
// Optimization profiles: the ranges of input shapes an engine is built for.

#include <map>
#include <string>

#include "kiln/tensor.h"

namespace kiln {

// The shapes one input may take: min <= opt <= max in every dim.
struct ShapeRange {
  Dims min, opt, max;
};

// Ranges for the inputs with dynamic dims, by input name (TensorRT's IOptimizationProfile).
using OptimizationProfile = std::map<std::string, ShapeRange, std::less<>>;

}  // namespace kiln
