#include "engine/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tf::engine
