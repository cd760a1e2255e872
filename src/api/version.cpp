#include "kazeia/version.h"
namespace kazeia {
const char* version_string() { return "0.1.0"; }
}
