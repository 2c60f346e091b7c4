// labread: reads a file with reads of one size, and says how long it was and what it held.
//
//   labread FILE SIZE [LIMIT [print]]
//   labread -r SEED OPENS FILE [SAVE]
//
// Reads FILE SIZE bytes at a time (1 to 4096) and prints
//
//   labread: N bytes, fnv1a XXXXXXXX, R reads, T ticks
//
// where XXXXXXXX is the 32-bit FNV-1a checksum of the bytes, which a grader computes on the
// host in one line, and T how long the open and the reads took, in ticks of the `time` CSR
// (10 MHz; under QEMU's -icount shift=0 a tick is exactly 100 instructions, so T then
// measures the cost of the reads). Reading a generated file such as /proc/profile with different
// sizes must give the same line: a read that starts or ends in the middle of a sample must still
// get exactly the right bytes.
//
// LIMIT guards against a file that never ends (a read that ignores its offset returns the
// same bytes forever): after LIMIT bytes the program stops and prints
// `labread: longer than LIMIT bytes, T ticks` instead. With `print`, the bytes read are also copied
// to the console, on a line of their own before the summary (for looking at the start of a large
// file: `labread /proc/profile 512 512 print`).
//
// With -r, FILE is opened OPENS times in a row, and each opening is read with sizes drawn at
// random (from 1 to 4096, mostly small, from SEED: the same seed gives the same sizes). A
// reader such as `cat` reads until a read returns 0; this one then reads once more, a tenth
// to a fifth of a second later (sleep(2): two ticks of the uptime clock), to see whether
// the file grew after its end: for /proc/profile it must not, since one opening reads one
// document. One line per opening:
//
//   labread: open K: N bytes, fnv1a XXXXXXXX, R reads, E bytes after the end
//
// where the N bytes include the E. With SAVE, the last opening's bytes are also written to
// the file SAVE (created or truncated), for a grader to copy out: /proc/profile can be far
// too long for the console.
#include "lib/user.h"

namespace {

constexpr int MAX_SIZE = 4096;
char buf[MAX_SIZE];                     // static: the user stack is only one page
constexpr long MAX_SAVED = 256L << 10;  // under the largest file (268 KiB)
char saved[MAX_SAVED];                  // the last opening's bytes, for SAVE
long saved_length = 0;

// A decimal number of up to 9 digits, or -1.
long number(const char *s) {
  long n = 0;
  int digits = 0;
  for (; *s != '\0'; s++, digits++) {
    if (*s < '0' || *s > '9' || digits == 9) return -1;
    n = n * 10 + (*s - '0');
  }
  return digits > 0 ? n : -1;
}

[[noreturn]] void usage() {
  fprintf(2,
          "usage: labread FILE SIZE [LIMIT [print]]   (1 <= SIZE <= %d)\n"
          "       labread -r SEED OPENS FILE [SAVE]\n",
          MAX_SIZE);
  exit(2);
}

// Mostly small reads, which start and end inside samples: 1 to 16 bytes half the time, up
// to 512 a quarter of the time, up to 4096 otherwise.
// The same seed gives the same sizes.
int random_size(Rng &rng) {
  unsigned long r = rng.next();
  switch (r % 4) {
    case 0:
    case 1: return 1 + static_cast<int>((r >> 8) % 16);
    case 2: return 1 + static_cast<int>((r >> 8) % 512);
    default: return 1 + static_cast<int>((r >> 8) % MAX_SIZE);
  }
}

// One opening of -r. Returns false on an error (already reported).
bool read_once(const char *path, int k, Rng &rng, bool keep) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(2, "labread: cannot open %s\n", path);
    return false;
  }
  long total = 0, reads = 0, after = 0;
  unsigned hash = 2166136261u;
  int zeros = 0;  // reads that returned 0 so far
  while (zeros < 2) {
    int size = random_size(rng);
    int n = read(fd, buf, size);
    if (n < 0 || n > size) {
      printf("labread: open %d: a read of %d bytes returned %d after %ld bytes\n", k, size, n,
             total);
      close(fd);
      return false;
    }
    if (n == 0) {
      zeros++;
      if (zeros < 2) sleep(2);
      continue;
    }
    reads++;
    if (zeros > 0) after += n;
    if (keep) {
      if (total + n > MAX_SAVED) {
        printf("labread: open %d: longer than %ld bytes\n", k, MAX_SAVED);
        close(fd);
        return false;
      }
      memmove(saved + total, buf, n);
    }
    for (int i = 0; i < n; i++) hash = (hash ^ static_cast<unsigned char>(buf[i])) * 16777619u;
    total += n;
  }
  close(fd);
  printf("labread: open %d: %ld bytes, fnv1a %08x, %ld reads, %ld bytes after the end\n", k, total,
         hash, reads, after);
  if (keep) saved_length = total;
  return true;
}

int random_reads(int argc, char **argv) {
  long seed = number(argv[2]);
  long opens = number(argv[3]);
  if (seed < 0 || opens < 1) usage();
  Rng rng{static_cast<unsigned long>(seed) * 2654435761u + 1};
  const char *save = argc == 6 ? argv[5] : nullptr;
  for (int k = 1; k <= opens; k++)
    if (!read_once(argv[4], k, rng, save != nullptr && k == opens)) return 1;
  if (save != nullptr) {
    int fd = open(save, O_CREATE | O_TRUNC | O_WRONLY);
    if (fd < 0 || write(fd, saved, static_cast<int>(saved_length)) != saved_length) {
      fprintf(2, "labread: cannot write %s\n", save);
      return 1;
    }
    close(fd);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "-r") == 0) return random_reads(argc, argv);
  if (argc < 3 || argc > 5) usage();
  long size = number(argv[2]);
  long limit = argc >= 4 ? number(argv[3]) : 1L << 40;
  bool print = argc == 5;
  if (size < 1 || size > MAX_SIZE || limit < 0 || (print && strcmp(argv[4], "print") != 0)) usage();

  unsigned long start = rdtime();
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(2, "labread: cannot open %s\n", argv[1]);
    return 1;
  }
  long total = 0, reads = 0;
  unsigned hash = 2166136261u;
  bool longer = false;
  for (;;) {
    // Never ask for more than the limit leaves, so `print` shows exactly LIMIT bytes.
    long want = total + size > limit ? limit - total : size;
    if (want == 0) {
      longer = read(fd, buf, 1) > 0;
      break;
    }
    int n = read(fd, buf, static_cast<int>(want));
    if (n < 0) {
      printf("labread: read error after %ld bytes\n", total);
      return 1;
    }
    if (n == 0) break;
    if (n > want) {
      printf("labread: a read of %ld bytes returned %d\n", want, n);
      return 1;
    }
    reads++;
    if (print) write(1, buf, n);
    for (int i = 0; i < n; i++) hash = (hash ^ static_cast<unsigned char>(buf[i])) * 16777619u;
    total += n;
  }
  close(fd);
  unsigned long ticks = rdtime() - start;
  if (print) printf("\n");
  if (longer) {
    printf("labread: longer than %ld bytes, %lu ticks\n", limit, ticks);
    return 1;
  }
  printf("labread: %ld bytes, fnv1a %08x, %ld reads, %lu ticks\n", total, hash, reads, ticks);
  return 0;
}
