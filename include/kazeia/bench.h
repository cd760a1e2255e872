// Measurements for `kazeia bench`: prompt processing and decode speed of a
// model, the machine's memory read bandwidth, and peak memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kazeia/engine.h"
#include "kazeia/status.h"

namespace kazeia {

struct BenchSample {
  std::string test;        // "pp512", "tg128"
  int64_t n_tokens = 0;
  std::vector<double> seconds;  // one per repetition
  uint64_t state_bytes = 0;     // the session's KV cache + recurrent state
  double mean_tps() const;
  double stddev_tps() const;
};

// pp: one batch of n_prompt tokens; tg: n_gen single tokens decoded one
// after another (after one warm-up token). Both start from an empty context,
// or after `depth` tokens already in it (evaluated before the clock starts,
// llama-bench's -d: "tg128 @ d4096"), which is where attention over a long
// context shows. Token ids are fixed pseudo-random ids of the vocabulary, as
// llama-bench does.
Result<BenchSample> bench_prompt(Engine& engine, int64_t n_prompt, int repetitions, int64_t depth = 0);
Result<BenchSample> bench_decode(Engine& engine, int64_t n_gen, int repetitions, int64_t depth = 0);

// Decode under two kernel settings in one process, alternating token by
// token: A the defaults, B `settings` (NAME=VALUE pairs, comma-separated;
// kernels::kernel_table_with_settings lists the names), so that both meet
// the same state of a shared, noisy machine. Whole-process runs of the same
// binary moved by +-20 % here; alternate tokens resolve 1-2 %. Repetition r
// gives B the odd tokens when r is even and the even ones when r is odd, so
// each side decodes every token position (use -r 2 or more).
struct BenchAbSample {
  std::string test;      // "tg128", "tg128 @ d4096"
  std::string settings;  // B's
  // Seconds per token, [0] on even token indices, [1] on odd ones.
  std::vector<double> a_seconds[2], b_seconds[2];
  // Over both parities: the median token time, and the mean of the fastest
  // 80 % (outliers - a page fault, a preempted thread - left out).
  double median_a() const;
  double median_b() const;
  double fast_mean_a() const;
  double fast_mean_b() const;
  // B's median over A's on one token parity (0 even, 1 odd). The two come
  // from different repetitions: how far they differ shows the drift
  // between repetitions.
  double parity_ratio(int parity) const;
};
Result<BenchAbSample> bench_decode_ab(Engine& engine, int64_t n_gen, int repetitions, int64_t depth,
                                      const std::string& settings);

// The thread count an engine or the bandwidth probe runs with when asked
// for n: n itself when positive, otherwise the physical cores available.
int resolve_thread_count(int n);

// Read bandwidth in bytes/second: n_threads threads sum a buffer of `bytes`
// (default 1 GiB, far beyond the caches) several times; the best pass counts.
double measure_read_bandwidth(int n_threads, uint64_t bytes = uint64_t{1} << 30, int passes = 5);

// The same read, over the engine's own mapped model file: the weights where
// they sit in physical memory. On a virtual machine that differs from a
// fresh buffer: two identical files, both in 2 MiB folios, read 24 and 29
// GB/s here. Decode's GB/s over this says how close the kernels come to
// reading those very pages.
double measure_mapped_read_bandwidth(Engine& engine, int passes = 5);

// What runs the matrix products here, for a benchmark's record: the CPU's
// vendor, the active kernel table and how decode walks a matrix, e.g.
// "AMD, kernels avx512, decode walk lanes (prefetched 1024 bytes ahead)".
std::string kernel_summary();

// Peak resident set size of this process so far (VmHWM), in bytes.
uint64_t peak_rss_bytes();

// Starts the peak over at the current resident set (Linux: writes 5 to
// /proc/self/clear_refs). False where that is not possible.
bool reset_peak_rss();

}  // namespace kazeia
