// FuzzInput: hands libFuzzer's bytes to readers that take a path, through
// one in-memory file (memfd) rewritten per input, so a fuzz run touches no
// disk and leaves nothing behind.
#ifndef TRACETABLE_TESTS_FUZZ_FUZZ_INPUT_H_
#define TRACETABLE_TESTS_FUZZ_FUZZ_INPUT_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace tracetable::fuzz {

// Writes `data` as the whole content of the process's fuzz file and returns
// its path.
inline const std::string& AsFile(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("tt_fuzz_input", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  return path;
}

}  // namespace tracetable::fuzz

#endif  // TRACETABLE_TESTS_FUZZ_FUZZ_INPUT_H_
