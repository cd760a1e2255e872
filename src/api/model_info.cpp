// `kazeia info`: a description of a GGUF file from its header alone.
#include "kazeia/model_info.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "format/gguf.h"

namespace kazeia {
namespace {

using ordered_json = nlohmann::ordered_json;

// llama.cpp's llama_ftype values (general.file_type).
const char* file_type_name(uint32_t ftype) {
  switch (ftype) {
    case 0: return "F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K";
    case 11: return "Q3_K_S";
    case 12: return "Q3_K_M";
    case 13: return "Q3_K_L";
    case 14: return "Q4_K_S";
    case 15: return "Q4_K_M";
    case 16: return "Q5_K_S";
    case 17: return "Q5_K_M";
    case 18: return "Q6_K";
    case 19: return "IQ2_XXS";
    case 20: return "IQ2_XS";
    case 21: return "Q2_K_S";
    case 22: return "IQ3_XS";
    case 23: return "IQ3_XXS";
    case 24: return "IQ1_S";
    case 25: return "IQ4_NL";
    case 26: return "IQ3_S";
    case 27: return "IQ3_M";
    case 28: return "IQ2_S";
    case 29: return "IQ2_M";
    case 30: return "IQ4_XS";
    case 31: return "IQ1_M";
    case 32: return "BF16";
    case 36: return "TQ1_0";
    case 37: return "TQ2_0";
    case 38: return "MXFP4_MOE";
    default: return "unknown";
  }
}

constexpr size_t kShortArray = 64;

ordered_json value_to_json(const gguf::Value& value, bool full) {
  using gguf::ValueType;
  if (const auto* s = value.as_string()) return *s;
  if (const auto* a = value.as_array()) {
    if (!full && a->items.size() > kShortArray) {
      return ordered_json{{"array", std::string(gguf::value_type_name(a->element_type))},
                          {"length", a->items.size()}};
    }
    ordered_json out = ordered_json::array();
    for (const auto& item : a->items) out.push_back(value_to_json(item, full));
    return out;
  }
  switch (value.type()) {
    case ValueType::kBool: return std::get<bool>(value.v);
    case ValueType::kFloat32: return std::get<float>(value.v);
    case ValueType::kFloat64: return std::get<double>(value.v);
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: return *value.as_int();
    default: return *value.as_uint();
  }
}

std::string render_value(const gguf::Value& value) {
  if (const auto* s = value.as_string()) return *s;
  return value_to_json(value, false).dump();
}

std::optional<TokenizerSummary> summarize_tokenizer(const gguf::File& file) {
  const gguf::Value* model = file.find("tokenizer.ggml.model");
  if (model == nullptr || model->as_string() == nullptr) return std::nullopt;
  TokenizerSummary t;
  t.model = *model->as_string();
  if (const auto* pre = file.find("tokenizer.ggml.pre"); pre && pre->as_string()) t.pre = *pre->as_string();
  const gguf::Array* tokens = nullptr;
  if (const auto* v = file.find("tokenizer.ggml.tokens")) tokens = v->as_array();
  if (tokens) t.vocab_size = tokens->items.size();
  if (const auto* v = file.find("tokenizer.ggml.merges"); v && v->as_array()) t.merges = v->as_array()->items.size();
  if (const auto* v = file.find("tokenizer.ggml.add_bos_token"); v && v->type() == gguf::ValueType::kBool)
    t.add_bos = std::get<bool>(v->v);
  static const char* kRoles[] = {"bos", "eos", "eot", "eom", "unknown", "padding", "separator", "mask"};
  for (const char* role : kRoles) {
    const gguf::Value* v = file.find(std::string("tokenizer.ggml.") + role + "_token_id");
    if (v == nullptr) continue;
    auto id = v->as_int();
    if (!id) continue;
    TokenizerSummary::Special s{role, *id, ""};
    if (tokens && *id >= 0 && static_cast<uint64_t>(*id) < tokens->items.size()) {
      if (const auto* text = tokens->items[static_cast<size_t>(*id)].as_string()) s.text = *text;
    }
    t.specials.push_back(std::move(s));
  }
  return t;
}

}  // namespace

Result<ModelInfo> inspect_model(const std::string& path, const InspectOptions& options) {
  KZ_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(path));
  ModelInfo info;
  info.path = path;
  info.file_size = file.file_size();
  info.gguf_version = file.version();
  info.alignment = file.alignment();
  if (const auto* v = file.find("general.architecture"); v && v->as_string()) info.architecture = *v->as_string();
  if (const auto* v = file.find("general.name"); v && v->as_string()) info.name = *v->as_string();
  if (const auto* v = file.find("general.file_type")) {
    if (auto ft = v->as_uint()) {
      info.file_type = static_cast<uint32_t>(*ft);
      info.file_type_name = file_type_name(static_cast<uint32_t>(*ft));
    }
  }

  std::map<std::string, uint64_t> per_type;
  for (const auto& t : file.tensors()) {
    info.parameters += t.n_elements;
    per_type[std::string(tensor_type_name(t.type))] += t.n_bytes;
    info.tensors.push_back({t.name, std::string(tensor_type_name(t.type)), t.dims, t.n_bytes});
  }
  info.bytes_per_type.assign(per_type.begin(), per_type.end());

