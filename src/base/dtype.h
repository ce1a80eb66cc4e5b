#pragma once
// Moved to the public API; kept so internal code can keep including "base/dtype.h".
#include "kiln/dtype.h"
