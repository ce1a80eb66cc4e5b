#pragma once
// The "meta" and "weights" sections of an engine file (see serialize.h).

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "base/status.h"
#include "engine/plan.h"

namespace kiln::engine {

struct PlanSections {
  nlohmann::json meta;
  std::string weights;
};

Result<PlanSections> plan_to_sections(const Plan& plan);

// Rebuilds a plan. Weights borrow from `weights`, which `owner` keeps alive. Trusts nothing: every
// id, offset, size, dtype and name is checked, and errors name the field.
Result<Plan> plan_from_sections(std::string_view meta, std::span<const std::byte> weights,
                                std::shared_ptr<const void> owner);

}  // namespace kiln::engine
