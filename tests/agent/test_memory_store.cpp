// Memory store: CRUD and upsert, scoping, summaries, ranking (BM25 +
// recency), context prompts, schema versions, hostile FTS queries, and the
// memory tools.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "agent/memory_store.h"
#include "agent/tools/memory_tools.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

using testing::raw_query;

constexpr int64_t kDayMs = 86400 * 1000LL;
constexpr int64_t kT0 = 1700000000000;  // an arbitrary fixed "now" (ms)

// A store whose clock the test controls.
struct Fixture {
  testing::TempDir dir;
  std::shared_ptr<int64_t> now = std::make_shared<int64_t>(kT0);
  std::unique_ptr<MemoryStore> store;

  explicit Fixture(MemoryStoreOptions options = {}) {
    options.now_ms = [now = now] { return *now; };
    auto opened = MemoryStore::open(dir.file("memory.db"), options);
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    if (opened.ok()) store = std::move(*opened);
  }
  std::string path() const { return dir.file("memory.db"); }
};

std::vector<std::string> keys_of(const std::vector<RecalledMemory>& found) {
  std::vector<std::string> keys;
  for (const auto& r : found) keys.push_back(r.memory.key);
  return keys;
}


TEST(MemoryStore, StoreGetUpsertForget) {
  Fixture f;
  ASSERT_TRUE(f.store);
  Result<Memory> a = f.store->store("user.dog_name", "The user's dog is called Biscuit.", json{{"source", "chat"}});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_GT(a->id, 0);
  EXPECT_EQ(a->created_at_ms, kT0);
  EXPECT_EQ(a->updated_at_ms, kT0);
  EXPECT_EQ(a->metadata["source"], "chat");
  EXPECT_FALSE(a->conversation_id.has_value());

  *f.now = kT0 + 5000;
  Result<Memory> b = f.store->store("user.dog_name", "The user's dog is called Pretzel now.", json::object(), "conv-7");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->id, a->id) << "upsert keeps the row";
  EXPECT_EQ(b->created_at_ms, kT0);
  EXPECT_EQ(b->updated_at_ms, kT0 + 5000);
  EXPECT_EQ(b->conversation_id, "conv-7");
  EXPECT_EQ(*f.store->count(), 1);

  Result<Memory> got = f.store->get("user.dog_name");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->value, "The user's dog is called Pretzel now.");
  EXPECT_EQ(f.store->get(a->id)->key, "user.dog_name");
  // The FTS index follows the upsert: the old text is gone, the new one found.
  EXPECT_TRUE(f.store->recall("Biscuit", 5)->empty());
  EXPECT_EQ(keys_of(*f.store->recall("Pretzel", 5)), std::vector<std::string>{"user.dog_name"});

  EXPECT_TRUE(f.store->forget("user.dog_name").ok());
  EXPECT_EQ(f.store->forget("user.dog_name").code(), ErrorCode::kNotFound);
  EXPECT_EQ(f.store->get("user.dog_name").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(f.store->recall("Pretzel", 5)->empty()) << "delete trigger must clean the index";

  Result<Memory> c = f.store->store("x", "forget me by id");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(f.store->forget(c->id).ok());
  EXPECT_EQ(f.store->forget(c->id).code(), ErrorCode::kNotFound);
  EXPECT_EQ(*f.store->count(), 0);
}

