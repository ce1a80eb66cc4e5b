#include <algorithm>

#include "tactics/builtin.h"
#include "tactics/onednn/onednn_tactics.h"
#include "tactics/ref_generic.h"
#include "tactics/tactic.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics {

std::span<const Tactic* const> all_tactics() {
  // Specific tactics first (per op in preference order: kiln's x86 SIMD ones, the portable builtin
  // ones, then oneDNN's), the generic fallback last.
  static const std::vector<const Tactic*> tactics = [] {
    std::span<const Tactic* const> simd = x86::x86_tactics();
    std::vector<const Tactic*> v(simd.begin(), simd.end());
    std::span<const Tactic* const> builtin = builtin::builtin_tactics();
    v.insert(v.end(), builtin.begin(), builtin.end());
    std::span<const Tactic* const> onednn = onednn::onednn_tactics();
    v.insert(v.end(), onednn.begin(), onednn.end());
    v.push_back(&ref_generic_tactic());
    return v;
  }();
  return tactics;
}

std::vector<const Tactic*> tactics_for(std::string_view domain, std::string_view op_type) {
  std::vector<const Tactic*> out;
  for (const Tactic* t : all_tactics()) {
    if ((t->domain() == domain && t->op_type() == op_type) || t->op_type() == "*") {
      out.push_back(t);
    }
  }
  return out;
}

const Tactic* find_tactic(std::string_view name) {
  auto all = all_tactics();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const Tactic* t) { return t->name() == name; });
  return it == all.end() ? nullptr : *it;
}

}  // namespace kiln::tactics
