// Per-thread reusable float buffers for the forward pass's temporaries.
//
// A prefill allocates tens of MB of activations per layer; as fresh
// std::vectors they come from mmap every time (above glibc's threshold), so
// each call paid page faults and a zero fill for memory it overwrites
// anyway (~5% of a 512-token prefill). A ScratchFloats borrows a buffer
// from its thread's pool and gives it back on destruction: the pages stay
// mapped, and the contents are NOT initialised (use only for buffers that
// are fully written before they are read, or call zero()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace kazeia {

// Storage on 64-byte (cache-line) boundaries. The strips write 16 floats
// with one 64-byte store: at a misaligned address (a large std::vector's
// buffer sits 16 bytes past a line boundary) each such store spans two
// lines, and the non-temporal whole-line stores of large outputs
// (StripArgs::stream_y) need aligned rows at all. pp512 with aligned
// scratch alone: +0-7 %; with the streaming stores it enables: +5-10 %.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};

class ScratchFloats {
 public:
  explicit ScratchFloats(size_t n) : n_(n) {
    auto& pool = free_list();
    // The smallest pooled buffer that fits, else the largest (grown).
    size_t best = pool.size();
    for (size_t i = 0; i < pool.size(); ++i) {
      const bool fits = pool[i].size() >= n;
      if (best == pool.size()) {
        best = i;
        continue;
      }
      const bool best_fits = pool[best].size() >= n;
      if ((fits && (!best_fits || pool[i].size() < pool[best].size())) ||
          (!fits && !best_fits && pool[i].size() > pool[best].size()))
        best = i;
    }
    if (best < pool.size()) {
      buf_ = std::move(pool[best]);
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(best));
    }
    if (buf_.size() < n) buf_.resize(n);  // zero-fills only the growth, once
  }
  ~ScratchFloats() {
    auto& pool = free_list();
    if (pool.size() < kMaxPooled) pool.push_back(std::move(buf_));
  }
  ScratchFloats(const ScratchFloats&) = delete;
  ScratchFloats& operator=(const ScratchFloats&) = delete;

  float* data() { return buf_.data(); }
  const float* data() const { return buf_.data(); }
  size_t size() const { return n_; }
  float& operator[](size_t i) { return buf_[i]; }
  const float& operator[](size_t i) const { return buf_[i]; }
  float* begin() { return buf_.data(); }
  float* end() { return buf_.data() + n_; }
  void zero() { std::fill(begin(), end(), 0.0f); }

 private:
  static constexpr size_t kMaxPooled = 24;
  using Buffer = std::vector<float, CacheLineAllocator<float>>;
  static std::vector<Buffer>& free_list() {
    thread_local std::vector<Buffer> pool;
    return pool;
  }
  size_t n_;
  Buffer buf_;
};

}  // namespace kazeia
