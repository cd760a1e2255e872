// Registers the built-in tools whose services are available.
#pragma once

#include <memory>

#include "agent/memory_store.h"
#include "agent/tool_registry.h"
#include "agent/tools/calculator.h"
#include "agent/tools/clock_tool.h"
#include "agent/tools/memory_tools.h"
#include "agent/tools/timer_tool.h"
#include "agent/tools/web_search.h"

namespace kazeia::agent {

struct BuiltinTools {
  bool calculator = true;
  bool clock = true;
  std::shared_ptr<TimerService> timers;              // null: no `timer` tool
  std::shared_ptr<MemoryStore> memory;               // null: no memory tools
  std::shared_ptr<const WebSearchCache> search_cache;  // null: no `web_search` tool
};

// Registers calculator, clock, and each tool whose service is given.
Status register_builtin_tools(ToolRegistry& registry, const BuiltinTools& tools);

}  // namespace kazeia::agent
