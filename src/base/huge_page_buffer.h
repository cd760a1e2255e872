// Anonymous memory on 2 MiB pages where the kernel gives them (Linux
// MADV_HUGEPAGE; elsewhere plain pages), 2 MiB aligned, not initialised.
//
// For the buffers that stand in for streamed weights (the bandwidth probe,
// the kernel benchmarks): the weights themselves sit in 2 MiB folios
// (MappedFile::populate), and a plain stream over 4 KiB pages scattered
// over physical memory read 19-21 GB/s here against 23-27 over 2 MiB ones:
// a probe on small pages would rate the scatter, not the memory. And for
// what a decoded token reads besides the weights: the KV cache and the
// recurrent state (models/model_state.h, with their figures). Pages are
// committed on first touch, 2 MiB at a time where the OS gives huge pages.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kazeia {

class HugePageBuffer {
 public:
  explicit HugePageBuffer(size_t bytes);  // data() is null when mapping failed
  ~HugePageBuffer();
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return data_ != nullptr ? size_ : 0; }

 private:
  void* base_ = nullptr;
  size_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kazeia
