// Durability: a writer process commits memories in a loop and reports each
// committed key through a pipe; it is SIGKILLed mid-stream. Reopening the
// database must find every reported memory, intact, with a consistent index.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>

#include "agent/memory_store.h"
#include "agent_test_util.h"

namespace kazeia::agent {
namespace {

std::string value_for(const std::string& key, int i) {
  // Varying sizes, so commits straddle WAL page boundaries differently.
  return "payload for " + key + " number " + std::to_string(i) + " " + std::string(100 + (i % 13) * 300, 'x');
}

// The child: commit forever, report after each commit. Never returns.
[[noreturn]] void run_writer(const std::string& path, const std::string& prefix, Durability durability, int fd) {
  MemoryStoreOptions options;
  options.durability = durability;
  auto store = MemoryStore::open(path, options);
  if (!store.ok()) _exit(2);
  for (int i = 0;; ++i) {
    const std::string key = prefix + std::to_string(i);
    if (!(*store)->store(key, value_for(key, i), json{{"i", i}}).ok()) _exit(3);
    // Only now, after store() returned (the commit is done), is the key reported.
    const std::string line = key + "\n";
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  }
}

struct Round {
  std::string prefix;
  Durability durability;
  int kill_after;  // committed keys seen before the kill
};

TEST(MemoryDurability, CommittedMemoriesSurviveSigkillOfTheWriter) {
  testing::TempDir dir;
  const std::string path = dir.file("durable.db");
  const Round rounds[] = {{"full-a-", Durability::kFull, 40},
                          {"normal-", Durability::kNormal, 150},
                          {"full-b-", Durability::kFull, 7}};
  std::set<std::string> all_reported;
  for (const Round& round : rounds) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      run_writer(path, round.prefix, round.durability, fds[1]);
    }
    close(fds[1]);

    std::set<std::string> reported;
    std::string buffer;
    bool killed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 1000) == 0) {
        if (std::chrono::steady_clock::now() > deadline) break;
        continue;
      }
      char chunk[4096];
      const ssize_t n = read(fds[0], chunk, sizeof chunk);
      if (n <= 0) break;  // EOF: the writer is dead and everything it wrote is read
      buffer.append(chunk, static_cast<size_t>(n));
      for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
        reported.insert(buffer.substr(0, nl));
      }
      if (!killed && static_cast<int>(reported.size()) >= round.kill_after) {
        ASSERT_EQ(kill(pid, SIGKILL), 0);  // mid-stream: it is inside its next store() by now
        killed = true;
      }
    }
    close(fds[0]);
    if (!killed) kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(killed) << "writer reported only " << reported.size() << " keys (exit status " << status << ")";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "writer status " << status;
    EXPECT_GE(static_cast<int>(reported.size()), round.kill_after);
    all_reported.insert(reported.begin(), reported.end());

    // Reopen (this runs WAL recovery) and look for every reported memory.
    auto store = MemoryStore::open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    int missing = 0;
    for (const std::string& key : all_reported) {
      Result<Memory> m = (*store)->get(key);
      if (!m.ok()) {
        ++missing;
        ADD_FAILURE() << "committed memory lost: " << key;
        continue;
      }
      const int i = m->metadata["i"].get<int>();
      EXPECT_EQ(m->value, value_for(key, i)) << key;
    }
    EXPECT_EQ(missing, 0);
    EXPECT_GE(*(*store)->count(), static_cast<int64_t>(all_reported.size()));
    // The full-text index is consistent with the table: a reported key is
    // found by its number, and FTS5's own check passes.
    const std::string probe = round.prefix + "3";
    Result<std::vector<RecalledMemory>> found = (*store)->recall(probe, 50);
    ASSERT_TRUE(found.ok());
    bool probe_found = false;
    for (const auto& r : *found) probe_found = probe_found || r.memory.key == probe;
    EXPECT_TRUE(probe_found) << probe;
    std::printf("round %s: killed after %zu reported commits, all present\n", round.prefix.c_str(), reported.size());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, "INSERT INTO memories_fts(memories_fts) VALUES('integrity-check')", nullptr, nullptr, &error),
            SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "ok");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace
}  // namespace kazeia::agent