TEST(MemoryStore, InputValidation) {
  Fixture f;
  EXPECT_EQ(f.store->store("", "v").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.store->store("   ", "v").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.store->store("k", "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.store->store(std::string(300, 'k'), "v").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.store->store("k", std::string(20000, 'v')).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.store->store("k", "v", json::array()).status().code(), ErrorCode::kInvalidArgument);
  // Invalid UTF-8 is repaired, not stored raw.
  Result<Memory> m = f.store->store("bytes", "ok \xff\xfe end");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->value, "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
}

TEST(MemoryStore, PersistsAcrossReopenInWalMode) {
  testing::TempDir dir;
  const std::string path = dir.file("m.db");
  {
    auto store = MemoryStore::open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->store("city", "The user lives in Rotterdam.").ok());
    ASSERT_TRUE((*store)->set_summary("conv-1", "Talked about moving house.").ok());
  }
  EXPECT_EQ(raw_query(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_query(path, "PRAGMA user_version"), "2");  // memories + timers (agent_database.h)
  auto store = MemoryStore::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->get("city")->value, "The user lives in Rotterdam.");
  EXPECT_EQ(*(*store)->summary("conv-1"), "Talked about moving house.");
  EXPECT_EQ((*store)->summary("conv-2").status().code(), ErrorCode::kNotFound);
}

TEST(MemoryStore, SchemaVersionGuards) {
  testing::TempDir dir;
  {  // A newer schema than we know: refuse.
    const std::string path = dir.file("newer.db");
    ASSERT_TRUE(MemoryStore::open(path).ok());
    EXPECT_EQ(raw_query(path, "PRAGMA user_version = 3"), "");
    auto store = MemoryStore::open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kUnsupported);
    EXPECT_NE(store.status().message().find("schema version 3"), std::string::npos) << store.status().message();
  }
  {  // Someone else's database: do not touch it.
    const std::string path = dir.file("foreign.db");
    EXPECT_EQ(raw_query(path, "CREATE TABLE accounts(id INTEGER)"), "");
    auto store = MemoryStore::open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kInvalidFile);
  }
  {  // Not a database at all.
    const std::string path = dir.file("text.db");
    testing::write_file(path, std::string(4096, 'z'));
    auto store = MemoryStore::open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kInvalidFile) << store.status().message();
  }
  {  // A directory: cannot open.
    auto store = MemoryStore::open(dir.path());
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kIo) << store.status().message();
  }
}

TEST(MemoryStore, Version1DatabaseIsMigratedKeepingItsMemories) {
  testing::TempDir dir;
  const std::string path = dir.file("v1.db");
  {
    auto store = MemoryStore::open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->store("pet", "The user's cat is called Miso.").ok());
  }
  // Turn it back into what a version-1 build wrote: no timers table.
  EXPECT_EQ(raw_query(path, "DROP TABLE timers"), "");
  EXPECT_EQ(raw_query(path, "PRAGMA user_version = 1"), "");
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'timers'"), "0");

  auto store = MemoryStore::open(path);
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  EXPECT_EQ(raw_query(path, "PRAGMA user_version"), "2");
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'timers'"), "1");
  EXPECT_EQ((*store)->get("pet")->value, "The user's cat is called Miso.");
  auto found = (*store)->recall("cat", 3);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].memory.key, "pet");
}

TEST(MemoryStore, ConversationScopeAndSummaries) {
  Fixture f;
  ASSERT_TRUE(f.store->store("global", "Global fact about penguins.").ok());
  ASSERT_TRUE(f.store->store("in_a", "Conversation A fact about penguins.", json::object(), "A").ok());
  ASSERT_TRUE(f.store->store("in_b", "Conversation B fact about penguins.", json::object(), "B").ok());
  RecallOptions only_a;
  only_a.conversation_id = "A";
  std::vector<std::string> a = keys_of(*f.store->recall("penguins", 10, only_a));
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, (std::vector<std::string>{"global", "in_a"}));
  EXPECT_EQ(f.store->recall("penguins", 10)->size(), 3u);
  EXPECT_TRUE(f.store->set_summary("A", "first").ok());
  EXPECT_TRUE(f.store->set_summary("A", "second").ok());
  EXPECT_EQ(*f.store->summary("A"), "second");
  EXPECT_FALSE(f.store->set_summary("", "x").ok());
}

