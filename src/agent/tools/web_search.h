// The `web_search` tool, answered from an offline cache. Never the network.
//
// The cache is a JSONL file, one query per line:
//   {"query": "weather in paris", "results": [{"title": ..., "url": ..., "snippet": ...}]}
// Queries are matched after normalisation (ASCII case folded, punctuation
// dropped, whitespace collapsed: "Weather in Paris?" == "weather in  paris"),
// then, failing that, as a set of words ("paris weather in"). Anything else
// is a clear "not in cache" answer rather than an error, so the model knows
// to answer without search.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/tool_registry.h"
#include "kazeia/status.h"

namespace kazeia::agent {

class WebSearchCache {
 public:
  // Reads a JSONL file; a malformed line fails the load, naming the line.
  static Result<WebSearchCache> load(const std::string& path);
  // The same from text; `source` names it in messages.
  static Result<WebSearchCache> parse(std::string_view jsonl, const std::string& source);

  // The cached results array for `query`, or nullptr.
  const json* find(std::string_view query) const;
  size_t size() const { return entries_.size(); }

  // "  What's the WEATHER, in Paris?? " -> "what s the weather in paris"
  static std::string normalize_query(std::string_view query);
  // Sorted distinct words of the normalised query: "in paris the weather what s".
  static std::string word_set_key(std::string_view query);

 private:
  std::vector<json> entries_;  // results arrays
  std::unordered_map<std::string, size_t> by_query_;
  std::unordered_map<std::string, size_t> by_word_set_;
};

// Tool "web_search": {"query": string, "max_results"?: 1..10 (default 5)}.
Tool make_web_search_tool(std::shared_ptr<const WebSearchCache> cache);

}  // namespace kazeia::agent
