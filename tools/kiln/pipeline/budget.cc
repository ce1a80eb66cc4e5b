#include "pipeline/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "options.h"

namespace kiln::cli::pipeline {

Result<double> parse_budget_ms(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double to_ms;  // negative: a rate, ms = -to_ms / value
  };
  // Longest suffixes first so that "ms" is not read as "s".
  static constexpr Unit kUnits[] = {{"fps", -1000.0}, {"ms", 1.0}, {"us", 1e-3}, {"s", 1000.0}};
  std::string_view number = text;
  double to_ms = 1.0;
  for (const Unit& u : kUnits) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      number = text.substr(0, text.size() - u.suffix.size());
      to_ms = u.to_ms;
      break;
    }
  }
  Result<double> v = parse_real("--budget", number);
  if (!v.is_ok() || !(*v > 0)) {
    return invalid_argument(
        "--budget needs a positive time or rate such as 33ms, 33.3 (ms), 500us, 0.033s or 30fps; "
        "got '{}'",
        text);
  }
  return to_ms < 0 ? -to_ms / *v : *v * to_ms;
}

BudgetLevel budget_level(std::string level, double end_to_end_ms, std::vector<StageTime> stages,
                         double budget_ms) {
  BudgetLevel l{std::move(level), end_to_end_ms, end_to_end_ms <= budget_ms, 0, {}};
  if (l.meets) return l;
  l.excess_ms = end_to_end_ms - budget_ms;
  std::stable_sort(stages.begin(), stages.end(),
                   [](const StageTime& a, const StageTime& b) { return a.ms > b.ms; });
  double left = l.excess_ms;
  for (const StageTime& s : stages) {
    if (left <= 0 || s.ms <= 0) break;
    const double take = std::min(left, s.ms);
    l.shrinks.push_back({s.stage, take, 100.0 * take / s.ms});
    left -= take;
  }
  return l;
}

std::string describe(const BudgetLevel& l, double budget_ms) {
  if (l.meets) {
    return fmt::format("{} end-to-end {:.3f} ms meets the {:.3g} ms budget ({:.3f} ms to spare)",
                       l.level, l.end_to_end_ms, budget_ms, budget_ms - l.end_to_end_ms);
  }
  std::string parts;
  for (size_t i = 0; i < l.shrinks.size(); ++i) {
    const Shrink& s = l.shrinks[i];
    parts += fmt::format("{}{} must shrink by {:.3f} ms ({:.3g}%)", i ? ", then " : "", s.stage,
                         s.ms, s.percent);
  }
  return fmt::format("{} end-to-end {:.3f} ms misses the {:.3g} ms budget by {:.3f} ms: {}",
                     l.level, l.end_to_end_ms, budget_ms, l.excess_ms, parts);
}

}  // namespace kiln::cli::pipeline
