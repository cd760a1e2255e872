#include "kazeia/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <span>
#include <string>

#include "base/cpu_features.h"
#include "base/huge_page_buffer.h"
#include "engine_impl.h"
#include "base/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"

namespace kazeia {

double BenchSample::mean_tps() const {
  if (seconds.empty()) return 0.0;
  double sum = 0.0;
  for (double s : seconds) sum += n_tokens / s;
  return sum / static_cast<double>(seconds.size());
}

double BenchSample::stddev_tps() const {
  if (seconds.size() < 2) return 0.0;
  const double mean = mean_tps();
  double acc = 0.0;
  for (double s : seconds) acc += (n_tokens / s - mean) * (n_tokens / s - mean);
  return std::sqrt(acc / static_cast<double>(seconds.size() - 1));
}

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Deterministic ids spread over the vocabulary (never 0..2, often special).
std::vector<int32_t> bench_tokens(int64_t n, int64_t n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& id : ids) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    id = static_cast<int32_t>(3 + x % static_cast<uint64_t>(std::max<int64_t>(n_vocab - 3, 1)));
  }
  return ids;
}

// llama-bench's name for a test run at a depth: "tg128 @ d4096".
std::string depth_suffix(int64_t depth) { return depth > 0 ? " @ d" + std::to_string(depth) : ""; }

// A test of n tokens (and `extra` more untimed) after `depth` tokens of
// context must fit the engine's context.
Status check_fits(const char* what, int64_t n, int64_t extra, int64_t depth, int64_t n_ctx) {
  if (depth < 0) return InvalidArgument("context depth must be >= 0, got " + std::to_string(depth));
  const int64_t room = n_ctx - depth - extra;
  if (n <= 0 || n > room)
    return InvalidArgument(std::string(what) + " length " + std::to_string(n) + " at depth " + std::to_string(depth) +
                           " must be in 1.." + std::to_string(room));
  return OkStatus();
}

}  // namespace

// The warm-up repetition runs the test without its context: every timed
// repetition's own fill of `depth` tokens reads the weights and touches
// the code again, and filling it for the warm-up too (llama-bench does
// not) doubled the wall time of a -d 4096 run for nothing measured.
Result<BenchSample> bench_prompt(Engine& engine, int64_t n_prompt, int repetitions, int64_t depth) {
  KZ_RETURN_IF_ERROR(check_fits("prompt", n_prompt, 0, depth, engine.n_ctx()));
  BenchSample sample{"pp" + std::to_string(n_prompt) + depth_suffix(depth), n_prompt, {}};
  const auto ids = bench_tokens(depth + n_prompt, engine.n_vocab());
  const std::span<const int32_t> context(ids.data(), static_cast<size_t>(depth));
  const std::span<const int32_t> prompt(ids.data() + depth, static_cast<size_t>(n_prompt));
  std::vector<float> logits(static_cast<size_t>(engine.n_vocab()));
  KZ_ASSIGN_OR_RETURN(auto session, engine.new_session());
  for (int r = 0; r <= repetitions; ++r) {  // r == 0 warms up, without the context (above)
    session->reset();
    if (depth > 0 && r > 0) KZ_RETURN_IF_ERROR(session->eval(context, logits.data()));
    const double t0 = now_seconds();
    KZ_RETURN_IF_ERROR(session->eval(prompt, logits.data()));
    if (r > 0) sample.seconds.push_back(now_seconds() - t0);
  }
  sample.state_bytes = session->state_bytes();
  return sample;
}

