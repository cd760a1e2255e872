#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kazeia {
namespace {

// Runs body on a helper thread; if it has not finished within `limit`, a
// deadlock or lost wakeup is the likely cause: abort so ctest reports it
// instead of hanging until its global timeout.
template <class F>
void with_watchdog(std::chrono::seconds limit, F&& body) {
  std::promise<void> finished;
  std::future<void> fut = finished.get_future();
  std::thread t([&] {
    body();
    finished.set_value();
  });
  if (fut.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "watchdog: test body still running after %lld s (deadlock?)\n",
                 static_cast<long long>(limit.count()));
    std::abort();
  }
  t.join();
}

// Checks one parallel_for call: every index exactly once, chunk boundaries on
// the grain, chunk count bounded, no thread index used twice at once.
void check_coverage(ThreadPool& pool, int64_t begin, int64_t end, int64_t grain, int max_chunks) {
  const int64_t n = end > begin ? end - begin : 0;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::vector<std::atomic<int>> busy(static_cast<size_t>(pool.size()));
  std::atomic<int> chunks{0}, bad{0};
  pool.parallel_for(
      begin, end,
      [&](int64_t lo, int64_t hi, int t) {
        if (t < 0 || t >= pool.size() || busy[t].exchange(1) != 0) bad++;
        chunks++;
        if (lo >= hi || lo < begin || hi > end) bad++;
        if ((lo - begin) % std::max<int64_t>(grain, 1) != 0) bad++;
        if (hi != end && (hi - begin) % std::max<int64_t>(grain, 1) != 0) bad++;
        for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i - begin)]++;
        busy[t].store(0);
      },
      grain, max_chunks);
  SCOPED_TRACE(::testing::Message() << "pool " << pool.size() << " range [" << begin << ", " << end
                                  << ") grain " << grain << " max_chunks " << max_chunks);
  EXPECT_EQ(bad.load(), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (hits[static_cast<size_t>(i)] != 1) {
      ADD_FAILURE() << "index " << begin + i << " visited " << hits[static_cast<size_t>(i)] << " times";
      break;
    }
  }
  int limit = max_chunks > 0 ? max_chunks : pool.size();
  if (n == 0) {
    EXPECT_EQ(chunks.load(), 0);
  } else {
    EXPECT_GE(chunks.load(), 1);
    EXPECT_LE(chunks.load(), limit);
  }
}

TEST(ThreadPool, CoverageManySizes) {
  const int64_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 13, 31, 64, 97, 1000, 1009};
  const int64_t grains[] = {1, 3, 16, 1000};
  const int max_chunks[] = {0, 1, 2, 5, 64, 100000};
  for (int threads : {1, 2, 3, 4, 7}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    for (bool spin : {false, true}) {
      pool.set_spinning(spin);
      for (int64_t n : sizes)
        for (int64_t g : grains)
          for (int mc : max_chunks) check_coverage(pool, 0, n, g, mc);
    }
    check_coverage(pool, 0, 65537, 1, 0);  // large, prime
    check_coverage(pool, 0, 65537, 64, 1000);
    check_coverage(pool, -50, 53, 4, 0);   // negative begin, boundaries relative to it
    check_coverage(pool, 10, 3, 1, 0);     // reversed range: nothing
    check_coverage(pool, 5, 5, 1, 0);      // empty range
    check_coverage(pool, 0, 100, 0, 0);    // grain <= 0 means 1
    check_coverage(pool, 0, 100, -7, -3);  // max_chunks <= 0 means size()
  }
}

