#include "base/huge_page_buffer.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kazeia {
namespace {

TEST(HugePageBuffer, AlignedWritableAndSized) {
  for (size_t bytes : {size_t{1}, size_t{4097}, (size_t{2} << 20) + 3, size_t{5} << 20}) {
    HugePageBuffer buf(bytes);
    ASSERT_NE(buf.data(), nullptr) << bytes;
    EXPECT_EQ(buf.size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % (size_t{2} << 20), 0u) << bytes;
    std::memset(buf.data(), 0xA5, bytes);  // every byte is ours to write
    EXPECT_EQ(buf.data()[0], 0xA5);
    EXPECT_EQ(buf.data()[bytes - 1], 0xA5);
  }
}

TEST(HugePageBuffer, EmptyAndImpossibleSizesGiveNoMemory) {
  HugePageBuffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  HugePageBuffer huge(SIZE_MAX - 10);  // cannot even add the alignment room
  EXPECT_EQ(huge.data(), nullptr);
  EXPECT_EQ(huge.size(), 0u);
}

}  // namespace
}  // namespace kazeia