namespace {

// The decode runs of bench_decode and bench_decode_ab: per repetition
// (r = 0 warms up, without the context: bench_prompt) a fresh session, the
// context (if any) and one warm-up token, then n_gen tokens one at a time;
// before(r, i) runs ahead of token i (i = -1: the warm-up token),
// after(r, i, seconds) gets its time.
template <class Before, class After>
Result<uint64_t> run_decode(Engine& engine, int64_t n_gen, int repetitions, int64_t depth, Before&& before,
                            After&& after) {
  const auto ids = bench_tokens(depth + n_gen + 1, engine.n_vocab());
  const std::span<const int32_t> context(ids.data(), static_cast<size_t>(depth));
  std::vector<float> logits(static_cast<size_t>(engine.n_vocab()));
  KZ_ASSIGN_OR_RETURN(auto session, engine.new_session());
  // As a generation does: the workers stay awake from one token to the next.
  struct Awake {
    Engine& e;
    explicit Awake(Engine& engine) : e(engine) { e.set_threads_awake(true); }
    ~Awake() { e.set_threads_awake(false); }
  } awake(engine);
  for (int r = 0; r <= repetitions; ++r) {
    before(r, int64_t{-1});
    session->reset();
    if (depth > 0 && r > 0) KZ_RETURN_IF_ERROR(session->eval(context, logits.data()));
    KZ_RETURN_IF_ERROR(session->eval(std::span<const int32_t>(&ids[static_cast<size_t>(depth)], 1), logits.data()));
    for (int64_t i = 0; i < n_gen; ++i) {
      before(r, i);
      const double t0 = now_seconds();
      KZ_RETURN_IF_ERROR(
          session->eval(std::span<const int32_t>(&ids[static_cast<size_t>(depth + 1 + i)], 1), logits.data()));
      after(r, i, now_seconds() - t0);
    }
  }
  return session->state_bytes();
}

std::vector<double> sorted_both(const std::vector<double> (&v)[2]) {
  std::vector<double> all = v[0];
  all.insert(all.end(), v[1].begin(), v[1].end());
  std::sort(all.begin(), all.end());
  return all;
}
double median_sorted(const std::vector<double>& v) { return v.empty() ? 0.0 : v[v.size() / 2]; }
double median_of(const std::vector<double> (&v)[2]) { return median_sorted(sorted_both(v)); }
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return median_sorted(v);
}
double fast_mean_of(const std::vector<double> (&v)[2]) {
  const auto all = sorted_both(v);
  if (all.empty()) return 0.0;
  const size_t keep = std::max<size_t>(1, all.size() * 8 / 10);
  return std::accumulate(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), 0.0) / static_cast<double>(keep);
}

}  // namespace

Result<BenchSample> bench_decode(Engine& engine, int64_t n_gen, int repetitions, int64_t depth) {
  KZ_RETURN_IF_ERROR(check_fits("decode", n_gen, 1, depth, engine.n_ctx()));  // + the warm-up token
  BenchSample sample{"tg" + std::to_string(n_gen) + depth_suffix(depth), n_gen, {}};
  double rep_seconds = 0.0;
  KZ_ASSIGN_OR_RETURN(sample.state_bytes, run_decode(
      engine, n_gen, repetitions, depth, [](int, int64_t) {},
      [&](int r, int64_t i, double seconds) {
        rep_seconds += seconds;
        if (i + 1 < n_gen) return;
        if (r > 0) sample.seconds.push_back(rep_seconds);
        rep_seconds = 0.0;
      }));
  return sample;
}

double BenchAbSample::median_a() const { return median_of(a_seconds); }
double BenchAbSample::median_b() const { return median_of(b_seconds); }
double BenchAbSample::fast_mean_a() const { return fast_mean_of(a_seconds); }
double BenchAbSample::fast_mean_b() const { return fast_mean_of(b_seconds); }
double BenchAbSample::parity_ratio(int parity) const {
  const int p = parity & 1;
  return median_of(b_seconds[p]) / median_of(a_seconds[p]);
}

Result<BenchAbSample> bench_decode_ab(Engine& engine, int64_t n_gen, int repetitions, int64_t depth,
                                      const std::string& settings) {
  KZ_RETURN_IF_ERROR(check_fits("decode", n_gen, 1, depth, engine.n_ctx()));
  KZ_ASSIGN_OR_RETURN(const kernels::KernelTable* table_b, kernels::kernel_table_with_settings(settings));
  BenchAbSample sample{"tg" + std::to_string(n_gen) + depth_suffix(depth), settings, {}, {}};
  // Whatever happens, the defaults are active again afterwards.
  struct Restore {
    ~Restore() { kernels::set_active_kernels_override(nullptr); }
  } restore;
  // Token i of repetition r runs B when i + r is odd; the warm-up token, A.
  auto runs_b = [](int r, int64_t i) { return i >= 0 && (i + r) % 2 == 1; };
  KZ_RETURN_IF_ERROR(run_decode(
                         engine, n_gen, repetitions, depth,
                         [&](int r, int64_t i) { kernels::set_active_kernels_override(runs_b(r, i) ? table_b : nullptr); },
                         [&](int r, int64_t i, double seconds) {
                           if (r > 0) (runs_b(r, i) ? sample.b_seconds : sample.a_seconds)[i % 2].push_back(seconds);
                         })
                         .status());
  return sample;
}