TEST(ThreadPool, SplitsIntoEvenContiguousChunks) {
  ThreadPool pool(4);
  std::mutex mu;
  std::map<int64_t, int64_t> chunks;  // begin -> end
  pool.parallel_for(0, 10, [&](int64_t lo, int64_t hi, int) {
    std::lock_guard<std::mutex> lock(mu);
    chunks[lo] = hi;
  });
  // 10 over 4 chunks: 3 3 2 2, in order and contiguous.
  EXPECT_EQ(chunks, (std::map<int64_t, int64_t>{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));

  chunks.clear();
  pool.parallel_for(0, 100, [&](int64_t lo, int64_t hi, int) {
    std::lock_guard<std::mutex> lock(mu);
    chunks[lo] = hi;
  }, /*grain=*/32, /*max_chunks=*/8);
  // 4 units of 32 (the last one short), one per chunk.
  EXPECT_EQ(chunks, (std::map<int64_t, int64_t>{{0, 32}, {32, 64}, {64, 96}, {96, 100}}));
}

TEST(ThreadPool, HugeRangeDoesNotOverflow) {
  ThreadPool pool(3);
  const int64_t lo_end = std::numeric_limits<int64_t>::min(), hi_end = std::numeric_limits<int64_t>::max();
  for (int64_t grain : {int64_t{1}, int64_t{1} << 62, hi_end}) {
    std::mutex mu;
    std::map<int64_t, int64_t> chunks;
    pool.parallel_for(lo_end, hi_end, [&](int64_t lo, int64_t hi, int) {
      std::lock_guard<std::mutex> lock(mu);
      chunks[lo] = hi;
    }, grain, 7);
    // Contiguous, in order, from one end to the other.
    int64_t at = lo_end;
    for (auto [lo, hi] : chunks) {
      EXPECT_EQ(lo, at) << "grain " << grain;
      EXPECT_LT(lo, hi);
      at = hi;
    }
    EXPECT_EQ(at, hi_end) << "grain " << grain;
  }
}

TEST(ThreadPool, RunOnAllVisitsEachPartOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int rep = 0; rep < 200; ++rep) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(threads));
      std::atomic<int> bad{0};
      pool.run_on_all([&](int part, int n_parts) {
        int expect_parts = threads == 1 ? 1 : threads;
        if (n_parts != expect_parts || part < 0 || part >= n_parts) {
          bad++;
          return;
        }
        seen[static_cast<size_t>(part)]++;
      });
      ASSERT_EQ(bad.load(), 0);
      for (int p = 0; p < threads; ++p) ASSERT_EQ(seen[static_cast<size_t>(p)].load(), 1) << p;
    }
  }
}

TEST(ThreadPool, PoolOfOneRunsInlineOnCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  int calls = 0;
  std::thread::id caller = std::this_thread::get_id();
  pool.parallel_for(0, 1000, [&](int64_t lo, int64_t hi, int t) {
    ++calls;  // plain int: no other thread may touch it
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 1000);
    EXPECT_EQ(t, 0);
  }, 1, 16);
  pool.run_on_all([&](int part, int n) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(part, 0);
    EXPECT_EQ(n, 1);
  });
  EXPECT_EQ(calls, 2);
}

TEST(ThreadPool, CallerIsThreadZeroAndIndicesAreStable) {
  ThreadPool pool(4);
  std::mutex mu;
  std::map<int, std::thread::id> owner;
  bool consistent = true;
  const std::thread::id caller = std::this_thread::get_id();
  for (int rep = 0; rep < 500; ++rep) {
    pool.parallel_for(0, 64, [&](int64_t, int64_t, int t) {
      std::lock_guard<std::mutex> lock(mu);
      auto [it, inserted] = owner.emplace(t, std::this_thread::get_id());
      if (!inserted && it->second != std::this_thread::get_id()) consistent = false;
    }, 1, 64);
  }
  EXPECT_TRUE(consistent);
  if (owner.count(0)) {
    EXPECT_EQ(owner[0], caller);
  }
}

// Chunks that block for a while leave the caller busy, so sleeping workers
// must wake up and take the others: more than one thread ends up working.
TEST(ThreadPool, WorkersActuallyParticipate) {
  ThreadPool pool(4);
  for (bool spin : {false, true}) {
    pool.set_spinning(spin);
    std::mutex mu;
    std::set<std::thread::id> ids;
    pool.parallel_for(0, 8, [&](int64_t, int64_t, int) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }, 1, 8);
    EXPECT_GE(ids.size(), 2u) << "spinning " << spin;
  }
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(4);
  const int outer = 37, inner = 29;
  std::vector<std::atomic<int>> grid(outer * inner);
  std::atomic<int> bad{0};
  pool.parallel_for(0, outer, [&](int64_t lo, int64_t hi, int t) {
    const std::thread::id me = std::this_thread::get_id();
    for (int64_t i = lo; i < hi; ++i) {
      pool.parallel_for(0, inner, [&](int64_t jlo, int64_t jhi, int t2) {
        if (t2 != t || std::this_thread::get_id() != me || jlo != 0 || jhi != inner) bad++;
        for (int64_t j = jlo; j < jhi; ++j) grid[static_cast<size_t>(i * inner + j)]++;
      });
      pool.run_on_all([&](int part, int n) {
        if (part != 0 || n != 1 || std::this_thread::get_id() != me) bad++;
      });
    }
  }, 1, outer);
  EXPECT_EQ(bad.load(), 0);
  for (auto& g : grid) ASSERT_EQ(g.load(), 1);

  // And from run_on_all.
  std::atomic<int> inner_calls{0};
  pool.run_on_all([&](int, int) {
    pool.parallel_for(0, 10, [&](int64_t lo, int64_t hi, int) { inner_calls += static_cast<int>(hi - lo); });
  });
  EXPECT_EQ(inner_calls.load(), 10 * pool.size());
}

