#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/test_data.h"

namespace kazeia {
namespace {

// A fresh path in the scratch directory, unique per process and call.
std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  return testing::scratch_dir() + "/" + stem + "-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
}

std::string write_file(const std::string& stem, const std::string& content) {
  std::string path = temp_path(stem);
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

TEST(MappedFile, ContentMatches) {
  std::string content;
  for (int i = 0; i < 10000; ++i) content += static_cast<char>(i * 7 + 3);  // crosses pages
  std::string path = write_file("content", content);
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->path(), path);
  ASSERT_EQ(f->size(), content.size());
  ASSERT_NE(f->data(), nullptr);
  EXPECT_EQ(std::memcmp(f->data(), content.data(), content.size()), 0);
  f->advise_sequential();  // hints only: must not disturb the content
  f->advise_willneed();
  EXPECT_EQ(std::memcmp(f->data(), content.data(), content.size()), 0);
  std::filesystem::remove(path);
}

TEST(MappedFile, MappingOutlivesUnlink) {
  std::string path = write_file("unlinked", "hello mapping");
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  std::filesystem::remove(path);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->data()), f->size()), "hello mapping");
}

TEST(MappedFile, EmptyFile) {
  std::string path = write_file("empty", "");
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->size(), 0u);
  EXPECT_EQ(f->data(), nullptr);
  f->advise_willneed();  // no-op on an empty mapping
  std::filesystem::remove(path);
}

TEST(MappedFile, MissingFileNamesThePath) {
  std::string path = temp_path("does-not-exist");
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kIo);
  EXPECT_NE(f.status().message().find(path), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("No such file"), std::string::npos) << f.status().message();
}

TEST(MappedFile, DirectoryIsRejected) {
  std::string dir = testing::scratch_dir();
  Result<MappedFile> f = MappedFile::open(dir);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find(dir), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("not a regular file"), std::string::npos);
}

TEST(MappedFile, MoveTransfersOwnership) {
  std::string path = write_file("move", "abcdef");
  Result<MappedFile> r = MappedFile::open(path);
  ASSERT_TRUE(r.ok());
  MappedFile a = std::move(r).value();
  const uint8_t* data = a.data();
  MappedFile b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 6u);
  EXPECT_EQ(b.path(), path);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.size(), 0u);

  MappedFile c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(std::memcmp(c.data(), "abcdef", 6), 0);
  c = std::move(c);  // self-move keeps the mapping
  EXPECT_EQ(c.data(), data);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kazeia
