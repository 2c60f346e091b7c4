// psys: a program that spends its time inside system calls, so that the profiler's samples
// land in kernel mode.
//
//   psys [SECONDS [KIB]]   run for SECONDS (2 by default, tenths allowed: 0.3), then print
//                          "psys: done"
//
// Each round writes a file of KIB KiB (64 by default, 4 to 256) in 4 KiB writes, reads it
// back, and then sends 4 KiB through a pipe to itself and reads it out again. All of that is
// copying between user and kernel memory, walking the buffer cache and the file system:
// work done by the kernel on
// this process's behalf, with this process's user stack frozen below it. A sample taken
// then shows the kernel chain (sys_write, sys_read and what they call) on top of the user
// chain (the stub `write`, then fill_file or pipe_round, then main).
//
// At the end it prints how long it ran and how that time divided between its three phases,
// from the `time` CSR (rdtime), so that a profile's samples can be checked against it:
//
//   psys: done, 25 rounds
//   psys: 2043127 us: write 1817301 us, read 151912 us, pipe 71254 us
#include "lib/user.h"

namespace {

constexpr int CHUNK = 4096;
constexpr int MAX_KIB = 256;  // the largest file tern allows is 268 KiB
int file_size = 64 * 1024;
constexpr const char *FILE = "psys.tmp";

char buf[CHUNK];  // static: the user stack is only one page

}  // namespace

extern "C" {

__attribute__((noinline)) void fill_file() {
  int fd = open(FILE, O_CREATE | O_TRUNC | O_WRONLY);
  if (fd < 0) {
    fprintf(2, "psys: cannot create %s\n", FILE);
    exit(1);
  }
  for (int done = 0; done < file_size; done += CHUNK) {
    if (write(fd, buf, CHUNK) != CHUNK) {
      fprintf(2, "psys: write failed\n");
      exit(1);
    }
  }
  close(fd);
}

__attribute__((noinline)) void read_file() {
  int fd = open(FILE, O_RDONLY);
  if (fd < 0) {
    fprintf(2, "psys: cannot open %s\n", FILE);
    exit(1);
  }
  int total = 0, n;
  while ((n = read(fd, buf, CHUNK)) > 0) total += n;
  close(fd);
  if (total != file_size) {
    fprintf(2, "psys: read %d bytes back, wrote %d\n", total, file_size);
    exit(1);
  }
}

// A pipe holds at least 512 bytes, so 512-byte pieces never block the lone writer.
__attribute__((noinline)) void pipe_round(int rfd, int wfd) {
  constexpr int PIECE = 512;
  for (int off = 0; off < CHUNK; off += PIECE) {
    if (write(wfd, buf + off, PIECE) != PIECE || read(rfd, buf + off, PIECE) != PIECE) {
      fprintf(2, "psys: pipe round failed\n");
      exit(1);
    }
  }
}

}  // extern "C"

int main(int argc, char **argv) {
  int ticks = argc > 1 ? tenths(argv[1]) : 20;  // uptime counts 100 ms ticks
  int kib = argc > 2 ? atoi(argv[2]) : 64;
  if (argc > 3 || ticks < 0 || kib < 4 || kib > MAX_KIB || kib % 4 != 0)
    usage_exit("psys [SECONDS [KIB]]   (KIB: 4 to %d, a multiple of 4)\n", MAX_KIB);
  file_size = kib * 1024;
  for (int i = 0; i < CHUNK; i++) buf[i] = static_cast<char>('a' + i % 26);
  int fds[2];
  if (pipe(fds) < 0) {
    fprintf(2, "psys: pipe failed\n");
    return 1;
  }
  unsigned long start = rdtime();
  unsigned long spent[3] = {};  // time CSR ticks in fill_file, read_file, pipe_round
  int deadline = uptime() + ticks;
  int rounds = 0;
  while (uptime() < deadline) {
    unsigned long t0 = rdtime();
    fill_file();
    unsigned long t1 = rdtime();
    read_file();
    unsigned long t2 = rdtime();
    for (int i = 0; i < 8; i++) pipe_round(fds[0], fds[1]);
    unsigned long t3 = rdtime();
    spent[0] += t1 - t0;
    spent[1] += t2 - t1;
    spent[2] += t3 - t2;
    rounds++;
  }
  unlink(FILE);
  constexpr unsigned long TICKS_PER_US = TIME_TICKS_PER_MS / 1000;
  printf("psys: done, %d rounds\n", rounds);
  printf("psys: %lu us: write %lu us, read %lu us, pipe %lu us\n",
         (rdtime() - start) / TICKS_PER_US, spent[0] / TICKS_PER_US, spent[1] / TICKS_PER_US,
         spent[2] / TICKS_PER_US);
  return 0;
}