TEST(ThreadPool, SerialReuseThousandsOfTimes) {
  with_watchdog(std::chrono::seconds(120), [] {
    ThreadPool pool(4);
    std::vector<int64_t> data(4096);
    for (int spin = 0; spin < 2; ++spin) {
      pool.set_spinning(spin == 1);
      for (int rep = 0; rep < 5000; ++rep) {
        const int64_t n = 1 + rep % 300;
        pool.parallel_for(0, n, [&](int64_t lo, int64_t hi, int) {
          for (int64_t i = lo; i < hi; ++i) data[static_cast<size_t>(i)] = rep + i;
        });
        int64_t sum = 0, expect = 0;
        for (int64_t i = 0; i < n; ++i) {
          sum += data[static_cast<size_t>(i)];
          expect += rep + i;
        }
        ASSERT_EQ(sum, expect) << "rep " << rep;
      }
    }
  });
}

// Sleep/wake races: jobs of random size separated by random pauses around the
// spin budget, toggling the spin hint, so workers are caught spinning,
// falling asleep and waking at every moment.
TEST(ThreadPool, StressNoLostWakeups) {
  with_watchdog(std::chrono::seconds(120), [] {
    ThreadPool pool(ThreadPoolOptions{.n_threads = 4, .spin_us = 5});
    std::mt19937 rng(1234);
    std::atomic<int64_t> total{0};
    int64_t expect = 0;
    for (int rep = 0; rep < 4000; ++rep) {
      if (rep % 97 == 0) pool.set_spinning(!pool.spinning());
      const int64_t n = static_cast<int64_t>(rng() % 64);
      if (rng() % 2) {
        pool.parallel_for(0, n, [&](int64_t lo, int64_t hi, int) { total += hi - lo; }, 1,
                          static_cast<int>(rng() % 9));
        expect += n;
      } else {
        pool.run_on_all([&](int, int) { total += 1; });
        expect += pool.size();
      }
      if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40));
    }
    EXPECT_EQ(total.load(), expect);
  });
}

TEST(ThreadPool, ConcurrentOutsideCallersAreSerialized) {
  with_watchdog(std::chrono::seconds(120), [] {
    ThreadPool pool(3);
    pool.set_spinning(true);
    std::atomic<int64_t> total{0};
    std::atomic<int> bad{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c) {
      callers.emplace_back([&] {
        for (int rep = 0; rep < 1000; ++rep) {
          std::vector<std::atomic<int>> busy(static_cast<size_t>(pool.size()));
          pool.parallel_for(0, 50, [&](int64_t lo, int64_t hi, int t) {
            if (busy[static_cast<size_t>(t)].exchange(1) != 0) bad++;
            total += hi - lo;
            busy[static_cast<size_t>(t)].store(0);
          });
        }
      });
    }
    for (auto& t : callers) t.join();
    EXPECT_EQ(total.load(), 4 * 1000 * 50);
    EXPECT_EQ(bad.load(), 0);
  });
}

