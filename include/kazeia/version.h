#pragma once
namespace kazeia {
const char* version_string();
}
