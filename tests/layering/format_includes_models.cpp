// Must NOT compile with the format layer's include path: models sits above format.
#include "format/gguf.h"
#include "models/model.h"
