// Must compile with the format layer's include path (the positive control).
#include "format/gguf.h"
#include "base/mapped_file.h"
