// Read-only memory-mapped file. The weights of a model stay in the page cache
// and are shared, never copied: tensors are views into this mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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

  // Hint the kernel about access patterns (best effort; errors ignored).
  void advise_sequential() const;
  void advise_willneed() const;

 private:
  void release();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace kazeia
