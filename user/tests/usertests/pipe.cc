// usertests: pipes. Big transfers, many writers, and the ends closing.
//
// A pipe is a bounded buffer in the kernel with two ends. A writer blocks while the buffer
// is full, a reader while it is empty; the data comes out in the order it went in, none
// lost and none repeated. When every write end is closed a reader gets the remaining data
// and then 0 (end of file); when every read end is closed a write fails with -1, since
// nobody could ever read what it would write. A descriptor inherited through fork or made
// by dup keeps its end open: the end closes with its last descriptor.
#include "usertests.h"

namespace ut {

// 300 KB through a pipe in writes and reads of random sizes: the same bytes arrive.
void test_pipebig() {
  constexpr long TOTAL = 300 * 1024;
  constexpr unsigned long SEED = 0xfeedbeef;
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    close(fds[0]);
    Rng rng{SEED};
    Rng sizes{SEED + 1};
    long sent = 0;
    while (sent < TOTAL) {
      int n = 1 + static_cast<int>(sizes.below(sizeof(scratch)));
      if (n > TOTAL - sent) n = static_cast<int>(TOTAL - sent);
      for (int i = 0; i < n; i++) scratch[i] = static_cast<char>(rng.next() >> 56);
      write_exact(fds[1], scratch, n, "pipe writer");
      sent += n;
    }
  });
  close(fds[1]);
  Rng rng{SEED};
  Rng sizes{SEED + 2};
  long received = 0;
  for (;;) {
    int n = read(fds[0], scratch2, 1 + static_cast<int>(sizes.below(sizeof(scratch2))));
    CHECK(n >= 0, "pipe read returned %d", n);
    if (n == 0) break;
    for (int i = 0; i < n; i++) {
      char want = static_cast<char>(rng.next() >> 56);
      CHECK(scratch2[i] == want, "byte %ld: got %d, sent %d", received + i, scratch2[i], want);
    }
    received += n;
    CHECK(received <= TOTAL, "read more bytes than were written");
  }
  CHECK(received == TOTAL, "received %ld of %ld bytes", received, TOTAL);
  close(fds[0]);
  expect_ok(pid, "pipe writer");
}

// Several writers into one pipe: every byte arrives exactly once. A write of more than
// one byte may be interleaved with other writers' when the pipe fills, so only the
// count of each writer's bytes is checked, along with a checksum of their sum.
void test_pipewriters() {
  constexpr int WRITERS = 6;
  constexpr int PER_WRITER = 20000;
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pids[WRITERS];
  for (int w = 0; w < WRITERS; w++) {
    pids[w] = spawn([&, w] {
      close(fds[0]);
      char chunk[50];
      memset(chunk, 'A' + w, sizeof(chunk));
      for (int sent = 0; sent < PER_WRITER; sent += sizeof(chunk)) {
        write_exact(fds[1], chunk, sizeof(chunk), "writer");
      }
    });
  }
  close(fds[1]);
  long counts[WRITERS] = {};
  for (;;) {
    int n = read(fds[0], scratch, 1000);
    CHECK(n >= 0, "read returned %d", n);
    if (n == 0) break;
    for (int i = 0; i < n; i++) {
      int w = scratch[i] - 'A';
      CHECK(w >= 0 && w < WRITERS, "a byte no writer wrote: %d", scratch[i]);
      counts[w]++;
    }
  }
  close(fds[0]);
  for (int w = 0; w < WRITERS; w++) {
    CHECK(counts[w] == PER_WRITER, "writer %d: %ld bytes arrived, %d sent", w, counts[w],
          PER_WRITER);
  }
  expect_all_ok(pids, WRITERS, "writer");
}

// Writes with no reader fail, including a writer already blocked when the reader leaves.
void test_pipebroken() {
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  close(fds[0]);
  CHECK(write(fds[1], "x", 1) == -1, "write to a pipe without readers did not fail");
  close(fds[1]);

  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    close(fds[0]);
    // More than the pipe holds: this blocks until the reader below closes its end.
    int r = write(fds[1], scratch, sizeof(scratch));
    CHECK(r == -1 || (r >= 0 && r < static_cast<int>(sizeof(scratch))),
          "a write whose reader went away returned %d", r);
    CHECK(write(fds[1], "y", 1) == -1, "a second write after the reader left did not fail");
  });
  close(fds[1]);
  read_exact(fds[0], scratch2, 100, "partial read");
  sleep(2);
  close(fds[0]);
  expect_ok(pid, "blocked writer");
}

// End of file only when the last write end is closed; ends survive dup and fork.
void test_pipeends() {
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  CHECK(fds[0] >= 0 && fds[1] >= 0 && fds[0] != fds[1], "pipe gave fds %d and %d", fds[0], fds[1]);
  // A pipe is one-way.
  CHECK(write(fds[0], "x", 1) == -1, "write to the read end did not fail");
  char c;
  int extra = dup(fds[1]);
  CHECK(extra >= 0, "dup failed");
  write_exact(fds[1], "ab", 2, "first end");
  close(fds[1]);
  write_exact(extra, "cd", 2, "dup'd end");
  close(extra);
  char buf[8];
  read_exact(fds[0], buf, 4, "pipe");
  CHECK(memcmp(buf, "abcd", 4) == 0, "pipe delivered the wrong bytes");
  CHECK(read(fds[0], &c, 1) == 0, "no end of file after the last writer closed");
  CHECK(read(fds[0], &c, 1) == 0, "end of file is not sticky");
  close(fds[0]);

  // A reader blocked on an empty pipe wakes up with 0 when the writer (a child) exits.
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    close(fds[0]);
    sleep(2);
    write(fds[1], "z", 1);
    // exit closes the write end
  });
  close(fds[1]);
  CHECK(read(fds[0], &c, 1) == 1 && c == 'z', "did not read the child's byte");
  CHECK(read(fds[0], &c, 1) == 0, "no end of file after the writer exited");
  close(fds[0]);
  expect_ok(pid, "writer");

  // Closed descriptors are refused.
  CHECK(read(fds[0], &c, 1) == -1, "read from a closed descriptor did not fail");
  CHECK(write(fds[1], &c, 1) == -1, "write to a closed descriptor did not fail");
  CHECK(close(fds[0]) == -1, "close of a closed descriptor did not fail");
}

// Pipes made and dropped many times do not use up memory or file-table slots.
void test_pipemany() {
  long before = free_pages();
  for (int i = 0; i < 300; i++) {
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe number %d failed", i);
    if (i % 3 == 0) write_exact(fds[1], "hello", 5, "pipe");
    close(fds[i % 2]);
    close(fds[1 - i % 2]);
  }
  long after = free_pages();
  CHECK(after == before, "free pages: %ld before, %ld after 300 pipes", before, after);
}

}  // namespace ut
