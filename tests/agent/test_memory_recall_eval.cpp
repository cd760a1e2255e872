// Recall@3 of the memory store on a hand-written, hand-labelled set: 34
// memories of a fictional user and 20 queries phrased the way a user or a
// model would ask, each labelled with the one memory that answers it. Some
// queries share few words with their answer on purpose ("mom" vs "mother"),
// so the figure measures lexical search honestly instead of flattering it.
#include <gtest/gtest.h>

#include <cstdio>

#include "agent/memory_store.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

struct Fact {
  const char* key;
  const char* value;
};

const Fact kFacts[] = {
    {"pet.dog", "The user has a golden retriever named Biscuit who is 4 years old."},
    {"pet.cat", "The user's cat, Miso, is allergic to chicken-based food."},
    {"family.sister", "The user's sister Clara lives in Lyon and works as an architect."},
    {"family.mother_birthday", "The user's mother has her birthday on 12 May."},
    {"health.allergy", "The user is allergic to peanuts and carries an EpiPen."},
    {"diet.vegetarian", "The user has been vegetarian since 2019 but eats eggs and cheese."},
    {"work.employer", "The user works as a data engineer at a logistics company called Freightline."},
    {"work.manager", "The user's manager at work is named Priya Raman."},
    {"work.schedule", "The user works remotely on Mondays and Fridays and goes to the office mid-week."},
    {"home.city", "The user lives in Rotterdam, in the Netherlands."},
    {"home.apartment", "The user's apartment is on the fifth floor and the building has no elevator."},
    {"travel.japan", "The user is planning a trip to Japan in April to see the cherry blossoms."},
    {"travel.passport", "The user's passport expires in March 2026 and needs renewal before the Japan trip."},
    {"hobby.running", "The user is training for the Rotterdam marathon and runs four times a week."},
    {"hobby.guitar", "The user plays classical guitar and is learning a piece by Tarrega."},
    {"hobby.reading", "The user likes science fiction novels, especially books by Ursula K. Le Guin."},
    {"pref.coffee", "The user drinks oat milk flat whites and avoids coffee after 3 pm."},
    {"pref.music", "The user's favourite band is Radiohead."},
    {"pref.units", "The user prefers metric units and the 24-hour clock."},
    {"pref.language", "The user is a native Dutch speaker and is learning Japanese."},
    {"tech.laptop", "The user's laptop is a ThinkPad X1 Carbon running Fedora Linux."},
    {"tech.phone", "The user has an Android phone, a Pixel 8."},
    {"tech.editor", "The user writes code in Neovim and prefers Python and Rust."},
    {"finance.budget", "The user's monthly grocery budget is 400 euros."},
    {"finance.bank", "The user banks with ING and pays rent on the first of the month."},
    {"transport.commute", "The user does not own a car and commutes by bicycle and train."},
    {"health.doctor", "The user's general practitioner is Dr. Jansen; appointments are booked by phone."},
    {"health.sleep", "The user tries to sleep by 11 pm and wakes at 6:30 for running."},
    {"event.wedding", "The user is attending a friend's wedding in Porto on 14 June."},
    {"gift.sister", "Gift idea for the user's sister: a book on Scandinavian architecture."},
    {"home.plant", "The user has a monstera plant that needs watering once a week."},
    {"goal.savings", "The user is saving for a down payment on a house."},
    {"project.weather_station", "The user is building a home weather station with a Raspberry Pi."},
    {"pref.cuisine", "The user's favourite cuisine is Ethiopian food, especially injera with lentil stew."},
};

struct Query {
  const char* text;
  const char* expected_key;
};

const Query kQueries[] = {
    {"What is my dog's name?", "pet.dog"},
    {"Is my cat allergic to anything?", "pet.cat"},
    {"where does my sister live", "family.sister"},
    {"When is mom's birthday?", "family.mother_birthday"},
    {"What am I allergic to?", "health.allergy"},
    {"Does the user eat meat?", "diet.vegetarian"},
    {"user employer company", "work.employer"},
    {"name of my manager", "work.manager"},
    {"which days do I work from home", "work.schedule"},
    {"What city do I live in?", "home.city"},
    {"passport expiry date", "travel.passport"},
    {"trip to Japan", "travel.japan"},
    {"marathon training plan", "hobby.running"},
    {"what instrument do I play", "hobby.guitar"},
    {"how do I take my coffee", "pref.coffee"},
    {"what laptop do I use", "tech.laptop"},
    {"monthly grocery budget", "finance.budget"},
    {"how do I get around without a car", "transport.commute"},
    {"present for my sister", "gift.sister"},
    {"What programming languages do I like?", "tech.editor"},
};

TEST(MemoryRecallEval, RecallAt3OnLabelledSet) {
  static_assert(std::size(kFacts) >= 30);
  static_assert(std::size(kQueries) >= 15);
  testing::TempDir dir;
  MemoryStoreOptions options;
  options.durability = Durability::kNormal;  // bulk load; durability is tested elsewhere
  options.now_ms = [] { return int64_t{1700000000000}; };  // same age for all: recency is neutral
  auto opened = MemoryStore::open(dir.file("eval.db"), options);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  MemoryStore& store = **opened;
  for (const Fact& fact : kFacts) ASSERT_TRUE(store.store(fact.key, fact.value).ok()) << fact.key;

  int hits_at_1 = 0, hits_at_3 = 0;
  std::string misses;
  for (const Query& q : kQueries) {
    Result<std::vector<RecalledMemory>> found = store.recall(q.text, 3);
    ASSERT_TRUE(found.ok()) << found.status().message();
    bool hit = false;
    for (size_t i = 0; i < found->size(); ++i) {
      if ((*found)[i].memory.key == q.expected_key) {
        hit = true;
        if (i == 0) ++hits_at_1;
      }
    }
    if (hit) {
      ++hits_at_3;
    } else {
      misses += std::string("  miss: \"") + q.text + "\" (want " + q.expected_key + ", got";
      for (const auto& r : *found) misses += " " + r.memory.key;
      misses += ")\n";
    }
  }
  const double n = static_cast<double>(std::size(kQueries));
  std::printf("memory recall on %zu memories, %zu queries: recall@1 = %.2f, recall@3 = %.2f (%d/%zu)\n%s",
              std::size(kFacts), std::size(kQueries), hits_at_1 / n, hits_at_3 / n, hits_at_3, std::size(kQueries),
              misses.c_str());
  // A floor, not a target: lexical BM25 cannot bridge pure synonyms, and the
  // set contains a few such queries on purpose.
  EXPECT_GE(hits_at_3 / n, 0.80);
}

}  // namespace
}  // namespace kazeia::agent
