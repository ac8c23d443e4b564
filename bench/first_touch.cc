// tt_first_touch: how fast this machine gives a process memory it has not
// touched yet — the cost under every ingest's sorter buffer (filled once)
// and output files (written once into the page cache).
//
//   tt_first_touch [--mib N] [--pause S] [--dir D]
//
// Prints MB/s of: writing one byte per 4 KiB page of fresh anonymous memory
// (4 KiB pages, then with MADV_HUGEPAGE), the same right after unmapping
// (the kernel hands back pages it just freed), the same after a pause of S
// seconds (a VM with free page reporting has returned them to its host by
// then), memset of memory already touched, and write(2) of N MiB to a new
// file in D (page cache pages, not flushed). On bare metal the first lines
// run at GB/s; on a VM that backs guest memory lazily they can be 20–50x
// slower than memset, and every fresh byte an ingest touches pays it.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// MB/s of faulting in `bytes` of a new mapping, one write per 4 KiB.
double TouchNew(size_t bytes, bool huge) {
  char* p = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  const double s = Seconds(start);
  munmap(p, bytes);
  return bytes / 1e6 / s;
}

double MemsetTouched(size_t bytes) {
  std::vector<char> v(bytes, 1);
  const auto start = std::chrono::steady_clock::now();
  std::memset(v.data(), 2, bytes);
  const double s = Seconds(start);
  return v[bytes / 2] == 2 ? bytes / 1e6 / s : 0;
}

double WriteNewFile(const std::string& dir, size_t bytes) {
  const std::string path = dir + "/tt_first_touch." + std::to_string(getpid());
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::vector<char> block(1 << 20, 'x');
  const auto start = std::chrono::steady_clock::now();
  for (size_t done = 0; done < bytes; done += block.size()) {
    if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
      std::perror("write");
      break;
    }
  }
  const double s = Seconds(start);
  close(fd);
  unlink(path.c_str());
  return bytes / 1e6 / s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 512;
  int pause = 5;
  std::string dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--pause") pause = std::atoi(argv[i + 1]);
    else if (flag == "--dir") dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: tt_first_touch [--mib N] [--pause S] [--dir D]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: tt_first_touch [--mib N] [--pause S] [--dir D]\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  std::printf("%zu MiB each; MB/s\n", mib);
  std::printf("fresh 4 KiB pages            %8.0f\n", TouchNew(bytes, false));
  std::printf("fresh huge pages             %8.0f\n", TouchNew(bytes, true));
  std::printf("huge pages just freed        %8.0f\n", TouchNew(bytes, true));
  std::this_thread::sleep_for(std::chrono::seconds(pause));
  std::printf("huge pages after %2d s pause  %8.0f\n", pause, TouchNew(bytes, true));
  std::printf("memset of touched memory     %8.0f\n", MemsetTouched(bytes));
  std::printf("write(2) to a new file       %8.0f\n", WriteNewFile(dir, bytes));
  return 0;
}
