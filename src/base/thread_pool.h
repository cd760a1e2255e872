// Kazeia's thread pool: fixed workers, low-latency fork/join.
//
// Decode issues ~200 small parallel ops per token, so dispatch cost matters
// more than anything else here. One job runs at a time; the calling thread
// takes part as worker 0; chunks are claimed dynamically, so a job finishes
// as soon as its chunks are done, even if a sleeping worker has not woken
// yet (it finds nothing left and goes back to sleep).
//
// Idle workers poll for the next job only while spinning is on (set it for
// the duration of a generation, see SpinScope), and then only for a bounded
// spin_us; otherwise they sleep on a condition variable at once. Waking a
// sleeping worker costs tens of microseconds; polling costs a core.
//
// Nested calls (from inside a job, on any of this pool's threads) run inline
// on the calling thread, so kernels may call each other freely. Concurrent
// calls from several outside threads are serialized. Cycles between two
// pools (A's job waits on B whose job waits on A) deadlock: don't.
//
// An exception thrown by a job function is caught on the thread that ran it;
// the remaining chunks are skipped and the first exception is rethrown from
// parallel_for/run_on_all on the calling thread once all threads are out.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

// A non-owning reference to a callable, like C++26 std::function_ref: no
// allocation, one indirect call. The referenced callable must outlive the
// call (a lambda passed directly as an argument does).
template <class Sig>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
             std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT: implicit by design
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

// Logical CPUs this process may run on (sched_getaffinity), at least 1.
int available_cpu_count();
// Physical cores among them: SMT siblings count once (sysfs topology); falls
// back to available_cpu_count() when topology is unreadable. Cached.
int physical_core_count();

struct ThreadPoolOptions {
  int n_threads = 0;  // total threads including the caller; <= 0: physical_core_count()
  int spin_us = 50;   // how long an idle worker polls for the next job while spinning is on
};

class ThreadPool {
 public:
  using RangeFn = FunctionRef<void(int64_t range_begin, int64_t range_end, int thread_index)>;
  using AllFn = FunctionRef<void(int part, int n_parts)>;

  ThreadPool() : ThreadPool(ThreadPoolOptions{}) {}
  explicit ThreadPool(int n_threads) : ThreadPool(ThreadPoolOptions{.n_threads = n_threads}) {}
  explicit ThreadPool(const ThreadPoolOptions& options);
  ~ThreadPool();  // must not run while a call is in progress
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads including the caller; a pool of 1 has no workers and runs inline.
  int size() const { return n_threads_; }

  // Calls fn on contiguous, disjoint chunks covering [begin, end) exactly
  // once, and returns when all are done. Chunk boundaries fall on begin + a
  // multiple of `grain` (so no chunk but the last is smaller than grain);
  // there are at most `max_chunks` chunks (<= 0: size()), fewer if the range
  // is short. thread_index in [0, size()) identifies the executing thread:
  // two chunks running at the same time never share it, so it can index
  // per-thread scratch. Empty range: fn is not called. One chunk, a pool of 1
  // or a nested call: fn(begin, end, <current thread index>) inline.
  void parallel_for(int64_t begin, int64_t end, RangeFn fn, int64_t grain = 1, int max_chunks = 0);

  // For kernels that split work themselves: calls fn(part, size()) once for
  // each part in [0, size()). Parts run concurrently, but a part may run on
  // any thread and one thread may run several parts in turn, so parts must
  // not wait for each other (no barriers). Nested or pool of 1: fn(0, 1).
  void run_on_all(AllFn fn);

  // Generation-active hint: while on, idle workers poll for up to spin_us
  // before sleeping; while off they sleep immediately. Cheap, any thread.
  void set_spinning(bool on) { spinning_.store(on, std::memory_order_relaxed); }
  bool spinning() const { return spinning_.load(std::memory_order_relaxed); }

  // Spinning on for a scope (one generation), previous setting restored.
  class SpinScope {
   public:
    explicit SpinScope(ThreadPool& pool) : pool_(pool), was_(pool.spinning()) { pool.set_spinning(true); }
    ~SpinScope() { pool_.set_spinning(was_); }
    SpinScope(const SpinScope&) = delete;
    SpinScope& operator=(const SpinScope&) = delete;

   private:
    ThreadPool& pool_;
    bool was_;
  };

 private:
  using ChunkFn = FunctionRef<void(int chunk, int thread_index)>;

  void dispatch(int n_chunks, ChunkFn fn);
  void run_inline(FunctionRef<void(int thread_index)> fn);
  void work_on(uint32_t job_id, int thread_index);
  void run_chunk(int chunk, int thread_index);
  uint64_t wait_for_job(uint32_t seen);
  void worker_main(int thread_index);

  int n_threads_ = 1;
  int64_t spin_ns_ = 0;
  std::vector<std::thread> workers_;

  // The job. `state_` packs (job id << 32 | chunks not yet claimed); the
  // plain fields below are written by the dispatcher before it publishes a
  // new id and read by a thread only after it claimed a chunk of that job.
  // state_ is polled by idle workers and done_ is hammered as chunks finish:
  // separate cache lines, so one does not slow down the other.
  alignas(64) std::atomic<uint64_t> state_{0};
  std::atomic<bool> spinning_{false};  // read-mostly, polled with state_
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<int> done_{0};  // chunks finished
  std::atomic<bool> failed_{false};       // a chunk threw: skip the rest
  std::atomic<int> sleepers_{0};          // workers in (or entering) cv_.wait
  uint32_t job_id_ = 0;
  int n_chunks_ = 0;
  ChunkFn* chunk_fn_ = nullptr;
  std::exception_ptr error_;  // first exception; guarded by error_mu_ while a job runs
  std::mutex error_mu_;

  std::mutex dispatch_mu_;  // one job at a time
  std::mutex mu_;           // with cv_: sleeping workers
  std::condition_variable cv_;
};

// parallel_for over work that can fail: returns the first error a chunk
// returned (that chunk stops there, the others run to their end), else OK.
// Without a pool, fn runs on the whole range on the calling thread.
Status parallel_for_status(ThreadPool* pool, int64_t begin, int64_t end,
                           FunctionRef<Status(int64_t range_begin, int64_t range_end, int thread_index)> fn,
                           int64_t grain = 1, int max_chunks = 0);

}  // namespace kazeia
