#include "kazeia/model_info.h"
namespace kazeia {
Result<ModelInfo> inspect_model(const std::string& path, const InspectOptions&) { return Unsupported("not yet"); }
std::string format_model_info_table(const ModelInfo&) { return ""; }
std::string format_model_info_json(const ModelInfo&) { return ""; }
}
