#pragma once
// The "meta" and "weights" sections of an engine file (see serialize.h).

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/plan.h"

namespace kiln::engine {

// The weights section as views of the plan's tensors and of zero padding, in file order: the
// writer writes them from where they are instead of gathering them into one buffer (ResNet-50's
// 232 MB: saved in 885 ms when gathered, 533 ms so). `tensors` keeps every viewed tensor alive, the
// FP16 copies made for the file among them.
struct WeightBytes {
  std::vector<std::string_view> pieces;
  std::vector<Tensor> tensors;
};

struct PlanSections {
  nlohmann::json meta;
  WeightBytes weights;
};

Result<PlanSections> plan_to_sections(const Plan& plan);

// Rebuilds a plan. Weights borrow from `weights`, which `owner` keeps alive. Trusts nothing: every
// id, offset, size, dtype and name is checked, and errors name the field.
Result<Plan> plan_from_sections(std::string_view meta, std::span<const std::byte> weights,
                                std::shared_ptr<const void> owner);

}  // namespace kiln::engine