std::string kernel_summary() {
  const kernels::KernelTable& t = kernels::active_kernels();
  std::string s = std::string(cpu_vendor_name(cpu_features().vendor)) + ", kernels " + t.name + ", decode walk " +
                  kernels::decode_walk_name(t.decode_walk);
  if (t.decode_walk == kernels::DecodeWalk::kLaneStreams)
    s += t.decode_lane_prefetch > 0 ? " (prefetched " + std::to_string(t.decode_lane_prefetch) + " bytes ahead)"
                                    : " (not prefetched)";
  return s;
}

int resolve_thread_count(int n) { return n > 0 ? n : physical_core_count(); }

namespace {

// The best pass over `bytes` at `data`, read by the pool's threads. Each
// thread reads its part as one sequential stream, and as a few streams
// side by side (a piece from each in turn), the way the matmul kernels'
// lane walks read a chunk of rows: a core's hardware prefetchers follow
// several streams at once, and together they fetch more than one alone.
// The best pass of any pattern is the bandwidth. On a Zen 2 cloud host
// (2 threads, 1 GiB on 2 MiB pages) one stream gave 35 GB/s, 16 streams
// of 1 KB pieces 34 and 6 streams of 512 bytes 47-48: a probe of the
// first two alone rated decode against 3/4 of what the memory delivers.
double best_read_pass(ThreadPool& pool, const uint8_t* data, size_t bytes, int passes) {
  std::vector<uint64_t> sinks(static_cast<size_t>(pool.size()) * 8, 0);
  struct Pattern {
    size_t streams, piece;  // streams == 1: one sequential run
  };
  constexpr Pattern kPatterns[] = {{1, 0}, {4, 512}, {4, 1024}, {6, 512}, {6, 1024},
                                   {8, 512}, {8, 1024}, {16, 512}, {16, 1024}};
  const int64_t n_lines = static_cast<int64_t>(bytes / 64);
  double best = 0.0;
  for (int p = 0; p < passes; ++p) {
    for (const Pattern& pattern : kPatterns) {
      const double t0 = now_seconds();
      pool.parallel_for(0, n_lines, [&](int64_t b, int64_t e, int t) {
        // The kernels' widest loads (64-byte with AVX-512): a scalar loop
        // here measured 30-50 % less than the memory delivers.
        const uint8_t* base = data + static_cast<size_t>(b) * 64;
        const size_t part = static_cast<size_t>(e - b) * 64;
        uint64_t sum = 0;
        if (pattern.streams == 1) {
          sum = kernels::read_stream(base, part);
        } else {
          const size_t per = part / pattern.streams / pattern.piece * pattern.piece;
          for (size_t off = 0; off < per; off += pattern.piece)
            for (size_t st = 0; st < pattern.streams; ++st)
              sum += kernels::read_stream(base + st * per + off, pattern.piece);
          sum += kernels::read_stream(base + pattern.streams * per, part - pattern.streams * per);
        }
        sinks[static_cast<size_t>(t) * 8] += sum;
      }, 1, pool.size());
      best = std::max(best, static_cast<double>(n_lines * 64) / (now_seconds() - t0));
    }
  }
  volatile uint64_t keep = std::accumulate(sinks.begin(), sinks.end(), uint64_t{0});
  (void)keep;
  return best;
}

}  // namespace

double measure_read_bandwidth(int n_threads, uint64_t bytes, int passes) {
  ThreadPool pool(n_threads);
  const size_t n = static_cast<size_t>(bytes / sizeof(uint64_t));
  // On 2 MiB pages, as the weights are (huge_page_buffer.h).
  HugePageBuffer storage(n * sizeof(uint64_t));
  if (storage.data() == nullptr) return 0.0;
  auto* buffer = reinterpret_cast<uint64_t*>(storage.data());
  // Touch every page from the thread that will read it (first-touch NUMA).
  pool.parallel_for(0, static_cast<int64_t>(n), [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) buffer[static_cast<size_t>(i)] = static_cast<uint64_t>(i);
  }, 1, pool.size());
  return best_read_pass(pool, storage.data(), n * sizeof(uint64_t), passes);
}

double measure_mapped_read_bandwidth(Engine& engine, int passes) {
  ApiAccess::EngineImpl& e = ApiAccess::engine(engine);
  const std::span<const uint8_t> bytes = e.file->bytes();
  return best_read_pass(*e.pool, bytes.data(), bytes.size(), passes);  // the engine's own threads
}

bool reset_peak_rss() {
  std::ofstream refs("/proc/self/clear_refs");
  if (!refs) return false;
  refs << "5";
  refs.flush();
  return static_cast<bool>(refs);
}

uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace kazeia
