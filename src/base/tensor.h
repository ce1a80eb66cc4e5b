#pragma once
// Moved to the public API; kept so internal code can keep including "base/tensor.h".
#include "kiln/tensor.h"