  ordered_json metadata = ordered_json::object();
  const std::string arch_prefix = info.architecture + ".";
  for (const auto& kv : file.metadata()) {
    metadata[kv.key] = value_to_json(kv.value, options.full_metadata);
    if (!info.architecture.empty() && kv.key.rfind(arch_prefix, 0) == 0)
      info.hyperparameters.emplace_back(kv.key.substr(arch_prefix.size()), render_value(kv.value));
  }
  info.metadata_json = metadata.dump();
  info.tokenizer = summarize_tokenizer(file);
  if (const auto* v = file.find("tokenizer.chat_template"); v && v->as_string()) {
    info.has_chat_template = true;
    info.chat_template_bytes = v->as_string()->size();
  }
  return info;
}

std::string format_model_info_json(const ModelInfo& info) {
  ordered_json j;
  j["path"] = info.path;
  j["file_size"] = info.file_size;
  j["gguf_version"] = info.gguf_version;
  j["alignment"] = info.alignment;
  j["architecture"] = info.architecture;
  j["name"] = info.name;
  j["tensor_count"] = info.tensors.size();
  j["parameters"] = info.parameters;
  if (info.file_type) {
    j["file_type"] = *info.file_type;
    j["file_type_name"] = info.file_type_name;
  } else {
    j["file_type"] = nullptr;
  }
  ordered_json bytes = ordered_json::object();
  for (const auto& [type, n] : info.bytes_per_type) bytes[type] = n;
  j["bytes_per_type"] = bytes;
  ordered_json hp = ordered_json::object();
  for (const auto& [k, v] : info.hyperparameters) hp[k] = v;
  j["hyperparameters"] = hp;
  if (info.tokenizer) {
    const auto& t = *info.tokenizer;
    ordered_json tj{{"model", t.model}, {"pre", t.pre}, {"vocab_size", t.vocab_size}, {"merges", t.merges}};
    tj["add_bos"] = t.add_bos ? ordered_json(*t.add_bos) : ordered_json(nullptr);
    ordered_json specials = ordered_json::object();
    for (const auto& s : t.specials) specials[s.role] = {{"id", s.id}, {"text", s.text}};
    tj["special"] = specials;
    j["tokenizer"] = tj;
  } else {
    j["tokenizer"] = nullptr;
  }
  j["chat_template"] = info.has_chat_template;
  ordered_json tensors = ordered_json::array();
  for (const auto& t : info.tensors)
    tensors.push_back({{"name", t.name}, {"type", t.type}, {"shape", t.shape}, {"bytes", t.bytes}});
  j["tensors"] = tensors;
  j["metadata"] = ordered_json::parse(info.metadata_json);
  return j.dump(2) + "\n";
}

std::string format_model_info_table(const ModelInfo& info) {
  std::string out;
  char line[512];
  auto row = [&](const char* key, const std::string& value) {
    std::snprintf(line, sizeof line, "%-22s %s\n", key, value.c_str());
    out += line;
  };
  auto mib = [](uint64_t bytes) {
    char b[64];
    std::snprintf(b, sizeof b, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return std::string(b);
  };
  row("file", info.path);
  row("size", std::to_string(info.file_size) + " B (" + mib(info.file_size) + ")");
  row("gguf", "v" + std::to_string(info.gguf_version) + ", alignment " + std::to_string(info.alignment));
  row("architecture", info.architecture.empty() ? "(none)" : info.architecture);
  row("name", info.name.empty() ? "(none)" : info.name);
  char params[64];
  std::snprintf(params, sizeof params, "%" PRIu64 " (%.3f M)", info.parameters, info.parameters / 1e6);
  row("parameters", params);
  row("file type", info.file_type ? info.file_type_name + " (" + std::to_string(*info.file_type) + ")"
                                  : std::string("(not given)"));
  row("tensors", std::to_string(info.tensors.size()));
  for (const auto& [type, n] : info.bytes_per_type) {
    size_t count = 0;
    for (const auto& t : info.tensors) count += (t.type == type);
    row(("  " + type).c_str(), std::to_string(count) + " tensors, " + mib(n));
  }
  out += "\nhyper-parameters\n";
  for (const auto& [k, v] : info.hyperparameters) row(("  " + k).c_str(), v);
  out += "\ntokenizer\n";
  if (info.tokenizer) {
    const auto& t = *info.tokenizer;
    row("  model", t.model + (t.pre.empty() ? "" : " (pre: " + t.pre + ")"));
    row("  vocab", std::to_string(t.vocab_size) + " tokens, " + std::to_string(t.merges) + " merges");
    if (t.add_bos) row("  add_bos", *t.add_bos ? "true" : "false");
    for (const auto& s : t.specials)
      row(("  " + s.role).c_str(), std::to_string(s.id) + (s.text.empty() ? "" : "  " + s.text));
  } else {
    out += "  (none)\n";
  }
  row("chat template", info.has_chat_template ? "present (" + std::to_string(info.chat_template_bytes) + " bytes)"
                                              : std::string("absent"));
  return out;
}

}  // namespace kazeia
