// SPDX-License-Identifier: Apache-2.0
// A program whose CPU time is known by function, for the CPU profile tests (built with frame
// pointers, as the tests expect the callers of the leaf to be walked):
//   ingero_profile_burn cpu SECONDS       the main thread computes in ingero_burn_cpu
//   ingero_profile_burn syscalls SECONDS  the main thread sleeps; a second thread reads /dev/zero
//                                         in ingero_burn_syscalls (its time is in the kernel)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

extern "C" __attribute__((noinline)) uint64_t ingero_burn_cpu(double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  uint64_t x = 1;
  for (;;) {
    // Many iterations between clock reads, so that the samples land here, not in the clock.
    for (int i = 0; i < 2'000'000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (Clock::now() >= end) return x;
  }
}

extern "C" __attribute__((noinline)) int ingero_burn_syscalls(double seconds) {
  const int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  static char buffer[1 << 16];
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end)
    if (read(fd, buffer, sizeof buffer) != static_cast<ssize_t>(sizeof buffer)) return 1;
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const double seconds = atof(argv[2]);
  if (!strcmp(argv[1], "cpu")) return ingero_burn_cpu(seconds) == 0 ? 1 : 0;
  if (!strcmp(argv[1], "syscalls")) {
    int result = 1;
    std::thread reader([&] { result = ingero_burn_syscalls(seconds); });
    reader.join();
    return result;
  }
  return 2;
}
