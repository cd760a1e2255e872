// Monotonic time for benchmarks, timeouts and spin budgets.
//
// CLOCK_MONOTONIC via std::chrono::steady_clock: never jumps with wall-clock
// changes, and on Linux it is a vDSO call (~20 ns), cheap enough to poll from
// a spin loop every few dozen iterations.
#pragma once

#include <chrono>
#include <cstdint>

namespace kazeia {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t now_us() { return now_ns() / 1000; }

// Measures elapsed time from construction or the last reset().
class Stopwatch {
 public:
  Stopwatch() : start_ns_(now_ns()) {}
  void reset() { start_ns_ = now_ns(); }

  int64_t elapsed_ns() const { return now_ns() - start_ns_; }
  double elapsed_us() const { return static_cast<double>(elapsed_ns()) * 1e-3; }
  double elapsed_ms() const { return static_cast<double>(elapsed_ns()) * 1e-6; }
  double elapsed_s() const { return static_cast<double>(elapsed_ns()) * 1e-9; }

  // Elapsed time, then restarts: handy for timing consecutive phases.
  int64_t lap_ns() {
    int64_t now = now_ns();
    int64_t lap = now - start_ns_;
    start_ns_ = now;
    return lap;
  }

 private:
  int64_t start_ns_;
};

}  // namespace kazeia
