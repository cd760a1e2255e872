#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace kazeia {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

#ifndef MADV_POPULATE_READ
constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14; older headers lack it
#endif

// Maps `size` bytes of `fd` read-only at an address that is a multiple of
// 2 MiB, as the file offset 0 is: a 2 MiB folio of the page cache can only be
// mapped whole where the virtual and the file address agree modulo 2 MiB.
void* map_aligned(int fd, size_t size) {
  const size_t slack = size >= MappedFile::kHugePageMinFileBytes ? kHugePage : 0;
  if (slack == 0) return mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  void* reserve = mmap(nullptr, size + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserve == MAP_FAILED) return mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  const auto base = reinterpret_cast<uintptr_t>(reserve);
  const uintptr_t aligned = (base + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  void* p = mmap(reinterpret_cast<void*>(aligned), size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    munmap(reserve, size + slack);
    return mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  }
  // Give back the reserve around the mapping.
  if (aligned > base) munmap(reserve, aligned - base);
  const uintptr_t end = aligned + size, reserve_end = base + size + slack;
  const uintptr_t end_page = (end + 4095) & ~uintptr_t{4095};
  if (reserve_end > end_page) munmap(reinterpret_cast<void*>(end_page), reserve_end - end_page);
  return p;
}

uint64_t parse_hex(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) break;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace

uint64_t smaps_pmd_mapped_bytes(std::string_view smaps, uintptr_t begin, uintptr_t end) {
  uint64_t total = 0;
  bool inside = false;
  size_t pos = 0;
  while (pos < smaps.size()) {
    size_t eol = smaps.find('\n', pos);
    if (eol == std::string_view::npos) eol = smaps.size();
    const std::string_view line = smaps.substr(pos, eol - pos);
    pos = eol + 1;
    const size_t dash = line.find('-');
    const size_t colon = line.find(':');
    // A mapping's header: "start-end perms offset dev inode path"; the
    // fields below it are "Name:   value kB".
    if (dash != std::string_view::npos && (colon == std::string_view::npos || dash < colon) && dash > 0) {
      const uint64_t lo = parse_hex(line.substr(0, dash));
      const uint64_t hi = parse_hex(line.substr(dash + 1));
      inside = lo >= begin && hi <= end && lo < hi;
      continue;
    }
    constexpr std::string_view kField = "FilePmdMapped:";
    if (inside && line.substr(0, kField.size()) == kField) {
      uint64_t kb = 0;
      for (char c : line.substr(kField.size()))
        if (c >= '0' && c <= '9') kb = kb * 10 + static_cast<uint64_t>(c - '0');
        else if (c != ' ' && c != '\t') break;
      total += kb * 1024;
    }
  }
  return total;
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)),
      device_(other.device_),
      inode_(other.inode_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    device_ = other.device_;
    inode_ = other.inode_;
  }
  return *this;
}

void MappedFile::release() {
  if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'" + path + "' is not a regular file");
  }
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(st.st_size);
  file.device_ = static_cast<uint64_t>(st.st_dev);
  file.inode_ = static_cast<uint64_t>(st.st_ino);
  if (file.size_ > 0) {
    void* p = map_aligned(fd, file.size_);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      file.size_ = 0;
      return IoError("cannot mmap '" + path + "': " + std::strerror(err));
    }
    file.data_ = static_cast<const uint8_t*>(p);
#ifdef MADV_HUGEPAGE
    // Before anything is read: pages that come from disk through this
    // mapping then arrive as 2 MiB folios (see populate()).
    if (file.size_ >= kHugePageMinFileBytes) madvise(p, file.size_, MADV_HUGEPAGE);
#endif
  }
  ::close(fd);  // the mapping keeps the file alive
  return file;
}

uint64_t MappedFile::huge_page_bytes() const {
  if (data_ == nullptr || size_ == 0) return 0;
  std::ifstream in("/proc/self/smaps");
  if (!in) return 0;
  std::ostringstream text;
  text << in.rdbuf();
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  return smaps_pmd_mapped_bytes(text.str(), begin, begin + size_ + 4095);
}

MappedFile::PopulateReport MappedFile::populate(bool recache_small_pages) {
  PopulateReport report;
  if (data_ == nullptr || size_ == 0) return report;
  auto* const begin = const_cast<uint8_t*>(data_);
  auto fault_in = [begin](size_t bytes) {
    if (madvise(begin, bytes, MADV_POPULATE_READ) == 0) return;
    // Kernels before 5.14: touch a byte of every page.
    volatile uint8_t sink = 0;
    for (size_t off = 0; off < bytes; off += 4096) sink = sink + begin[off];
  };
  fault_in(size_);
  report.huge_bytes = huge_page_bytes();
  const uint64_t extents = size_ / kHugePage;  // the most that can be on 2 MiB pages
  if (!recache_small_pages || size_ < kHugePageMinFileBytes || report.huge_bytes * 10 >= extents * kHugePage * 9)
    return report;
  // Reopen by path, but only the very file that is mapped.
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return report;
  struct stat st {};
  const bool same = fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_dev) == device_ &&
                    static_cast<uint64_t>(st.st_ino) == inode_ && static_cast<size_t>(st.st_size) == size_;
  // To reread a range: drop this process's page table entries, then the
  // (clean, now unmapped) pages from the page cache, and fault the range in
  // again through the mapping, which asks for 2 MiB folios. First on two
  // extents only: where the file system cannot give large folios (or the
  // pages cannot be dropped: tmpfs, another process mapping them), that
  // shows there, and the rest of the file is not read again for nothing.
  const size_t trial = 2 * kHugePage;  // < size_: at least 16 extents
  bool can = false;
  if (same && madvise(begin, trial, MADV_DONTNEED) == 0) {
    const uint64_t outside = huge_page_bytes();  // the trial range is unmapped now
    posix_fadvise(fd, 0, static_cast<off_t>(trial), POSIX_FADV_DONTNEED);
    fault_in(trial);
    const uint64_t after = huge_page_bytes();
    can = after >= outside + trial;
    report.huge_bytes = after;
  }
  if (can && madvise(begin, size_, MADV_DONTNEED) == 0) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    report.recached = true;
  }
  ::close(fd);
  if (!report.recached) return report;
  fault_in(size_);
  report.huge_bytes = huge_page_bytes();
  return report;
}

}  // namespace kazeia
