#include "base/huge_page_buffer.h"

#include <sys/mman.h>

namespace kazeia {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}

HugePageBuffer::HugePageBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0 || bytes > SIZE_MAX - kHugePage) return;
  mapped_ = bytes + kHugePage;  // room to start on a 2 MiB boundary
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = p;
  const uintptr_t aligned = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  data_ = reinterpret_cast<uint8_t*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(data_, bytes, MADV_HUGEPAGE);  // before the first touch
#endif
}

HugePageBuffer::~HugePageBuffer() {
  if (base_ != nullptr) munmap(base_, mapped_);
}

}  // namespace kazeia
