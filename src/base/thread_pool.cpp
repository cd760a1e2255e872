// Memory ordering, in short:
//  - Publishing a job: the dispatcher writes n_chunks_, chunk_fn_, done_ and
//    error_ plainly, then stores state_ (new id | n chunks). A thread reads
//    those fields only after a successful CAS on state_ (acq_rel) that takes
//    a chunk of that id. The CAS reads the dispatcher's store or a later CAS
//    in its release sequence, so it synchronizes with the dispatcher. While
//    a claimed chunk is unfinished, done_ < n and the dispatcher cannot start
//    the next job, so the fields cannot change under the reader. Threads that
//    saw an old id only ever touch state_ (their CAS fails on the id bits).
//  - Finishing: each chunk ends with done_.fetch_add(release); the dispatcher
//    waits for done_ == n with acquire, so the chunks' writes (results and
//    error_) happen-before the return of parallel_for.
//  - Sleeping (no lost wakeups): a worker increments sleepers_ and then
//    re-reads state_; the dispatcher stores state_ and then reads sleepers_.
//    All four are seq_cst, so at least one side sees the other (Dekker): the
//    worker sees the new job, or the dispatcher sees the sleeper and notifies
//    after taking mu_, which the worker holds from its increment until it is
//    inside cv_.wait. Even a missed wakeup could only cost speed: the
//    dispatcher runs every chunk nobody else claimed, so a job never waits
//    for a worker that has not started one.
// No standalone fences: ThreadSanitizer understands this code as is.
#include "base/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "base/timer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kazeia {
namespace {

// A polite busy-wait step: PAUSE on x86 (frees the sibling hyperthread, saves
// power); ISB on aarch64, which stalls briefly where YIELD is a no-op on most
// cores (Rust's spin_loop hint makes the same choice).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("isb" ::: "memory");
#else
  std::this_thread::yield();
#endif
}

constexpr int kMaxChunks = 1 << 30;  // chunks left must fit the low 32 bits of state_

inline uint32_t id_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }
inline uint32_t left_of(uint64_t state) { return static_cast<uint32_t>(state); }

// The pool whose job this thread is running, to run nested calls inline.
thread_local const ThreadPool* tls_pool = nullptr;
thread_local int tls_index = 0;

class TlsScope {
 public:
  TlsScope(const ThreadPool* pool, int index) : pool_(tls_pool), index_(tls_index) {
    tls_pool = pool;
    tls_index = index;
  }
  ~TlsScope() {
    tls_pool = pool_;
    tls_index = index_;
  }

 private:
  const ThreadPool* pool_;
  int index_;
};

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  // The mask may be larger than cpu_set_t's 1024 CPUs: grow until it fits.
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    size_t bytes = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(bytes, set);
    if (sched_getaffinity(0, bytes, set) == 0) {
      for (int i = 0; i < n; ++i) {
        if (CPU_ISSET_S(i, bytes, set)) cpus.push_back(i);
      }
      CPU_FREE(set);
      return cpus;
    }
    CPU_FREE(set);
    if (errno != EINVAL) break;
  }
  return cpus;
}

int count_physical_cores() {
  std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Each physical core has its own set of SMT siblings; count distinct sets.
  std::set<std::string> cores;
  for (int cpu : cpus) {
    std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::string siblings;
    std::ifstream in(base + "core_cpus_list");
    if (!in) in = std::ifstream(base + "thread_siblings_list");
    if (!in || !std::getline(in, siblings) || siblings.empty()) return static_cast<int>(cpus.size());
    cores.insert(siblings);
  }
  return std::max<int>(1, static_cast<int>(cores.size()));
}

}  // namespace

int available_cpu_count() {
  std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(cpus.size());
}

int physical_core_count() {
  static const int n = count_physical_cores();
  return n;
}

ThreadPool::ThreadPool(const ThreadPoolOptions& options) {
  n_threads_ = options.n_threads > 0 ? options.n_threads : physical_core_count();
  spin_ns_ = static_cast<int64_t>(std::max(0, options.spin_us)) * 1000;
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::parallel_for(int64_t begin, int64_t end, RangeFn fn, int64_t grain, int max_chunks) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  // Unsigned: end - begin cannot overflow.
  const uint64_t n = static_cast<uint64_t>(end) - static_cast<uint64_t>(begin);
  const uint64_t g = static_cast<uint64_t>(grain);
  const uint64_t units = n / g + (n % g != 0);
  const uint64_t want = static_cast<uint64_t>(max_chunks > 0 ? max_chunks : n_threads_);
  const int k = static_cast<int>(std::min({want, units, static_cast<uint64_t>(kMaxChunks)}));
  if (k <= 1 || n_threads_ == 1 || tls_pool == this) {
    run_inline([&](int t) { fn(begin, end, t); });
    return;
  }
  // Units of `grain` spread evenly: the first `rem` chunks get one more.
  const uint64_t base = units / static_cast<uint64_t>(k), rem = units % static_cast<uint64_t>(k);
  auto unit_start = [&](uint64_t c) { return c * base + std::min(c, rem); };
  dispatch(k, [&](int c, int t) {
    const uint64_t uc = static_cast<uint64_t>(c);
    const uint64_t lo = unit_start(uc) * g;  // < n: chunk c has at least one unit
    const uint64_t hi = lo + std::min(n - lo, (base + (uc < rem)) * g);  // no overflow near 2^64
    fn(static_cast<int64_t>(static_cast<uint64_t>(begin) + lo),
       static_cast<int64_t>(static_cast<uint64_t>(begin) + hi), t);
  });
}

