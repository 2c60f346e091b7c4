// spcheck: the speed lab's own correctness checks (labs/speed/README.md). A faster kernel
// must still be a right one; these try what the lab's fixes touch, from many processes at
// once, in sizes and orders drawn from a seed.
//
//   spcheck pipes SEED   pairs of processes stream bytes through pipes in random chunk sizes,
//                        both sides often asleep (the pipe full, or empty), and every byte
//                        arrives in order; then several writers and readers share one pipe
//                        and no byte is lost or made up
//   spcheck locks SEED   processes read and stat one file while others create, write, read
//                        back and remove files of their own in the same directory: the inode
//                        and buffer locks are taken from every side at once
//   spcheck copy SEED    bytes copied between user memory and the kernel at every alignment
//                        and length, through a pipe and through a file, arrive unchanged
//
// Each prints a dot now and then as it goes, then `spcheck: NAME ok (seed S, N cases)`, or a
// line with `FAILED` and what went wrong, stops its other processes and exits 1. A lost
// wakeup shows as a check that never ends, and whose dots stop: the grader names it when
// nothing has come for a while.
#include "lib/user.h"

namespace {

constexpr int PIPE_MAX = 4032;  // kern/fs/pipe.cc: a page less the pipe's bookkeeping
constexpr int BIG = 3 * PIPE_MAX;
char wbuf[BIG + 16], rbuf[BIG + 16];
const char *check = "?";
unsigned long seed = 0;

// Progress: a dot on the console, a few times a second while a check runs.
void dot() { write(1, ".", 1); }

// This process's children that may still run. A check that fails stops them before it
// exits, so that no dot of theirs comes after the shell's next prompt.
constexpr int MAX_CHILDREN = 16;
int children[MAX_CHILDREN];
int nchildren = 0;

int spawn() {
  if (nchildren == MAX_CHILDREN) return -1;
  int pid = fork();
  if (pid == 0) nchildren = 0;  // the child's own list, empty
  if (pid > 0) children[nchildren++] = pid;
  return pid;
}

[[noreturn]] void stop_children_and_exit() {
  for (int k = 0; k < nchildren; k++) kill(children[k]);
  while (wait(nullptr) >= 0) {
  }
  write(1, "\n", 1);
  exit(1);
}

[[noreturn]] void failed(const char *what, long a = 0, long b = 0) {
  printf("\nspcheck: %s FAILED (seed %lu): %s (%ld, %ld)\n", check, seed, what, a, b);
  stop_children_and_exit();
}

// The byte at position i of stream k: every stream is different, and so is every position.
char stream_byte(int k, long i) { return static_cast<char>((i * 131 + k * 17 + (i >> 8)) & 0xff); }

void reap_all(int n) {
  for (int i = 0; i < n; i++) {
    int status = 0;
    if (wait(&status) < 0) failed("a child went missing");
    if (status != 0) stop_children_and_exit();  // the child said what went wrong
  }
  nchildren = 0;
}

// One writer and one reader per pipe, PAIRS pipes at once; each stream is BYTES long and goes
// in chunks of random size (up to three times the pipe's buffer), read in other random sizes.
int pipes_pairs(Rng &rng) {
  constexpr int PAIRS = 4;
  constexpr long BYTES = 60'000;
  for (int k = 0; k < PAIRS; k++) {
    int fds[2];
    if (pipe(fds) < 0) failed("pipe failed");
    unsigned long child_seed = rng.next() | 1;
    if (spawn() == 0) {  // the writer
      close(fds[0]);
      Rng r{child_seed};
      for (long at = 0; at < BYTES;) {
        int n = static_cast<int>(r.next() % BIG) + 1;
        if (n > BYTES - at) n = static_cast<int>(BYTES - at);
        for (int i = 0; i < n; i++) wbuf[i] = stream_byte(k, at + i);
        if (write(fds[1], wbuf, n) != n) failed("a write to a pipe came up short", k, at);
        at += n;
      }
      exit(0);
    }
    if (spawn() == 0) {  // the reader
      close(fds[1]);
      Rng r{child_seed ^ 0x5555};
      long at = 0;
      for (;;) {
        int want = static_cast<int>(r.next() % BIG) + 1;
        int n = read(fds[0], rbuf, want);
        if (n < 0) failed("a read of a pipe failed", k, at);
        if (n == 0) break;
        for (int i = 0; i < n; i++)
          if (rbuf[i] != stream_byte(k, at + i)) failed("a pipe changed a byte", k, at + i);
        at += n;
      }
      if (at != BYTES) failed("a pipe's stream ended early", k, at);
      exit(0);
    }
    close(fds[0]);
    close(fds[1]);
  }
  reap_all(2 * PAIRS);
  return PAIRS;
}

// WRITERS and READERS share one pipe; each writer writes its share in random chunks, each
// reader counts what it reads until end of file and sends the count back on another pipe.
int pipes_shared(Rng &rng) {
  constexpr int WRITERS = 3, READERS = 3;
  constexpr long EACH = 20'000;
  int data[2], counts[2];
  if (pipe(data) < 0 || pipe(counts) < 0) failed("pipe failed");
  for (int w = 0; w < WRITERS; w++) {
    unsigned long child_seed = rng.next() | 1;
    if (spawn() == 0) {
      close(data[0]);
      close(counts[0]);
      close(counts[1]);
      Rng r{child_seed};
      for (long at = 0; at < EACH;) {
        int n = static_cast<int>(r.next() % (2 * PIPE_MAX)) + 1;
        if (n > EACH - at) n = static_cast<int>(EACH - at);
        memset(wbuf, 'w', n);
        if (write(data[1], wbuf, n) != n) failed("a shared pipe refused a write", w, at);
        at += n;
      }
      exit(0);
    }
  }
  for (int r = 0; r < READERS; r++) {
    unsigned long child_seed = rng.next() | 1;
    if (spawn() == 0) {
      close(data[1]);
      close(counts[0]);
      Rng rr{child_seed};
      long got = 0;
      for (;;) {
        int n = read(data[0], rbuf, static_cast<int>(rr.next() % PIPE_MAX) + 1);
        if (n < 0) failed("a read of a shared pipe failed", r, got);
        if (n == 0) break;
        for (int i = 0; i < n; i++)
          if (rbuf[i] != 'w') failed("a shared pipe made up a byte", r, got + i);
        got += n;
      }
      if (write(counts[1], &got, sizeof got) != sizeof got) failed("cannot report a count");
      exit(0);
    }
  }
  close(data[0]);
  close(data[1]);
  close(counts[1]);
  reap_all(WRITERS + READERS);
  long total = 0, got = 0;
  while (read(counts[0], &got, sizeof got) == sizeof got) total += got;
  close(counts[0]);
  if (total != WRITERS * EACH) failed("bytes lost or made up in a shared pipe", total);
  return 1;
}

int check_pipes(Rng &rng) {
  int cases = 0;
  for (int round = 0; round < 5; round++) {
    cases += pipes_pairs(rng);
    dot();
    cases += pipes_shared(rng);
    dot();
  }
  return cases;
}

// Readers of one shared file (stat and read at random offsets) against processes that
// create, fill, read back and remove files of their own in the same directory.
int check_locks(Rng &rng) {
  constexpr int READERS = 3, WRITERS = 3, ROUNDS = 25;
  const char *shared = "spcheck.shared";
  int fd = open(shared, O_CREATE | O_RDWR | O_TRUNC);
  if (fd < 0) failed("cannot create the shared file");
  constexpr int SHARED_SIZE = 5000;
  for (int i = 0; i < SHARED_SIZE; i++) wbuf[i] = stream_byte(99, i);
  if (write(fd, wbuf, SHARED_SIZE) != SHARED_SIZE) failed("cannot write the shared file");
  close(fd);
  for (int k = 0; k < READERS; k++) {
    unsigned long child_seed = rng.next() | 1;
    if (spawn() == 0) {
      Rng r{child_seed};
      for (int i = 0; i < ROUNDS * 4; i++) {
        int f = open(shared, O_RDONLY);
        struct stat st;
        if (f < 0 || fstat(f, &st) < 0 || st.size != SHARED_SIZE)
          failed("the shared file went wrong", k, i);
        int n = read(f, rbuf, static_cast<int>(r.next() % SHARED_SIZE) + 1);
        if (n <= 0) failed("cannot read the shared file", k, i);
        for (int j = 0; j < n; j++)
          if (rbuf[j] != stream_byte(99, j)) failed("the shared file changed", k, j);
        close(f);
        if (i % 4 == 3) dot();
      }
      exit(0);
    }
  }
  for (int k = 0; k < WRITERS; k++) {
    unsigned long child_seed = rng.next() | 1;
    if (spawn() == 0) {
      Rng r{child_seed};
      char name[32];
      snprintf(name, sizeof name, "spcheck.%d", k);
      for (int i = 0; i < ROUNDS; i++) {
        int n = static_cast<int>(r.next() % 3000) + 1;
        for (int j = 0; j < n; j++) wbuf[j] = stream_byte(k + i, j);
        int f = open(name, O_CREATE | O_RDWR | O_TRUNC);
        if (f < 0 || write(f, wbuf, n) != n) failed("cannot write a file", k, i);
        close(f);
        f = open(name, O_RDONLY);
        if (f < 0 || read(f, rbuf, BIG) != n) failed("a file came back the wrong size", k, i);
        for (int j = 0; j < n; j++)
          if (rbuf[j] != stream_byte(k + i, j)) failed("a file came back changed", k, j);
        close(f);
        if (unlink(name) < 0) failed("cannot remove a file", k, i);
        dot();
      }
      exit(0);
    }
  }
  reap_all(READERS + WRITERS);
  if (unlink(shared) < 0) failed("cannot remove the shared file");
  return READERS * ROUNDS * 4 + WRITERS * ROUNDS;
}

// Copies at every alignment of source and destination, of random lengths, through a pipe and
// through a file: the kernel's copyin and copyout (and memmove under them).
int check_copy(Rng &rng) {
  constexpr int CASES = 400;
  int fds[2];
  if (pipe(fds) < 0) failed("pipe failed");
  const char *name = "spcheck.copy";
  for (int c = 0; c < CASES; c++) {
    int from = static_cast<int>(rng.next() % 16), to = static_cast<int>(rng.next() % 16);
    int n = static_cast<int>(rng.next() % (c % 4 == 0 ? 64 : PIPE_MAX)) + 1;
    for (int i = 0; i < BIG + 16; i++) wbuf[i] = static_cast<char>(rng.next());
    memset(rbuf, 0, sizeof rbuf);
    if (write(fds[1], wbuf + from, n) != n || read(fds[0], rbuf + to, n) != n)
      failed("a pipe copy came up short", c, n);
    for (int i = 0; i < n; i++)
      if (rbuf[to + i] != wbuf[from + i]) failed("a pipe copy changed a byte", c, i);
    for (int i = 0; i < to; i++)
      if (rbuf[i] != 0) failed("a pipe copy wrote before its destination", c, i);
    if (rbuf[to + n] != 0) failed("a pipe copy wrote past its destination", c, n);
    if (c % 8 == 0) {  // and through a file, at an offset within a block
      int f = open(name, O_CREATE | O_RDWR | O_TRUNC);
      int lead = static_cast<int>(rng.next() % 1024);
      if (f < 0 || write(f, wbuf, lead) != lead || write(f, wbuf + from, n) != n)
        failed("cannot write the copy file", c, n);
      close(f);
      f = open(name, O_RDONLY);
      memset(rbuf, 0, sizeof rbuf);
      if (f < 0 || read(f, rbuf, lead) != lead || read(f, rbuf + to, n) != n)
        failed("the copy file came back short", c, n);
      close(f);
      for (int i = 0; i < n; i++)
        if (rbuf[to + i] != wbuf[from + i]) failed("a file copy changed a byte", c, i);
    }
    if (c % 40 == 0) dot();
  }
  close(fds[0]);
  close(fds[1]);
  unlink(name);
  return CASES;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[2]) <= 0)
    usage_exit("spcheck pipes|locks|copy SEED (SEED a positive number)\n");
  seed = static_cast<unsigned long>(atoi(argv[2]));
  check = argv[1];
  Rng rng{seed};
  int cases;
  if (strcmp(check, "pipes") == 0) {
    cases = check_pipes(rng);
  } else if (strcmp(check, "locks") == 0) {
    cases = check_locks(rng);
  } else if (strcmp(check, "copy") == 0) {
    cases = check_copy(rng);
  } else {
    fprintf(2, "spcheck: no check %s: pipes, locks or copy\n", check);
    return 2;
  }
  printf("\nspcheck: %s ok (seed %lu, %d cases)\n", check, seed, cases);
  return 0;
}
