// Offline web search: normalised matching, hit and miss, malformed caches.
#include <gtest/gtest.h>

#include "agent/tools/web_search.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

const char* kCache = R"({"query": "weather in Paris", "results": [{"title": "Paris forecast", "url": "https://example.org/paris", "snippet": "Sunny, 24 °C"}, {"title": "Météo Paris", "url": "https://example.org/meteo"}, {"title": "Third", "url": "https://example.org/3", "snippet": "x"}]}

{"query": "C++20 coroutines tutorial", "results": [{"title": "Coroutines", "url": "https://example.org/co", "snippet": "co_await explained"}]}
{"query": "Crème brûlée recipe", "results": [{"title": "Brûlée", "url": "https://example.org/cb", "snippet": "custard"}]}
)";

TEST(WebSearchCache, Normalisation) {
  EXPECT_EQ(WebSearchCache::normalize_query("  What's the WEATHER, in Paris?? "), "what s the weather in paris");
  EXPECT_EQ(WebSearchCache::word_set_key("paris in weather paris"), "in paris weather");
  EXPECT_EQ(WebSearchCache::normalize_query("Crème  Brûlée"), "crème brûlée");
}

TEST(WebSearchCache, LookupVariants) {
  Result<WebSearchCache> cache = WebSearchCache::parse(kCache, "cache.jsonl");
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  EXPECT_EQ(cache->size(), 3u);
  ASSERT_NE(cache->find("weather in Paris"), nullptr);
  EXPECT_NE(cache->find("WEATHER   in paris?"), nullptr);
  EXPECT_NE(cache->find("paris weather in"), nullptr) << "word-set match";
  EXPECT_NE(cache->find("c++20 coroutines tutorial"), nullptr);
  EXPECT_NE(cache->find("crème brûlée RECIPE"), nullptr);
  EXPECT_EQ(cache->find("weather in London"), nullptr);
  EXPECT_EQ(cache->find("weather"), nullptr) << "no partial matching";
  EXPECT_EQ(cache->find(""), nullptr);
}

TEST(WebSearchCache, MalformedLinesAreReportedWithTheirNumber) {
  EXPECT_EQ(WebSearchCache::parse("{\"query\": \"a\", \"results\": []}\n{oops\n", "c.jsonl").status().message(),
            "c.jsonl line 2: not valid JSON");
  EXPECT_EQ(WebSearchCache::parse(R"({"results": []})", "c.jsonl").status().message(),
            "c.jsonl line 1: expected an object with a string \"query\"");
  EXPECT_EQ(WebSearchCache::parse(R"({"query": "a", "results": [{"title": 1, "url": "u"}]})", "c.jsonl")
                .status()
                .message(),
            "c.jsonl line 1: each result needs string \"title\" and \"url\"");
  EXPECT_EQ(WebSearchCache::load("/nonexistent/cache.jsonl").status().code(), ErrorCode::kNotFound);
}

TEST(WebSearchTool, HitMissAndLimit) {
  testing::TempDir dir;
  testing::write_file(dir.file("cache.jsonl"), kCache);
  Result<WebSearchCache> cache = WebSearchCache::load(dir.file("cache.jsonl"));
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_web_search_tool(std::make_shared<WebSearchCache>(std::move(*cache)))).ok());

  ToolResult hit = registry.dispatch({"c1", "web_search", json{{"query", "Weather in Paris"}, {"max_results", 2}}});
  ASSERT_TRUE(hit.ok) << hit.content;
  json body = json::parse(hit.content);
  EXPECT_TRUE(body["found"].get<bool>());
  ASSERT_EQ(body["results"].size(), 2u);
  EXPECT_EQ(body["results"][0]["title"], "Paris forecast");
  EXPECT_EQ(body["results"][1]["snippet"], "") << "missing snippet becomes empty";

  ToolResult all = registry.dispatch({"c2", "web_search", json{{"query", "weather in paris"}}});
  EXPECT_EQ(json::parse(all.content)["results"].size(), 3u);

  ToolResult miss = registry.dispatch({"c3", "web_search", json{{"query", "stock price of ACME"}}});
  ASSERT_TRUE(miss.ok);
  json missed = json::parse(miss.content);
  EXPECT_FALSE(missed["found"].get<bool>());
  EXPECT_TRUE(missed["results"].empty());
  EXPECT_TRUE(missed["message"].get<std::string>().starts_with("not in cache")) << miss.content;

  ToolResult bad = registry.dispatch({"c4", "web_search", json{{"query", "x"}, {"max_results", 50}}});
  EXPECT_EQ(bad.content, "error: argument 'max_results': expected integer >= 1 and <= 10, got 50");
}

}  // namespace
}  // namespace kazeia::agent