TEST(ThreadPool, ExceptionReachesCallerAndPoolStaysUsable) {
  ThreadPool pool(4);
  for (int rep = 0; rep < 50; ++rep) {
    EXPECT_THROW(pool.parallel_for(0, 100, [&](int64_t lo, int64_t hi, int) {
      if (lo <= 57 && 57 < hi) throw std::runtime_error("chunk failed");
    }, 1, 16), std::runtime_error);
    EXPECT_THROW(pool.run_on_all([](int part, int) {
      if (part == 1) throw std::logic_error("part failed");
    }), std::logic_error);
  }
  std::atomic<int64_t> total{0};
  pool.parallel_for(0, 1000, [&](int64_t lo, int64_t hi, int) { total += hi - lo; });
  EXPECT_EQ(total.load(), 1000);

  ThreadPool one(1);  // inline path: the exception simply propagates
  EXPECT_THROW(one.parallel_for(0, 3, [](int64_t, int64_t, int) { throw 5; }), int);
}

TEST(ThreadPool, ParallelForStatusReturnsTheFirstErrorAfterEveryChunkRan) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)}) {
      std::vector<std::atomic<int>> seen(100);
      // Indices 30 and 70 fail; every other index is still visited once.
      Status s = parallel_for_status(p, 0, 100, [&](int64_t b, int64_t e, int) -> Status {
        for (int64_t i = b; i < e; ++i) {
          if (i == 30 || i == 70) return InvalidArgument("index " + std::to_string(i));
          seen[static_cast<size_t>(i)].fetch_add(1);
        }
        return OkStatus();
      }, 1, 100);
      ASSERT_FALSE(s.ok()) << threads;
      EXPECT_TRUE(s.message() == "index 30" || s.message() == "index 70") << s.to_string();
      for (int i = 0; i < 100; ++i) {
        // Without a pool (or with one thread) the one range stops at 30.
        const bool one_range = p == nullptr || threads == 1;
        const int want = (i == 30 || i == 70 || (one_range && i > 30)) ? 0 : 1;
        EXPECT_EQ(seen[static_cast<size_t>(i)].load(), want) << "threads " << threads << " index " << i;
      }
      EXPECT_TRUE(parallel_for_status(p, 0, 100, [](int64_t, int64_t, int) { return OkStatus(); }).ok());
      EXPECT_TRUE(parallel_for_status(p, 5, 5, [](int64_t, int64_t, int) { return InvalidArgument("empty"); }).ok());
    }
  }
}

TEST(ThreadPool, DestructionWhileIdle) {
  with_watchdog(std::chrono::seconds(60), [] {
    for (int rep = 0; rep < 100; ++rep) {
      const int threads = 1 + rep % 6;
      auto pool = std::make_unique<ThreadPool>(ThreadPoolOptions{.n_threads = threads, .spin_us = rep % 3 * 100});
      pool->set_spinning(rep % 2 == 0);
      if (rep % 4 < 2) {  // sometimes never used, sometimes destroyed right after a job
        std::atomic<int> n{0};
        pool->parallel_for(0, 10, [&](int64_t lo, int64_t hi, int) { n += static_cast<int>(hi - lo); });
        EXPECT_EQ(n.load(), 10);
      }
      if (rep % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let workers sleep
      pool.reset();
    }
  });
}

TEST(ThreadPool, SpinScopeRestores) {
  ThreadPool pool(2);
  EXPECT_FALSE(pool.spinning());
  {
    ThreadPool::SpinScope scope(pool);
    EXPECT_TRUE(pool.spinning());
    {
      ThreadPool::SpinScope inner(pool);
      EXPECT_TRUE(pool.spinning());
    }
    EXPECT_TRUE(pool.spinning());
  }
  EXPECT_FALSE(pool.spinning());
}

TEST(ThreadPool, DefaultSizeIsPhysicalCores) {
  const int cpus = available_cpu_count();
  const int cores = physical_core_count();
  EXPECT_GE(cpus, 1);
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, cpus);
  ThreadPool pool;
  EXPECT_EQ(pool.size(), cores);
  ThreadPool zero(0);
  EXPECT_EQ(zero.size(), cores);
}

TEST(FunctionRef, CallsWithoutCopying) {
  int calls = 0;
  auto lambda = [&calls](int x) { calls += x; return calls; };
  FunctionRef<int(int)> ref = lambda;
  EXPECT_EQ(ref(2), 2);
  EXPECT_EQ(ref(3), 5);
  const auto const_lambda = [](int x) { return x * 2; };
  FunctionRef<int(int)> cref = const_lambda;
  EXPECT_EQ(cref(4), 8);
}

}  // namespace
}  // namespace kazeia