// Hand-labelled ordering: which memory should come first, and why.
TEST(MemoryStore, RecencyBreaksTiesBetweenEquallyRelevantMemories) {
  Fixture f;
  // Same text, keys of the same length: BM25 cannot tell them apart.
  *f.now = kT0 - 200 * kDayMs;
  ASSERT_TRUE(f.store->store("note_a", "Parking spot is level 3, row F.").ok());
  *f.now = kT0 - 30 * kDayMs;
  ASSERT_TRUE(f.store->store("note_b", "Parking spot is level 3, row F.").ok());
  *f.now = kT0 - 1 * kDayMs;
  ASSERT_TRUE(f.store->store("note_c", "Parking spot is level 3, row F.").ok());
  *f.now = kT0;
  std::vector<RecalledMemory> found = *f.store->recall("where did I park? parking spot", 3);
  EXPECT_EQ(keys_of(found), (std::vector<std::string>{"note_c", "note_b", "note_a"}));
  // The documented formula, checked on each result.
  for (const RecalledMemory& r : found) {
    const double age_days = static_cast<double>(kT0 - r.memory.updated_at_ms) / kDayMs;
    const double expected = r.relevance * (0.7 + 0.3 * std::exp2(-age_days / 30.0));
    EXPECT_NEAR(r.score, expected, 1e-9 * std::fabs(expected));
    EXPECT_GT(r.relevance, 0.0);
  }
}

TEST(MemoryStore, ClearlyBetterMatchBeatsFresherWeakerOne) {
  Fixture f;
  // Background memories so that IDF is meaningful.
  const char* filler[] = {"The user likes hiking in the mountains.", "The user's favourite colour is green.",
                          "The user has two brothers.",               "The user studied physics.",
                          "The user is learning to bake bread.",      "The user drives an electric car."};
  int i = 0;
  for (const char* text : filler) ASSERT_TRUE(f.store->store("filler" + std::to_string(i++), text).ok());
  *f.now = kT0 - 365 * kDayMs;
  ASSERT_TRUE(f.store->store("passport", "The user's passport number is X1234567.").ok());
  *f.now = kT0;
  ASSERT_TRUE(f.store->store("travel_talk", "The user mentioned a number of travel plans.").ok());
  std::vector<std::string> keys = keys_of(*f.store->recall("passport number", 2));
  EXPECT_EQ(keys, (std::vector<std::string>{"passport", "travel_talk"}));
  // With pure recency weighting the fresher one would win; with none, BM25 alone.
  MemoryStoreOptions only_recency;
  only_recency.recency_weight = 1.0;
  only_recency.recency_half_life_days = 1.0;
  only_recency.now_ms = [] { return kT0; };
  auto store = MemoryStore::open(f.path(), only_recency);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(keys_of(*(*store)->recall("passport number", 2)), (std::vector<std::string>{"travel_talk", "passport"}));
}

TEST(MemoryStore, StemmingAndCaseFolding) {
  Fixture f;
  ASSERT_TRUE(f.store->store("dogs", "The user walks the DOGS every morning.").ok());
  ASSERT_TRUE(f.store->store("cafe", "Favourite café is Bösendorfer Kaffee.").ok());
  EXPECT_EQ(keys_of(*f.store->recall("dog walking", 5)), std::vector<std::string>{"dogs"});
  EXPECT_EQ(keys_of(*f.store->recall("cafe bosendorfer", 5)), std::vector<std::string>{"cafe"});
}

TEST(MemoryStore, MatchExpressionSanitisation) {
  EXPECT_EQ(fts5_match_expression("dog AND cat"), "\"dog\" OR \"cat\"");
  EXPECT_EQ(fts5_match_expression("NEAR(dog cat)"), "\"near\" OR \"dog\" OR \"cat\"");
  EXPECT_EQ(fts5_match_expression("\"dog\" OR \"1\"=\"1\""), "\"dog\" OR \"1\"");
  EXPECT_EQ(fts5_match_expression("key:dog* ^cat -bird +fish"), "\"key\" OR \"dog\" OR \"cat\" OR \"bird\" OR \"fish\"");
  EXPECT_EQ(fts5_match_expression("what is the"), "\"what\" OR \"is\" OR \"the\"") << "only stop words: keep them";
  EXPECT_EQ(fts5_match_expression("((( ))) \" ' * :"), "");
  EXPECT_EQ(fts5_match_expression("日本語 über"), "\"日本語\" OR \"über\"");
  std::string many;
  for (int i = 0; i < 100; ++i) many.append("w").append(std::to_string(i)).append(" ");
  std::string expression = fts5_match_expression(many);
  EXPECT_EQ(std::count(expression.begin(), expression.end(), '"'), 2 * 32) << "term count is capped";
}

