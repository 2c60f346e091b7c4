// bytewise: reads the same file twice, one byte per read() and then 4 KiB per read(), to
// show what a system call costs.
//
//   bytewise [KIB]     the file's size in KiB (8 by default, at most 256)
//
// It writes a file of KIB KiB, reads it back both ways, adds up its bytes each time (the two
// sums must agree), prints how long each way took, and removes the file:
//
//   bytewise: 8192 reads of 1 byte: sum 896856 in 467 ms
//   bytewise: 2 reads of 4096 bytes: sum 896856 in 1 ms
//
// The file is in the kernel's buffer cache after it is written, so neither way waits for
// the disk: the difference is all system calls. Each read() is a trap into the kernel, a
// trip through the dispatcher, sys_read, fileread, the inode lock and readi, and the trap
// back, and that costs the same whether it moves 1 byte or 4096. Under the profiler,
// read_bytewise's samples are nearly all kernel frames stacked on the user stub `read`; a C
// library's buffered input (fread, getc) exists to make the second way the one that runs.
#include "lib/user.h"

namespace {

constexpr int CHUNK = 4096;
constexpr int MAX_KIB = 256;  // the largest file tern allows is 268 KiB
constexpr const char *FILE = "bytewise.tmp";

char buf[CHUNK];  // static: the user stack is only one page

[[noreturn]] void fail(const char *what) {
  fprintf(2, "bytewise: %s\n", what);
  unlink(FILE);
  exit(1);
}

int open_file() {
  int fd = open(FILE, O_RDONLY);
  if (fd < 0) fail("cannot open the file it wrote");
  return fd;
}

}  // namespace

// C linkage keeps the names in a profile plain.
extern "C" {

__attribute__((noinline, noclone)) void write_file(int size) {
  int fd = open(FILE, O_CREATE | O_TRUNC | O_WRONLY);
  if (fd < 0) fail("cannot create bytewise.tmp");
  for (int i = 0; i < CHUNK; i++) buf[i] = static_cast<char>('a' + i % 26);
  for (int done = 0; done < size; done += CHUNK)
    if (write(fd, buf, CHUNK) != CHUNK) fail("write failed");
  close(fd);
}

// One system call per byte.
__attribute__((noinline, noclone)) unsigned long read_bytewise(int *calls) {
  int fd = open_file();
  unsigned long sum = 0;
  char c;
  while (read(fd, &c, 1) == 1) {
    sum += static_cast<unsigned char>(c);
    (*calls)++;
  }
  close(fd);
  return sum;
}

// One system call per 4 KiB.
__attribute__((noinline, noclone)) unsigned long read_buffered(int *calls) {
  int fd = open_file();
  unsigned long sum = 0;
  int n;
  while ((n = read(fd, buf, CHUNK)) > 0) {
    for (int i = 0; i < n; i++) sum += static_cast<unsigned char>(buf[i]);
    (*calls)++;
  }
  close(fd);
  return sum;
}

}  // extern "C"

int main(int argc, char **argv) {
  int kib = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2 || kib < 1 || kib > MAX_KIB)
    usage_exit("bytewise [KIB]   (1 <= KIB <= %d)\n", MAX_KIB);
  write_file(kib * 1024);

  int calls = 0;
  unsigned long start = now_ms();
  unsigned long sum = read_bytewise(&calls);
  printf("bytewise: %d reads of 1 byte: sum %lu in %lu ms\n", calls, sum, now_ms() - start);

  calls = 0;
  start = now_ms();
  sum = read_buffered(&calls);
  printf("bytewise: %d reads of %d bytes: sum %lu in %lu ms\n", calls, CHUNK, sum,
         now_ms() - start);

  unlink(FILE);
  return 0;
}
