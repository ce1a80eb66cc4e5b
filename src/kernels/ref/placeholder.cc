#include "base/tensor.h"