TEST(MemoryStore, HostileQueriesNeverBreakRecall) {
  Fixture f;
  ASSERT_TRUE(f.store->store("pet", "The user's dog is a beagle.").ok());
  ASSERT_TRUE(f.store->store("other", "The user likes \"quoted\" words AND operators (sometimes).").ok());
  const std::string hostile[] = {
      "\"",
      "\"\"",
      "\"unbalanced dog",
      "dog\"",
      "AND",
      "OR OR OR dog",
      "NOT dog",
      "dog NOT",
      "NEAR(dog beagle)",
      "NEAR(dog beagle, 2",
      "dog NEAR/2 beagle",
      "*",
      "dog*",
      "* dog",
      "(((dog",
      "dog)))",
      "col:value dog",
      "pet:dog",
      "{key value}: dog",
      "^dog",
      "-dog",
      "+dog",
      "'; DROP TABLE memories; -- dog",
      "dog\" OR \"1\"=\"1",
      std::string("nul\0byte dog", 12),
      "\xff\xfe\xfd dog",
      "\xE2\x80\x9C" "dog" "\xE2\x80\x9D",  // curly quotes
      "🐶 dog",
      std::string(100000, 'x') + " dog",
      "",
      "   ",
  };
  for (const std::string& query : hostile) {
    Result<std::vector<RecalledMemory>> found = f.store->recall(query, 5);
    ASSERT_TRUE(found.ok()) << "query " << ::testing::PrintToString(query.substr(0, 40)) << ": "
                            << found.status().message();
    if (query.find("dog") != std::string::npos) {
      std::vector<std::string> keys = keys_of(*found);
      EXPECT_NE(std::find(keys.begin(), keys.end(), "pet"), keys.end()) << query.substr(0, 40);
    }
  }
  EXPECT_EQ(*f.store->count(), 2) << "nothing was dropped";
  EXPECT_EQ(raw_query(f.path(), "PRAGMA integrity_check"), "ok");
  // Hostile text as stored data is just text too.
  ASSERT_TRUE(f.store->store("weird \"key\" AND (x)", "NEAR(a b) * ^ \" '").ok());
  EXPECT_EQ(f.store->get("weird \"key\" AND (x)")->value, "NEAR(a b) * ^ \" '");
}

TEST(MemoryStore, ContextPromptFitsTheBudget) {
  Fixture f;
  ASSERT_TRUE(f.store->store("tea", "The user drinks jasmine tea every morning.").ok());
  ASSERT_TRUE(f.store->store("tea_shop", "The user's favourite tea shop is on Witte de Withstraat.").ok());
  ASSERT_TRUE(f.store->store("kettle", "The user's tea kettle is broken and needs replacing soon, probably with a "
                                       "variable-temperature model for green tea.").ok());
  ASSERT_TRUE(f.store->set_summary("conv", "Discussing morning routines.").ok());

  Result<std::string> full = f.store->context_prompt("jasmine tea", 10000);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->starts_with("Relevant memories (most relevant first):\n- [tea] The user drinks jasmine tea"))
      << *full;
  EXPECT_NE(full->find("[tea_shop]"), std::string::npos);
  EXPECT_NE(full->find("[kettle]"), std::string::npos);

  for (size_t budget = 0; budget <= 120; ++budget) {
    Result<std::string> block = f.store->context_prompt("jasmine tea", budget);
    ASSERT_TRUE(block.ok());
    EXPECT_LE((block->size() + 3) / 4, budget) << "budget " << budget;
  }
  EXPECT_EQ(*f.store->context_prompt("jasmine tea", 0), "");
  EXPECT_EQ(*f.store->context_prompt("jasmine tea", 5), "") << "header alone is never emitted";
  // A budget that fits the best memory but not the long kettle one still
  // takes the shorter, less relevant tea_shop line.
  Result<std::string> mid = f.store->context_prompt("jasmine tea", 50);
  ASSERT_TRUE(mid.ok());
  EXPECT_NE(mid->find("[tea]"), std::string::npos) << *mid;
  EXPECT_EQ(mid->find("[kettle]"), std::string::npos) << *mid;

  ContextOptions with_summary;
  with_summary.conversation_id = "conv";
  with_summary.count_tokens = [](std::string_view text) {  // words, as a stand-in tokenizer
    size_t words = 0;
    bool in_word = false;
    for (char c : text) {
      const bool space = c == ' ' || c == '\n';
      if (!space && !in_word) ++words;
      in_word = !space;
    }
    return words;
  };
  Result<std::string> summarised = f.store->context_prompt("jasmine tea", 20, with_summary);
  ASSERT_TRUE(summarised.ok());
  EXPECT_TRUE(summarised->starts_with("Conversation summary: Discussing morning routines.\n")) << *summarised;
  EXPECT_LE(with_summary.count_tokens(*summarised), 20u);
  EXPECT_EQ(*f.store->context_prompt("nothing matches zebra", 1000), "");
}