void ThreadPool::run_on_all(AllFn fn) {
  if (n_threads_ == 1 || tls_pool == this) {
    run_inline([&](int) { fn(0, 1); });
    return;
  }
  const int n = n_threads_;
  dispatch(n, [&](int part, int) { fn(part, n); });
}

void ThreadPool::run_inline(FunctionRef<void(int)> fn) {
  if (tls_pool == this) {  // nested: we are already inside this pool's job
    fn(tls_index);
    return;
  }
  // From outside: still exclusive, so thread index 0 stays unique.
  std::lock_guard<std::mutex> lock(dispatch_mu_);
  TlsScope scope(this, 0);
  fn(0);
}

void ThreadPool::dispatch(int n_chunks, ChunkFn fn) {
  std::lock_guard<std::mutex> lock(dispatch_mu_);
  TlsScope scope(this, 0);
  chunk_fn_ = &fn;
  n_chunks_ = n_chunks;
  error_ = nullptr;
  failed_.store(false, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  if (++job_id_ == 0) job_id_ = 1;  // 0 means "no job yet" to a fresh worker
  const uint32_t id = job_id_;
  state_.store((static_cast<uint64_t>(id) << 32) | static_cast<uint32_t>(n_chunks),
               std::memory_order_seq_cst);
  // Wake only as many sleepers as there are chunks for others to take.
  if (const int sleeping = sleepers_.load(std::memory_order_seq_cst); sleeping > 0) {
    { std::lock_guard<std::mutex> wake(mu_); }
    if (n_chunks - 1 >= sleeping) {
      cv_.notify_all();
    } else {
      for (int i = 0; i < n_chunks - 1; ++i) cv_.notify_one();
    }
  }

  work_on(id, 0);

  // Others may still be running their last chunk: poll, then yield so an
  // oversubscribed machine can run them.
  const int64_t spin_until = now_ns() + std::max<int64_t>(spin_ns_, 20000);
  for (int i = 0; done_.load(std::memory_order_acquire) != n_chunks; ++i) {
    if ((i & 63) != 63 || now_ns() < spin_until) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  chunk_fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::work_on(uint32_t job_id, int thread_index) {
  uint64_t s = state_.load(std::memory_order_acquire);
  while (id_of(s) == job_id && left_of(s) > 0) {
    if (!state_.compare_exchange_weak(s, s - 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      continue;  // s was reloaded
    }
    run_chunk(n_chunks_ - static_cast<int>(left_of(s)), thread_index);
    done_.fetch_add(1, std::memory_order_release);
    s = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run_chunk(int chunk, int thread_index) {
  if (failed_.load(std::memory_order_relaxed)) return;
  try {
    (*chunk_fn_)(chunk, thread_index);
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true, std::memory_order_relaxed);
  }
}

uint64_t ThreadPool::wait_for_job(uint32_t seen) {
  if (spinning_.load(std::memory_order_relaxed)) {
    const int64_t deadline = now_ns() + spin_ns_;
    for (int i = 1;; ++i) {
      uint64_t s = state_.load(std::memory_order_acquire);
      if (id_of(s) != seen || stop_.load(std::memory_order_relaxed)) return s;
      // Every 64 polls (~a few µs): give up when the hint is off or time is out.
      if ((i & 63) == 0 && (!spinning_.load(std::memory_order_relaxed) || now_ns() > deadline)) break;
      cpu_relax();
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  uint64_t s;
  while (id_of(s = state_.load(std::memory_order_seq_cst)) == seen &&
         !stop_.load(std::memory_order_relaxed)) {
    cv_.wait(lock);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return s;
}

void ThreadPool::worker_main(int thread_index) {
  TlsScope scope(this, thread_index);
  uint32_t seen = 0;
  for (;;) {
    uint64_t s = wait_for_job(seen);
    if (stop_.load(std::memory_order_acquire)) return;
    seen = id_of(s);
    try {
      work_on(seen, thread_index);
    } catch (...) {
      // run_chunk catches job exceptions; nothing else here throws. Never
      // let one escape a worker (std::terminate).
      std::fputs("kazeia: unexpected exception in thread pool worker\n", stderr);
    }
  }
}

Status parallel_for_status(ThreadPool* pool, int64_t begin, int64_t end,
                           FunctionRef<Status(int64_t, int64_t, int)> fn, int64_t grain, int max_chunks) {
  if (pool == nullptr) return end > begin ? fn(begin, end, 0) : OkStatus();
  std::mutex mu;
  Status first;
  pool->parallel_for(begin, end, [&](int64_t b, int64_t e, int t) {
    Status s = fn(b, e, t);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (first.ok()) first = std::move(s);
    }
  }, grain, max_chunks);
  return first;
}

}  // namespace kazeia
