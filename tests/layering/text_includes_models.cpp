// Must NOT compile with the text layer's include path: text does not see models.
#include "text/tokenizer.h"
#include "models/model.h"