TEST(MemoryStore, ConcurrentWritersAndReaders) {
  Fixture f;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::string key = std::to_string(t).append("_").append(std::to_string(i));
        EXPECT_TRUE(f.store->store(key, "thread " + std::to_string(t) + " item " + std::to_string(i)).ok());
        EXPECT_TRUE(f.store->recall("thread item", 3).ok());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(*f.store->count(), 100);
}

TEST(MemoryTools, StoreRecallForgetThroughTheRegistry) {
  Fixture f;
  std::shared_ptr<MemoryStore> store = std::move(f.store);
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_memory_store_tool(store)).ok());
  ASSERT_TRUE(registry.register_tool(make_memory_recall_tool(store)).ok());
  ASSERT_TRUE(registry.register_tool(make_memory_forget_tool(store)).ok());

  DispatchOptions conv;
  conv.conversation_id = "conv-42";
  ToolResult stored = registry.dispatch(
      {"c1", "memory_store", json{{"key", "user.dog"}, {"value", "The user's dog is named Biscuit."}}}, conv);
  ASSERT_TRUE(stored.ok) << stored.content;
  EXPECT_EQ(json::parse(stored.content)["stored"], "user.dog");
  EXPECT_EQ(store->get("user.dog")->conversation_id, "conv-42");

  // Without a key, the same value maps to the same derived key: no duplicates.
  ToolResult auto1 = registry.dispatch({"c2", "memory_store", json{{"value", "The user likes Radiohead."}}});
  ToolResult auto2 = registry.dispatch({"c3", "memory_store", json{{"value", "The user likes Radiohead."}}});
  ASSERT_TRUE(auto1.ok && auto2.ok);
  const std::string derived = json::parse(auto1.content)["stored"];
  EXPECT_TRUE(derived.starts_with("mem-")) << derived;
  EXPECT_EQ(json::parse(auto2.content)["stored"], derived);
  EXPECT_EQ(*store->count(), 2);

  ToolResult recalled = registry.dispatch({"c4", "memory_recall", json{{"query", "what is my dog called"}}});
  ASSERT_TRUE(recalled.ok);
  json memories = json::parse(recalled.content)["memories"];
  ASSERT_FALSE(memories.empty());
  EXPECT_EQ(memories[0]["key"], "user.dog");
  EXPECT_EQ(memories[0]["updated"], "2023-11-14");  // kT0 in UTC

  ToolResult none = registry.dispatch({"c5", "memory_recall", json{{"query", "zebra"}}});
  EXPECT_EQ(json::parse(none.content)["message"], "no matching memories");

  EXPECT_TRUE(registry.dispatch({"c6", "memory_forget", json{{"key", "user.dog"}}}).ok);
  ToolResult again = registry.dispatch({"c7", "memory_forget", json{{"key", "user.dog"}}});
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.content, "error: no memory with key 'user.dog'");
  EXPECT_EQ(again.attempts, 1) << "NotFound is not retried";
}

}  // namespace
}  // namespace kazeia::agent
