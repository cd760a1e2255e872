// kazeia bench -m M [-p 512] [-n 128] [-d 0] [-r 3] [-t 1,2] [--json] [--bandwidth]
// kazeia bench -m M --ab NAME=VALUE[,...] [-n 128] [-d 0] [-r 3] [-t 2] [--json]
//
// llama-bench-like rows (mean ± sd tokens/s over -r repetitions after a
// warm-up), plus for decode the weight bytes read per second and its ratio
// to the read bandwidth measured on this machine, and the peak RSS.
// `kazeia bench --bandwidth` alone prints only the bandwidth. With --ab,
// decode alone, the default kernel settings against the given ones token by
// token (bench_decode_ab).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cmd_common.h"
#include "kazeia/bench.h"

namespace kazeia::cli {
namespace {

std::vector<int> parse_threads(const std::string& s) {
  std::vector<int> out;
  auto ids = parse_token_list(s);
  // 0 resolves here, so that a decode row (which reports the engine's
  // thread count) finds the bandwidth probed with the same count.
  if (ids.ok())
    for (int32_t v : *ids) out.push_back(resolve_thread_count(v));
  return out;
}

struct Options {
  std::string model;
  int64_t n_prompt = 512, n_gen = 128, depth = 0;
  int reps = 3;
  int64_t ubatch = EngineOptions{}.n_ubatch;
  std::string threads = "0";
  std::string ab;
  bool json = false, bandwidth = false, no_huge_pages = false;
  KvCacheType kv_type = EngineOptions{}.kv_type;
  int64_t bandwidth_mib = 1024;
};

// The engine of one thread count, with room for the longest test.
EngineOptions engine_options(const Options& o, int threads, int64_t n_ctx) {
  EngineOptions eo;
  eo.n_threads = threads;
  eo.n_ctx = n_ctx;
  eo.kv_type = o.kv_type;
  eo.n_ubatch = o.ubatch;
  eo.huge_pages = !o.no_huge_pages;
  return eo;
}

// --ab: per thread count, the A/B decode (bench_decode_ab) and its ratios.
int run_ab(const Options& o) {
  const std::vector<int> thread_counts = parse_threads(o.threads);
  if (o.n_gen <= 0) return fail("--ab compares decode: give -n > 0");
  if (o.reps < 2) return fail("--ab needs -r 2 or more (each repetition swaps which tokens B decodes)");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int t : thread_counts) {
    auto engine = Engine::load(o.model, engine_options(o, t, o.depth + o.n_gen + 1 + 16));
    if (!engine.ok()) return fail(engine.status().to_string());
    auto s = bench_decode_ab(**engine, o.n_gen, o.reps, o.depth, o.ab);
    if (!s.ok()) return fail(s.status().to_string());
    const BenchAbSample& ab = *s;
    const double by_parity[2] = {ab.parity_ratio(0), ab.parity_ratio(1)};
    const size_t n_a = ab.a_seconds[0].size() + ab.a_seconds[1].size();
    const size_t n_b = ab.b_seconds[0].size() + ab.b_seconds[1].size();
    if (o.json) {
      out.push_back({{"test", ab.test},
                     {"threads", (*engine)->n_threads()},
                     {"settings_b", ab.settings},
                     {"tokens_a", n_a},
                     {"tokens_b", n_b},
                     {"median_seconds_a", ab.median_a()},
                     {"median_seconds_b", ab.median_b()},
                     {"ratio_median", ab.median_b() / ab.median_a()},
                     {"ratio_fast80", ab.fast_mean_b() / ab.fast_mean_a()},
                     {"ratio_even_tokens", by_parity[0]},
                     {"ratio_odd_tokens", by_parity[1]}});
      continue;
    }
    std::printf("A/B decode %s, %d thread(s), alternate tokens, %d repetitions: A = the defaults, B = %s\n",
                ab.test.c_str(), (*engine)->n_threads(), o.reps, ab.settings.c_str());
    std::printf("  A: %zu tokens, median %.3f ms (%.2f t/s)\n", n_a, ab.median_a() * 1e3, 1.0 / ab.median_a());
    std::printf("  B: %zu tokens, median %.3f ms (%.2f t/s)\n", n_b, ab.median_b() * 1e3, 1.0 / ab.median_b());
    std::printf("  B/A token time: median %.4f, fastest 80 %% %.4f; even tokens %.4f, odd tokens %.4f\n",
                ab.median_b() / ab.median_a(), ab.fast_mean_b() / ab.fast_mean_a(), by_parity[0], by_parity[1]);
  }
  if (o.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

void setup_bench(CLI::App& app, std::function<int()>* run) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark prompt processing and decode speed");
  cmd->add_option("-m,--model", o->model, "GGUF model file");
  cmd->add_option("-p,--n-prompt", o->n_prompt, "Prompt tokens per pp test (0: skip)")->capture_default_str();
  cmd->add_option("-n,--n-gen", o->n_gen, "Tokens per tg test (0: skip)")->capture_default_str();
  cmd->add_option("-d,--n-depth", o->depth, "Tokens already in the context before each test (not timed)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-r,--repetitions", o->reps, "Repetitions")->capture_default_str();
  cmd->add_option("-t,--threads", o->threads, "Thread counts, comma-separated (0: physical cores)")->capture_default_str();
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->add_option("--ab", o->ab,
                  "Decode only, alternating token by token between the default kernel settings (A) and these (B): "
                  "NAME=VALUE pairs, comma-separated (KAZEIA_CPU_LEVEL, KAZEIA_DECODE_WALK, KAZEIA_LANE_PREFETCH, "
                  "KAZEIA_TOKEN_TILES, KAZEIA_AMX, KAZEIA_ROW_KERNELS)");
  cmd->add_flag("--bandwidth", o->bandwidth, "Measure the memory read bandwidth (alone when no model is given)");
  cmd->add_option("--bandwidth-mib", o->bandwidth_mib,
                  "Size of the bandwidth probe's buffer, MiB (keep it well above the last-level cache)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  add_kv_type_option(cmd, o->kv_type);
  add_huge_pages_flag(cmd, o->no_huge_pages);
  cmd->add_option("--ubatch-size,--ub", o->ubatch, "Tokens per forward pass")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->callback([run, o] {
    *run = [o] {
      const std::vector<int> thread_counts = parse_threads(o->threads);
      if (thread_counts.empty()) return fail("bad thread list '" + o->threads + "'");
      if (o->model.empty() && !o->bandwidth) return fail("give -m MODEL, or --bandwidth");
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      const uint64_t probe_bytes = static_cast<uint64_t>(o->bandwidth_mib) << 20;
      // Per thread count, bytes/s: the best probe so far. On a shared machine
      // one probe alone can land in a busy moment, so a model run is rated
      // against the better of a probe before it and one after.
      std::map<int, double> bandwidth;
      auto probe_all = [&] {
        for (int t : thread_counts) bandwidth[t] = std::max(bandwidth[t], measure_read_bandwidth(t, probe_bytes));
      };
      if (o->model.empty()) {
        probe_all();
        for (int t : thread_counts) {
          const double bw = bandwidth[t];
          if (o->json)
            out.push_back({{"test", "bandwidth"}, {"threads", t}, {"bytes_per_second", bw}});
          else
            std::printf("read bandwidth, %d thread(s): %.2f GB/s\n", t, bw / 1e9);
        }
        if (o->json) std::printf("%s\n", out.dump(2).c_str());
        return 0;
      }
      if (!o->ab.empty()) return run_ab(*o);
      if (!o->json)
        std::printf("| %-28s | %9s | %7s | %14s | %16s | %8s | %9s |\n", "model", "size MiB", "threads", "test",
                    "t/s", "GB/s", "% of bw");
      struct Row {
        std::string name;
        uint64_t file_size, weight_bytes, huge_page_bytes;
        int threads;
        double mapped_bandwidth;  // 0: not measured
        BenchSample sample;
        bool decode() const { return sample.test.rfind("tg", 0) == 0; }
        // Weight bytes a decode row read per second (0 for a prompt row).
        double weight_bytes_per_second() const {
          return decode() ? sample.mean_tps() * static_cast<double>(weight_bytes) : 0.0;
        }
      };
      std::vector<Row> rows;
      const bool rate_decode = o->bandwidth && o->n_gen > 0;
      if (rate_decode) {
        // The probe's buffer must not count as the model's peak memory: the
        // peak starts over after it (where it cannot, only the probe after
        // the runs is taken).
        probe_all();
        if (!reset_peak_rss()) bandwidth.clear();
      }
      for (int t : thread_counts) {
        const int64_t n_ctx = o->depth + std::max<int64_t>(o->n_prompt, o->n_gen + 1) + 16;
        auto engine = Engine::load(o->model, engine_options(*o, t, n_ctx));
        if (!engine.ok()) return fail(engine.status().to_string());
        Engine& e = **engine;
        std::string name = e.path();
        if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
        std::vector<BenchSample> samples;
        if (o->n_prompt > 0) {
          auto s = bench_prompt(e, o->n_prompt, o->reps, o->depth);
          if (!s.ok()) return fail(s.status().to_string());
          samples.push_back(*s);
        }
        if (o->n_gen > 0) {
          auto s = bench_decode(e, o->n_gen, o->reps, o->depth);
          if (!s.ok()) return fail(s.status().to_string());
          samples.push_back(*s);
        }
        // A plain read of the mapped file itself (the probe's buffer lies
        // elsewhere in physical memory, which on a VM can read differently).
        const double mapped_bw = rate_decode ? measure_mapped_read_bandwidth(e) : 0.0;
        for (const auto& s : samples)
          rows.push_back({name, e.file_size(), e.weight_bytes_per_token(), e.weight_huge_page_bytes(), e.n_threads(),
                          mapped_bw, s});
      }
      // Peak RSS before the bandwidth test, whose buffer would dominate it.
      const uint64_t rss_bytes = peak_rss_bytes();
      if (rate_decode) probe_all();
      const char* kv_name = kv_type_name(o->kv_type);
      for (const Row& row_info : rows) {
        {
          const BenchSample& s = row_info.sample;
          const std::string& name = row_info.name;
          const bool decode = row_info.decode();
          const double gbs = row_info.weight_bytes_per_second();
          const double bw = decode && rate_decode ? bandwidth[row_info.threads] : 0.0;
          if (o->json) {
            nlohmann::ordered_json row{{"model", name},          {"file_size", row_info.file_size},
                                       {"threads", row_info.threads}, {"kv_type", kv_name},
                                       {"test", s.test}, {"n_depth", o->depth},
                                       {"n_tokens", s.n_tokens},   {"tps_mean", s.mean_tps()},
                                       {"tps_sd", s.stddev_tps()}, {"seconds", s.seconds}};
            if (decode) {
              row["weight_bytes_per_token"] = row_info.weight_bytes;
              row["weight_bytes_per_second"] = gbs;
              if (bw > 0) {
                row["read_bandwidth"] = bw;
                row["bandwidth_ratio"] = gbs / bw;
              }
              if (row_info.mapped_bandwidth > 0) {
                row["mapped_read_bandwidth"] = row_info.mapped_bandwidth;
                row["mapped_bandwidth_ratio"] = gbs / row_info.mapped_bandwidth;
              }
            }
            out.push_back(row);
          } else {
            char tps[64], gb[32] = "", pct[32] = "";
            std::snprintf(tps, sizeof tps, "%.2f ± %.2f", s.mean_tps(), s.stddev_tps());
            if (decode) std::snprintf(gb, sizeof gb, "%.2f", gbs / 1e9);
            if (bw > 0) std::snprintf(pct, sizeof pct, "%.1f", 100.0 * gbs / bw);
            std::printf("| %-28s | %9.1f | %7d | %14s | %16s | %8s | %9s |\n", name.c_str(),
                        static_cast<double>(row_info.file_size) / 1048576.0, row_info.threads, s.test.c_str(), tps, gb, pct);
          }
        }
      }
      const double rss = static_cast<double>(rss_bytes) / 1048576.0;
      // The memory bar: mapped weights + KV/state + 64 MiB for everything
      // else (tokenizer, activations, code). Engines load one at a time, so
      // the largest file and state count.
      uint64_t file_bytes = 0, state_bytes = 0, huge_bytes = 0;
      for (const Row& r : rows) {
        file_bytes = std::max(file_bytes, r.file_size);
        state_bytes = std::max(state_bytes, r.sample.state_bytes);
        huge_bytes = std::max(huge_bytes, r.huge_page_bytes);
      }
      const uint64_t bound_bytes = file_bytes + state_bytes + (uint64_t{64} << 20);
      if (o->json) {
        out.push_back({{"test", "kernels"}, {"summary", kernel_summary()}});
        out.push_back({{"test", "peak_rss"}, {"bytes", rss_bytes}, {"state_bytes", state_bytes},
                       {"bound_bytes", bound_bytes}, {"file_size", file_bytes}, {"huge_page_bytes", huge_bytes}});
        std::printf("%s\n", out.dump(2).c_str());
      } else {
        for (const auto& [t, bw] : bandwidth) std::printf("read bandwidth, %d thread(s): %.2f GB/s\n", t, bw / 1e9);
        for (const Row& r : rows) {
          if (r.mapped_bandwidth <= 0 || !r.decode()) continue;
          const double gbs = r.weight_bytes_per_second();
          std::printf("read bandwidth of the mapped file, %d thread(s): %.2f GB/s (%s: %.1f %% of it)\n", r.threads,
                      r.mapped_bandwidth / 1e9, r.sample.test.c_str(), 100.0 * gbs / r.mapped_bandwidth);
        }
        if (rows.empty()) {
          std::printf("peak RSS: %.1f MiB\n", rss);
        } else {
          std::printf("KV cache: %s\n", kv_name);
          std::printf("%s\n", kernel_summary().c_str());
          std::printf("weights on 2 MiB pages: %.1f of %.1f MiB%s\n", static_cast<double>(huge_bytes) / 1048576.0,
                      static_cast<double>(file_bytes) / 1048576.0, o->no_huge_pages ? " (--no-huge-pages)" : "");
          std::printf("peak RSS: %.1f MiB (file %.1f + KV/state %.1f + 64 = %.1f MiB: %s)\n", rss,
                      static_cast<double>(file_bytes) / 1048576.0, static_cast<double>(state_bytes) / 1048576.0,
                      static_cast<double>(bound_bytes) / 1048576.0, rss_bytes <= bound_bytes ? "within" : "OVER");
        }
      }
      return 0;
    };
  });
}

const CommandRegistration kBenchRegistration("bench", setup_bench);

}  // namespace
}  // namespace kazeia::cli
