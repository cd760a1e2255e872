// Read-only memory-mapped file. The weights of a model stay in the page cache
// and are shared, never copied: tensors are views into this mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kazeia/status.h"

namespace kazeia {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  // Maps the whole file read-only. An empty file maps to size 0, data nullptr.
  static Result<MappedFile> open(const std::string& path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads the whole file into the mapping now, so that the first use does
  // not pay for it, and tries to have it mapped on 2 MiB pages.
  //
  // Why: a decoded token streams every weight once, and weights that sit
  // in 2 MiB folios (physically contiguous) streamed faster here than the
  // same file in 4 KiB folios scattered over physical memory: decode +2-9 %
  // on fresh copies of the 0.6-0.8B bench files. What mattered was the
  // folios, not the page-table entries: the same 2 MiB folios mapped
  // through 4 KiB entries streamed as fast as through 2 MiB ones.
  //
  // The kernel maps a file on 2 MiB pages only where its page cache holds it
  // in 2 MiB folios. The mapping asks for them (MADV_HUGEPAGE, set by open),
  // so pages read from disk from now on arrive that way; a file already
  // cached in small folios (a file just written or downloaded) keeps them.
  // With `recache_small_pages`, such a file is dropped from the page cache
  // (only pages no other process maps) and read again once: the cost is one
  // read of the file from disk, and later runs find it on 2 MiB pages.
  // This is tried on the first 4 MiB first: where the file system or the
  // kernel cannot (no large folios, tmpfs, pages mapped elsewhere), the
  // file stays on small pages and is not read again.
  struct PopulateReport {
    uint64_t huge_bytes = 0;  // of the mapping, on 2 MiB pages after populating
    bool recached = false;    // the small-folio page cache was dropped and read again
  };
  PopulateReport populate(bool recache_small_pages);

  // Bytes of this mapping currently mapped on 2 MiB pages (0 where the
  // system does not say: /proc/self/smaps, FilePmdMapped).
  uint64_t huge_page_bytes() const;

  // Files smaller than this are left on small pages (too few 2 MiB extents to matter).
  static constexpr size_t kHugePageMinFileBytes = size_t{32} << 20;

 private:
  void release();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
  uint64_t device_ = 0, inode_ = 0;  // to reopen the same file for recaching
};

// The FilePmdMapped bytes of the mappings in `smaps` (the text of
// /proc/<pid>/smaps) that lie inside [begin, end). Exposed for tests.
uint64_t smaps_pmd_mapped_bytes(std::string_view smaps, uintptr_t begin, uintptr_t end);

}  // namespace kazeia
