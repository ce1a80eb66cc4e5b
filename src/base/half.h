#pragma once
// Moved to the public API; kept so internal code can keep including "base/half.h".
#include "kiln/half.h"
