#include "agent/tools/builtin_tools.h"

namespace kazeia::agent {

Status register_builtin_tools(ToolRegistry& registry, const BuiltinTools& tools) {
  if (tools.calculator) KZ_RETURN_IF_ERROR(registry.register_tool(make_calculator_tool()));
  if (tools.clock) KZ_RETURN_IF_ERROR(registry.register_tool(make_clock_tool()));
  if (tools.timers) KZ_RETURN_IF_ERROR(registry.register_tool(make_timer_tool(tools.timers)));
  if (tools.memory) {
    KZ_RETURN_IF_ERROR(registry.register_tool(make_memory_store_tool(tools.memory)));
    KZ_RETURN_IF_ERROR(registry.register_tool(make_memory_recall_tool(tools.memory)));
    KZ_RETURN_IF_ERROR(registry.register_tool(make_memory_forget_tool(tools.memory)));
  }
  if (tools.search_cache) KZ_RETURN_IF_ERROR(registry.register_tool(make_web_search_tool(tools.search_cache)));
  return OkStatus();
}

}  // namespace kazeia::agent
