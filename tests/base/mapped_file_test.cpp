#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
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
  // Too small for 2 MiB pages: populating reads it in and changes nothing else.
  const MappedFile::PopulateReport report = f->populate(/*recache_small_pages=*/true);
  EXPECT_FALSE(report.recached);
  EXPECT_EQ(report.huge_bytes, 0u);
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
  const MappedFile::PopulateReport report = f->populate(true);  // no-op on an empty mapping
  EXPECT_EQ(report.huge_bytes, 0u);
  EXPECT_FALSE(report.recached);
  std::filesystem::remove(path);
}

// A file big enough for 2 MiB pages: the mapping starts on a 2 MiB boundary
// (as file offset 0 does), and dropping and rereading the page cache keeps
// every byte. Whether the kernel then maps it on 2 MiB pages depends on the
// kernel and the file system, so that is only reported.
TEST(MappedFile, PopulateOnHugePagesKeepsTheContent) {
  const size_t size = MappedFile::kHugePageMinFileBytes + 12345;  // not a whole number of pages
  std::string content(size, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    content[i] = static_cast<char>(x);
  }
  // Written 4 KiB at a time, as a download is: the page cache then tends to
  // hold it in small folios, which is the case populate() rereads.
  std::string path = temp_path("huge");
  {
    std::ofstream out(path, std::ios::binary);
    out.rdbuf()->pubsetbuf(nullptr, 0);
    for (size_t off = 0; off < size; off += 4096)
      out.write(content.data() + off, static_cast<std::streamsize>(std::min<size_t>(4096, size - off)));
  }
  // On disk, as a finished download is: pages still being written back
  // cannot be dropped from the page cache, and the reread would find them.
  {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(fsync(fd), 0);
    ::close(fd);
  }
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f->data()) % (size_t{2} << 20), 0u);
  const MappedFile::PopulateReport report = f->populate(/*recache_small_pages=*/true);
  EXPECT_LE(report.huge_bytes, size);
  EXPECT_EQ(f->huge_page_bytes(), report.huge_bytes);
  ASSERT_EQ(f->size(), size);
  EXPECT_EQ(std::memcmp(f->data(), content.data(), size), 0);
  std::printf("[ info ] %.1f of %.1f MiB on 2 MiB pages (recached: %s)\n",
              static_cast<double>(report.huge_bytes) / 1048576.0, static_cast<double>(size) / 1048576.0,
              report.recached ? "yes" : "no");
  // A second populate finds the same pages (nothing to reread if all are huge).
  const MappedFile::PopulateReport again = f->populate(true);
  EXPECT_GE(again.huge_bytes, report.huge_bytes);
  EXPECT_EQ(std::memcmp(f->data(), content.data(), size), 0);
  std::filesystem::remove(path);
}

// tmpfs pages are the file's only copy: they cannot be dropped and read
// again, so the 4 MiB trial shows no gain and the file is left as it is
// (not reread for nothing), its content intact.
TEST(MappedFile, PopulateLeavesAFileItCannotRecacheAlone) {
  const std::string path = "/dev/shm/kazeia-mapped-" + std::to_string(getpid());
  const size_t size = MappedFile::kHugePageMinFileBytes + 4096;
  {
    std::ofstream out(path, std::ios::binary);
    if (!out) GTEST_SKIP() << "no writable /dev/shm (tmpfs) here";
    std::string chunk(4096, '\0');
    for (size_t off = 0; off < size; off += chunk.size()) {
      for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>((off + i) * 31 + 7);
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
  }
  Result<MappedFile> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const MappedFile::PopulateReport report = f->populate(true);
  EXPECT_FALSE(report.recached);
  for (size_t off = 0; off < size; off += 4093)
    ASSERT_EQ(f->data()[off], static_cast<uint8_t>(off * 31 + 7)) << off;
  std::filesystem::remove(path);
}

TEST(MappedFile, SmapsPmdMappedCountsOnlyMappingsInTheRange) {
  const std::string smaps =
      "00400000-00600000 r-xp 00000000 fe:00 1 /bin/x\n"
      "FilePmdMapped:      2048 kB\n"
      "7f0000000000-7f0000600000 r--s 00000000 fe:00 2 /m.gguf\n"
      "Rss:                6144 kB\n"
      "FilePmdMapped:      4096 kB\n"
      "7f0000600000-7f0000800000 r--s 00600000 fe:00 2 /m.gguf\n"
      "FilePmdMapped:      2048 kB\n"
      "7f0000800000-7f0000a00000 rw-p 00000000 00:00 0\n"
      "AnonHugePages:      2048 kB\n"
      "FilePmdMapped:         0 kB\n"
      "VmFlags: rd sh mr mw me ms hg\n";
  EXPECT_EQ(smaps_pmd_mapped_bytes(smaps, 0x7f0000000000, 0x7f0000800000), uint64_t{6144} * 1024);
  EXPECT_EQ(smaps_pmd_mapped_bytes(smaps, 0x7f0000000000, 0x7f0000600000), uint64_t{4096} * 1024);
  EXPECT_EQ(smaps_pmd_mapped_bytes(smaps, 0x7f0000000000, 0x7f00005fffff), 0u);  // mapping not inside
  EXPECT_EQ(smaps_pmd_mapped_bytes(smaps, 0x400000, 0x600000), uint64_t{2048} * 1024);
  EXPECT_EQ(smaps_pmd_mapped_bytes("", 0, ~uintptr_t{0}), 0u);
  EXPECT_EQ(smaps_pmd_mapped_bytes("garbage-line\nFilePmdMapped: 12 kB\n", 0, ~uintptr_t{0}), 0u);
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
