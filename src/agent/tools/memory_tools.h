// Tools over the memory store: `memory_store`, `memory_recall`, `memory_forget`.
//
// The conversation a memory belongs to comes from ToolContext (set by the
// agent loop through DispatchOptions), never from the model's arguments.
#pragma once

#include <memory>

#include "agent/memory_store.h"
#include "agent/tool_registry.h"

namespace kazeia::agent {

// {"value": string, "key"?: string, "metadata"?: object}. Without a key, one
// is derived from the value ("mem-" + 16 hex digits of a hash), so storing
// the same fact twice does not duplicate it.
Tool make_memory_store_tool(std::shared_ptr<MemoryStore> store);

// {"query": string, "k"?: 1..20 (default 5)} -> the best memories, with key,
// value, last update date (UTC) and score.
Tool make_memory_recall_tool(std::shared_ptr<MemoryStore> store);

// {"key": string}
Tool make_memory_forget_tool(std::shared_ptr<MemoryStore> store);

}  // namespace kazeia::agent
