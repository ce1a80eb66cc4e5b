#pragma once
// Moved to the public API; kept so internal code can keep including "base/status.h".
#include "kiln/status.h"
