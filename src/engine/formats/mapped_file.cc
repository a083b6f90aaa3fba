#include "engine/formats/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace tf::engine {

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = path + ": " + std::strerror(err);
    return err == ENOENT ? NotFound(message) : Internal(message);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string message = path + ": " + std::strerror(errno);
    ::close(fd);
    return Internal(message);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      std::string message = path + ": mmap: " + std::strerror(errno);
      ::close(fd);
      return Internal(message);
    }
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file open
  return std::unique_ptr<MappedFile>(new MappedFile(path, data, size));
}

bool MappedFile::Contains(const void* begin, size_t bytes) const {
  const auto* p = static_cast<const uint8_t*>(begin);
  return data_ != nullptr && p >= data_ && bytes <= size_ &&
         p - data_ <= static_cast<ptrdiff_t>(size_ - bytes);
}

void MappedFile::DropPages(const void* begin, size_t bytes) const {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t first = (start + page - 1) / page * page, end = (start + bytes) / page * page;
  // The mapping is private and read-only, so its pages are the file's: dropping them loses
  // nothing.
  if (first < end) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tf::engine
