#include "agent/tools/memory_tools.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace kazeia::agent {
namespace {

// FNV-1a, 64 bit: a stable, dependency-free content hash for derived keys.
uint64_t fnv1a(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string derived_key(std::string_view value) {
  std::array<char, 24> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "mem-%016llx", static_cast<unsigned long long>(fnv1a(value)));
  return buffer.data();
}

std::string utc_date(int64_t unix_ms) {
  namespace chr = std::chrono;
  const chr::sys_days day = chr::floor<chr::days>(chr::sys_time<chr::milliseconds>(chr::milliseconds(unix_ms)));
  const chr::year_month_day ymd{day};
  std::array<char, 16> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buffer.data();
}

std::optional<std::string_view> conversation_of(const ToolContext& ctx) {
  if (ctx.conversation_id.empty()) return std::nullopt;
  return std::string_view(ctx.conversation_id);
}

}  // namespace

Tool make_memory_store_tool(std::shared_ptr<MemoryStore> store) {
  Tool tool;
  tool.name = "memory_store";
  tool.description =
      "Save a fact to long-term memory so it can be recalled in later conversations. Use a short "
      "descriptive key (e.g. \"user.dog_name\"); storing with an existing key replaces that memory.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "value": {"type": "string", "minLength": 1, "maxLength": 4000,
                "description": "The fact to remember, as a complete sentence"},
      "key": {"type": "string", "minLength": 1, "maxLength": 200},
      "metadata": {"type": "object"}
    },
    "required": ["value"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(5000);
  tool.max_retries = 2;  // "database is locked" (kIo) is transient; an upsert is idempotent
  tool.handler = [store](const json& args, const ToolContext& ctx) -> Result<json> {
    const std::string value = args.at("value").get<std::string>();
    const std::string key = args.contains("key") ? args.at("key").get<std::string>() : derived_key(value);
    const json metadata = args.value("metadata", json::object());
    KZ_ASSIGN_OR_RETURN(Memory memory, store->store(key, value, metadata, conversation_of(ctx)));
    return json{{"stored", memory.key}, {"id", memory.id}};
  };
  return tool;
}

Tool make_memory_recall_tool(std::shared_ptr<MemoryStore> store) {
  Tool tool;
  tool.name = "memory_recall";
  tool.description = "Search long-term memory for facts relevant to a query; returns the best matches first.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "query": {"type": "string", "minLength": 1, "maxLength": 500},
      "k": {"type": "integer", "minimum": 1, "maximum": 20}
    },
    "required": ["query"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(5000);
  tool.max_retries = 2;
  tool.handler = [store](const json& args, const ToolContext& ctx) -> Result<json> {
    RecallOptions options;
    if (auto conversation = conversation_of(ctx)) options.conversation_id = std::string(*conversation);
    const size_t k = args.value("k", 5);
    KZ_ASSIGN_OR_RETURN(std::vector<RecalledMemory> found,
                        store->recall(args.at("query").get<std::string>(), k, options));
    json memories = json::array();
    for (const RecalledMemory& r : found) {
      memories.push_back(json{{"key", r.memory.key},
                              {"value", r.memory.value},
                              {"updated", utc_date(r.memory.updated_at_ms)},
                              {"score", std::round(r.score * 1000.0) / 1000.0}});
    }
    json out{{"memories", memories}};
    if (found.empty()) out["message"] = "no matching memories";
    return out;
  };
  return tool;
}

Tool make_memory_forget_tool(std::shared_ptr<MemoryStore> store) {
  Tool tool;
  tool.name = "memory_forget";
  tool.description = "Delete the memory with the given key from long-term memory.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {"key": {"type": "string", "minLength": 1, "maxLength": 200}},
    "required": ["key"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(5000);
  tool.handler = [store](const json& args, const ToolContext&) -> Result<json> {
    const std::string key = args.at("key").get<std::string>();
    KZ_RETURN_IF_ERROR(store->forget(key));
    return json{{"forgotten", key}};
  };
  return tool;
}

}  // namespace kazeia::agent
