#include "agent/tools/web_search.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/text_util.h"

namespace kazeia::agent {

std::string WebSearchCache::normalize_query(std::string_view query) {
  const std::string clean = utf8_sanitize(query);
  std::string out;
  out.reserve(clean.size());
  bool pending_space = false;
  for (char ch : clean) {
    auto c = static_cast<unsigned char>(ch);
    // ASCII letters and digits are words; other ASCII separates words;
    // non-ASCII bytes (accented letters, CJK) are kept as word characters.
    const bool word = std::isalnum(c) || c >= 0x80;
    if (!word) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : ch;
  }
  return out;
}

std::string WebSearchCache::word_set_key(std::string_view query) {
  std::istringstream words(normalize_query(query));
  std::set<std::string> unique;
  for (std::string word; words >> word;) unique.insert(word);
  std::string out;
  for (const std::string& word : unique) out += (out.empty() ? "" : " ") + word;
  return out;
}

Result<WebSearchCache> WebSearchCache::parse(std::string_view jsonl, const std::string& source) {
  WebSearchCache cache;
  size_t line_number = 0;
  size_t start = 0;
  while (start < jsonl.size()) {
    size_t end = jsonl.find('\n', start);
    if (end == std::string_view::npos) end = jsonl.size();
    std::string_view line = trim(jsonl.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    auto where = [&] { return source + " line " + std::to_string(line_number) + ": "; };
    json entry = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (entry.is_discarded()) return InvalidFile(where() + "not valid JSON");
    if (!entry.is_object() || !entry.contains("query") || !entry["query"].is_string()) {
      return InvalidFile(where() + "expected an object with a string \"query\"");
    }
    if (!entry.contains("results") || !entry["results"].is_array()) {
      return InvalidFile(where() + "expected a \"results\" array");
    }
    json results = json::array();
    for (const json& r : entry["results"]) {
      if (!r.is_object() || !r.contains("title") || !r["title"].is_string() || !r.contains("url") ||
          !r["url"].is_string()) {
        return InvalidFile(where() + "each result needs string \"title\" and \"url\"");
      }
      std::string snippet = r.contains("snippet") && r["snippet"].is_string() ? r["snippet"].get<std::string>() : "";
      results.push_back(json{{"title", r["title"]}, {"url", r["url"]}, {"snippet", snippet}});
    }
    const std::string query = entry["query"].get<std::string>();
    const std::string key = normalize_query(query);
    if (key.empty()) return InvalidFile(where() + "query has no words");
    // A later line for the same query replaces the earlier one.
    const size_t index = cache.entries_.size();
    cache.entries_.push_back(std::move(results));
    cache.by_query_[key] = index;
    cache.by_word_set_[word_set_key(query)] = index;
  }
  return cache;
}

Result<WebSearchCache> WebSearchCache::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open search cache " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

const json* WebSearchCache::find(std::string_view query) const {
  if (auto it = by_query_.find(normalize_query(query)); it != by_query_.end()) return &entries_[it->second];
  if (auto it = by_word_set_.find(word_set_key(query)); it != by_word_set_.end()) return &entries_[it->second];
  return nullptr;
}

Tool make_web_search_tool(std::shared_ptr<const WebSearchCache> cache) {
  Tool tool;
  tool.name = "web_search";
  tool.description =
      "Search the web (offline cache of prepared results). Returns titles, URLs and snippets; "
      "says so when the query is not in the cache.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "query": {"type": "string", "minLength": 1, "maxLength": 500},
      "max_results": {"type": "integer", "minimum": 1, "maximum": 10}
    },
    "required": ["query"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(2000);
  tool.handler = [cache](const json& args, const ToolContext&) -> Result<json> {
    const std::string query = args.at("query").get<std::string>();
    const size_t limit = args.value("max_results", 5);
    const json* results = cache ? cache->find(query) : nullptr;
    if (results == nullptr) {
      return json{{"query", query},
                  {"found", false},
                  {"results", json::array()},
                  {"message",
                   "not in cache: no offline results for this query (web access is disabled); answer "
                   "from what you know or tell the user you cannot look it up"}};
    }
    json shown = json::array();
    for (size_t i = 0; i < results->size() && i < limit; ++i) shown.push_back((*results)[i]);
    return json{{"query", query}, {"found", true}, {"results", shown}};
  };
  return tool;
}

}  // namespace kazeia::agent
