#pragma once
// A QDQ model's Q/DQ nodes become a table of its scales (quant/qdq_extract.h), after constant
// folding has made their scales constants and before BN folding changes the weights.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& qdq_extraction_pass();

}  // namespace kiln::passes
