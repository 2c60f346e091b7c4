// What a tern user program can call: the system calls and a small C library.
//
// A user program runs alone in its address space with no libc underneath it. Everything it
// needs beyond the bare system calls is built here, in user/lib, and linked into every
// program: formatted printing, string helpers, a heap allocator over sbrk, and `_start`, the
// entry point that calls main and passes its result to exit.
//
// The system calls keep xv6's C signatures and plain (unmangled) names, so a program written
// for xv6-riscv compiles here unchanged. Each one is a three-instruction stub in usys.S that
// puts the call's number in a7 and executes `ecall`; the numbers come from the one shared list,
// kern/abi/syscalls.def. Every call returns -1 on failure.
#pragma once

#include "abi/fcntl.h"
#include "abi/param.h"
#include "abi/procfs.h"
#include "abi/stat.h"

// xv6 programs use these short names for unsigned types.
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long uint64;

extern "C" {

// --- System calls (user/lib/usys.S) ------------------------------------------------------
int fork();
[[noreturn]] void exit(int status);
int wait(int *status);
int pipe(int *fds);
int write(int fd, const void *buf, int n);
int read(int fd, void *buf, int n);
int close(int fd);
int kill(int pid);
int exec(const char *path, char **argv);
int open(const char *path, int flags);
int mknod(const char *path, short major, short minor);
int unlink(const char *path);
int fstat(int fd, struct stat *st);
int link(const char *oldpath, const char *newpath);
int mkdir(const char *path);
int chdir(const char *path);
int dup(int fd);
int getpid();
char *sbrk(int n);
int sleep(int ticks);
int uptime();
int halt();
// The sampling profiler: see kern/abi/profile.h for the commands.
int profile(int pid, int cmd, int arg);
// The value of the `KEY: value` line of the file at path, into out (user/lib/procvalue.cc).
// False if the file or the key is missing.
bool proc_value(const char *path, const char *key, char *out, int cap);
// The same for /proc/profstat.
bool profstat_value(const char *key, char *out, int cap);
// The kernel's count of free physical pages (/proc/meminfo, "free pages: N"), or -1.
long free_pages();

// --- Time --------------------------------------------------------------------------------
// The `time` counter (no system call: user mode may read it), 10 MHz on QEMU's virt machine.
inline constexpr unsigned long TIME_TICKS_PER_MS = 10'000;
inline unsigned long rdtime() {
  unsigned long t;
  asm volatile("rdtime %0" : "=r"(t));
  return t;
}
inline unsigned long now_ms() { return rdtime() / TIME_TICKS_PER_MS; }

// --- Pseudo-random numbers ----------------------------------------------------------------
// xorshift64*: fast, repeatable for a seed (tests print theirs), not for secrets. The state
// must not be 0.
struct Rng {
  unsigned long state;
  unsigned long next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dUL;
  }
  unsigned below(unsigned n) { return static_cast<unsigned>((next() >> 33) % n); }
  bool one_in(unsigned n) { return below(n) == 0; }
};

// --- Busy work ----------------------------------------------------------------------------
// One step of xorshift64 (Marsaglia's shifts 13, 7, 17): a few instructions the compiler
// cannot fold away, for programs that must keep a processor busy in a known function, and
// for cheap pseudo-random data. Always inlined, so that a profile charges the time to the
// function that does the work, not to a helper. x must not be 0.
[[gnu::always_inline]] inline unsigned long xorshift(unsigned long x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

// `rounds` steps of xorshift from x.
[[gnu::always_inline]] inline unsigned long spin_rounds(unsigned long x, int rounds) {
  for (int i = 0; i < rounds; i++) x = xorshift(x);
  return x;
}

// Where spin_until leaves each value, so that its work is not optimised away.
extern volatile unsigned long spin_sink;

// Spins `rounds` steps at a time until the uptime clock reaches `deadline` (in 100 ms
// ticks). Inlined into the caller like spin_rounds: the samples name the caller.
[[gnu::always_inline]] inline unsigned long spin_until(int deadline, int rounds, unsigned long x) {
  while (uptime() < deadline) {
    x = spin_rounds(x, rounds);
    spin_sink = x;
  }
  return x;
}

// --- Formatted output (user/lib/printf.cc) ------------------------------------------------
// Conversions: %d %i %u %x %ld %lu %lx %p %s %c %%, with an optional '-' (left-justify),
// '0' (zero-pad) and a field width, e.g. "%08x" or "%-14s".
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// What a program does with a command line it cannot take: prints "usage: " and the
// formatted text on fd 2, and exits with status 1.
[[noreturn]] void usage_exit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Into buf: at most cap - 1 characters and a terminating NUL. Returns the length the whole
// text has, which is cap or more when it was cut.
int snprintf(char *buf, int cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// --- Strings and memory (user/lib/string.cc, user/lib/ulib.cc) ----------------------------
char *strcpy(char *dst, const char *src);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, uint n);
uint strlen(const char *s);
char *strchr(const char *s, int c);
void *memset(void *dst, int c, unsigned long n);
void *memcpy(void *dst, const void *src, unsigned long n);
void *memmove(void *dst, const void *src, unsigned long n);
int memcmp(const void *a, const void *b, unsigned long n);
int atoi(const char *s);
// A duration in seconds with at most one decimal, as programs take it ("2", "0.3", "1.5"), in
// tenths of a second, the uptime clock's ticks; -1 for anything else ("", ".5", "1.25", "-1",
// more than six digits before the point).
int tenths(const char *s);
// Reads one line (including its '\n', if it fits) into buf, at most max-1 bytes, and
// NUL-terminates it. An empty result means end of file.
char *gets(char *buf, int max);
// Like fstat, but by path: opens the file read-only, asks fstat, closes it.
int stat(const char *path, struct stat *st);

// --- Heap (user/lib/malloc.cc) ------------------------------------------------------------
// Returns 0 when the kernel refuses to grow the heap.
void *malloc(uint n);
void free(void *p);

}  // extern "C"
