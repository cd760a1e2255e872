// Must NOT compile with the kernels layer's include path: runtime sits above kernels.
#include "kernels/kernels.h"
#include "runtime/sampler.h"
