// usertests: processes. fork, exit, wait, kill, and what happens to orphans and zombies.
//
// The process table has NPROC slots. A slot is taken by fork and given back only when the
// process has exited *and* its parent has collected the exit status with wait; until then
// the process is a zombie. A process whose parent exits first is an orphan: the kernel
// hands it to init, whose only job besides running the shell is to wait for such
// processes. So the tests below check the life cycle from both ends: that the table fills
// up (fork returns -1 instead of overrunning it), and that every way of ending a process
// gives its slot back, or the table would fill up for good after a few rounds.
//
// kill only marks a process; the process notices the mark the next time it is about to
// return to user space, or, if it sleeps, when the kernel wakes it for the purpose. Every
// kind of sleep a process can be in must be interruptible this way, or a killed process
// could stay stuck for ever: the tests kill processes that are running, sleeping in
// sleep(), and blocked in a pipe's read and write.
#include "usertests.h"

namespace ut {

// exit(status) must reach the parent's wait unchanged, for any int.
void test_exitwait() {
  constexpr int STATUSES[] = {0, 1, 42, 255, 256, -7, 123456, -2147483647};
  for (int want : STATUSES) {
    int pid = spawn([want] { exit(want); });
    int status = 12345;
    int got = wait(&status);
    CHECK(got == pid, "wait returned %d, expected %d", got, pid);
    CHECK(status == want, "exit(%d) arrived as %d", want, status);
  }
  // A null status pointer means "don't tell me".
  int pid = spawn([] { exit(3); });
  CHECK(wait(nullptr) == pid, "wait(0) did not return the child");
  // Nothing left to wait for.
  int status = 777;
  CHECK(wait(&status) == -1, "wait with no children did not return -1");
  CHECK(status == 777, "wait with no children wrote a status");
  // main returning is an exit with main's value (user/lib/start.S).
  pid = fork();
  CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    char *argv[] = {const_cast<char *>("usertests"), const_cast<char *>("--probe"), nullptr};
    exec("/usertests", argv);
    exit(SURVIVED_STATUS);
  }
  status = reap(pid);
  CHECK(status == 2, "main of a program exec'd with 2 arguments returned %d", status);
}

// fork until the table is full: fork must then fail with -1 (and nothing else may break),
// and work again as soon as the zombies are collected.
void test_forkfull() {
  int n = 0;
  for (;;) {
    int pid = fork();
    if (pid < 0) break;
    if (pid == 0) exit(0);  // becomes a zombie: the slot stays taken until wait
    n++;
    CHECK(n <= NPROC, "fork succeeded %d times: more processes than NPROC", n);
  }
  // init, the shell, the runner and this test hold four slots, perhaps a few more.
  CHECK(n >= NPROC - 10, "fork failed after only %d children", n);
  int reaped = reap_all();
  CHECK(reaped == n, "forked %d children but reaped %d", n, reaped);
  // The table has room again. Fill it a second time to be sure the slots came back.
  int again = 0;
  for (;;) {
    int pid = fork();
    if (pid < 0) break;
    if (pid == 0) exit(0);
    again++;
  }
  reap_all();
  // Fewer the second time would mean slots were lost. (More is possible: an orphan of an
  // earlier test may have ended in between.)
  CHECK(again >= n, "the table took %d children the first time and %d the second", n, again);
}

// Several processes forking and reaping at full speed, on every hart at once.
void test_forkstorm() {
  constexpr int WORKERS = 4;
  constexpr int ROUNDS = 150;
  int pids[WORKERS];
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = spawn([] {
      for (int i = 0; i < ROUNDS; i++) {
        int pid = fork();
        if (pid < 0) continue;  // the table may be momentarily full: that is allowed
        if (pid == 0) exit(i & 0x7f);
        int status = -1;
        CHECK(wait(&status) == pid, "wait did not return the child");
        CHECK(status == (i & 0x7f), "child status %d, expected %d", status, i & 0x7f);
      }
    });
  }
  expect_all_ok(pids, WORKERS, "fork worker");
}

// Orphans go to init, which reaps them. Done many more times than NPROC: if orphans were
// not reaped their slots would run out, and if they were given to us we would see them.
// Half the grandchildren still run when their parent exits: each waits for the end of file
// on `hold`, whose write end only this process keeps, and gets it once the parent has been
// reaped. The other half have exited before their parent does (zombie orphans): the parent
// waits for the end of file on `done`, which comes as the grandchild's exit closes its
// files, then gives that exit a millisecond to finish. That is many times what it takes, but
// a bound, not a promise: a grandchild whose hart the host holds up longer is handed to init
// while it is still exiting, and init must reap it all the same. Pipes, not sleep(), order
// the processes, so a round waits for no clock tick.
void test_reparent() {
  constexpr int ROUNDS = 3 * NPROC;
  constexpr unsigned long LET_FINISH = TIME_TICKS_PER_MS;  // 1 ms
  for (int i = 0; i < ROUNDS; i++) {
    int hold[2], done[2];
    CHECK(pipe(hold) == 0, "round %d: pipe failed", i);
    CHECK(pipe(done) == 0, "round %d: pipe failed", i);
    int pid = spawn([&] {
      close(hold[1]);
      int grandchild = fork();
      if (grandchild < 0) exit(1);
      char c;
      if (grandchild == 0) {
        close(done[0]);
        if (i % 2 == 0) read(hold[0], &c, 1);  // outlives its parent
        exit(0);
      }
      close(done[1]);
      if (i % 2 == 1) {  // exits after its grandchild
        read(done[0], &c, 1);
        for (unsigned long start = rdtime(); rdtime() - start < LET_FINISH;) {
        }
      }
      exit(0);
    });
    close(hold[0]);
    close(done[0]);
    close(done[1]);
    int status = reap(pid);
    close(hold[1]);  // the grandchild that waits on it may end now
    CHECK(status == 0, "round %d: the middle process could not fork (status %d)", i, status);
    // The grandchild is not ours: we have no child left to wait for.
    CHECK(wait(nullptr) == -1, "round %d: an orphan was given to its grandparent", i);
  }
}

// xv6's own reparent test, in its shape: a child that forks a grandchild and exits at once,
// the grandchild exiting at once too, round after round while the master waits for each
// child. Every grandchild is an orphan that only init's wait() frees, so the test checks
// that orphans are reaped as fast as they are made: a fork fails if zombies fill the table.
void test_orphanstorm() {
  constexpr int ROUNDS = 500;
  for (int i = 0; i < ROUNDS; i++) {
    int pid = fork();
    CHECK(pid >= 0, "round %d: fork returned -1", i);
    if (pid == 0) {
      int grandchild = fork();
      if (grandchild == 0) exit(0);
      exit(grandchild < 0 ? 1 : 0);
    }
    int status = reap(pid);
    CHECK(status == 0, "round %d: the child's fork of a grandchild returned -1", i);
  }
}

// kill of a process that is running user code: it must die with status -1.
void test_killrunning() {
  int pid = spawn([] {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
  });
  sleep(2);
  CHECK(kill(pid) == 0, "kill(%d) failed", pid);
  int status = reap(pid);
  CHECK(status == -1, "killed spinning child exited with %d", status);
}

// kill of a process in sleep(): it must wake up and die, long before the sleep would end.
void test_killsleeping() {
  int pid = spawn([] {
    sleep(1000 * TICKS_PER_SECOND);
    exit(SURVIVED_STATUS);
  });
  sleep(3);
  int start = uptime();
  CHECK(kill(pid) == 0, "kill(%d) failed", pid);
  int status = reap(pid);
  int took = uptime() - start;
  CHECK(status == -1, "killed sleeper exited with %d", status);
  CHECK(took < 5 * TICKS_PER_SECOND, "killed sleeper took %d ticks to die", took);
}

// kill of a process blocked in wait() for a child that is not about to exit.
void test_killwaiting() {
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    int grandchild = fork();
    if (grandchild == 0) {
      sleep(1000 * TICKS_PER_SECOND);
      exit(0);
    }
    write(fds[1], &grandchild, sizeof(grandchild));
    wait(nullptr);
    exit(SURVIVED_STATUS);
  });
  int grandchild = 0;
  read_exact(fds[0], &grandchild, sizeof(grandchild), "grandchild's pid");
  close(fds[0]);
  close(fds[1]);
  sleep(2);
  int start = uptime();
  CHECK(kill(pid) == 0, "kill(%d) failed", pid);
  int status = reap(pid);
  CHECK(status == -1, "killed waiter exited with %d", status);
  CHECK(uptime() - start < 5 * TICKS_PER_SECOND, "killed waiter took too long to die");
  // Its child, now an orphan, would sleep for 1000 s before init could reap it.
  CHECK(grandchild > 0 && kill(grandchild) == 0, "the orphan %d is gone already", grandchild);
}

// kill of a process blocked in a pipe: reading an empty pipe, and writing a full one.
void test_killpipe() {
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  // The reader: the pipe is empty and we keep the write end open, so it blocks for ever.
  int reader = spawn([&] {
    char c;
    read(fds[0], &c, 1);
    exit(SURVIVED_STATUS);
  });
  // The writer: nobody reads, so it blocks when the pipe is full.
  int other[2];
  CHECK(pipe(other) == 0, "pipe failed");
  int writer = spawn([&] {
    for (;;) {
      if (write(other[1], scratch, sizeof(scratch)) < 0) exit(SURVIVED_STATUS);
    }
  });
  sleep(3);
  CHECK(kill(reader) == 0, "kill(reader) failed");
  CHECK(kill(writer) == 0, "kill(writer) failed");
  int start = uptime();
  int statuses[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    int status = 0;
    int got = wait(&status);
    CHECK(got == reader || got == writer, "wait returned %d", got);
    statuses[got == reader ? 0 : 1] = status;
  }
  CHECK(uptime() - start < 5 * TICKS_PER_SECOND, "killed pipe users took too long to die");
  CHECK(statuses[0] == -1, "killed reader exited with %d", statuses[0]);
  CHECK(statuses[1] == -1, "killed writer exited with %d", statuses[1]);
  close(fds[0]);
  close(fds[1]);
  close(other[0]);
  close(other[1]);
}

// Kills that land at every stage of a process's life: while it is being forked, while it
// execs, while it makes pipes and files and grows its heap. Each victim must end, with
// status -1 or its own, and nothing may be left behind (the runner checks the pages).
void test_killstorm() {
  constexpr int VICTIMS = 60;
  constexpr unsigned long RUN_FOR = 5 * TIME_TICKS_PER_MS;
  char *argv[] = {const_cast<char *>("usertests"), const_cast<char *>("--probe"),
                  const_cast<char *>("xyz"), nullptr};
  for (int i = 0; i < VICTIMS; i++) {
    int ready[2];
    CHECK(pipe(ready) == 0, "victim %d: pipe failed", i);
    int pid = spawn([&, i] {
      write(ready[1], "r", 1);  // started
      switch (i % 4) {
        case 0: exec("/usertests", argv); exit(SURVIVED_STATUS);
        case 1:
          for (;;) {
            int fds[2];
            if (pipe(fds) == 0) {
              write(fds[1], "abc", 3);
              close(fds[0]);
              close(fds[1]);
            }
          }
        case 2:
          for (;;) {
            int child = fork();
            if (child == 0) exit(0);
            if (child > 0) wait(nullptr);
          }
        default:
          for (;;) {
            char *p = sbrk(64 * PAGE);
            if (!sbrk_failed(p)) {
              p[0] = 1;
              sbrk(-static_cast<int>(64 * PAGE));
            }
          }
      }
    });
    // Kill at once, after a system call of our own, or once the victim has started and run
    // its loop for a while: on another hart for RUN_FOR, or on this one until it sleeps or
    // its time slice ends.
    char c;
    if (i % 3 == 1) sleep(0);
    if (i % 3 == 2) {
      read(ready[0], &c, 1);
      for (unsigned long start = rdtime(); rdtime() - start < RUN_FOR;) {
      }
    }
    kill(pid);
    int status = reap(pid);
    close(ready[0]);
    close(ready[1]);
    int probe = 3 + 100 * 3;  // what the exec'd probe exits with
    CHECK(status == -1 || (i % 4 == 0 && status == probe),
          "victim %d (kind %d) ended with status %d", i, i % 4, status);
  }
}

// A process may kill itself; it dies on its way back to user space.
void test_killself() {
  int pid = spawn([] {
    kill(getpid());
    // The kill takes effect at the latest when the call returns to user space, so this
    // loop must never finish.
    for (int i = 0; i < 100; i++) getpid();
    exit(SURVIVED_STATUS);
  });
  int status = reap(pid);
  CHECK(status == -1, "a process that killed itself exited with %d", status);
}

// kill of pids that name nothing fails; once a zombie is reaped its pid names nothing.
void test_killbad() {
  CHECK(kill(-1) == -1, "kill(-1) did not fail");
  CHECK(kill(0) == -1, "kill(0) did not fail");
  CHECK(kill(1000000) == -1, "kill(1000000) did not fail");
  int pid = spawn([] { exit(5); });
  sleep(2);  // the child is now most likely a zombie; its slot is still taken
  int status = reap(pid);
  CHECK(status == 5, "zombie exited with %d, expected 5", status);
  CHECK(kill(pid) == -1, "kill of reaped pid %d succeeded: the zombie was not freed", pid);
}

// Every fork gets a pid no live process has, and the child gets its own.
void test_pids() {
  int me = getpid();
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    int mine = getpid();
    write(fds[1], &mine, sizeof(mine));
  });
  int reported = 0;
  read_exact(fds[0], &reported, sizeof(reported), "pid pipe");
  CHECK(reported == pid, "child says its pid is %d, fork said %d", reported, pid);
  CHECK(pid != me, "child has its parent's pid");
  expect_ok(pid, "pid child");
  close(fds[0]);
  close(fds[1]);
}

// A forked child has a copy of the parent's memory, not a share of it.
void test_forkcopy() {
  char *heap = sbrk(3 * PAGE);
  CHECK(!sbrk_failed(heap), "sbrk failed");
  for (unsigned long i = 0; i < 3 * PAGE; i++) heap[i] = static_cast<char>(i * 7);
  scratch[100] = 'p';
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    for (unsigned long i = 0; i < 3 * PAGE; i++) {
      CHECK(heap[i] == static_cast<char>(i * 7), "child's heap differs at %lu", i);
    }
    CHECK(scratch[100] == 'p', "child's data differs");
    heap[5] = 'c';
    scratch[100] = 'c';
    char c;
    read(fds[0], &c, 1);  // wait until the parent has written its own copy
    CHECK(heap[6] == static_cast<char>(6 * 7), "the parent's store reached the child");
    CHECK(scratch[101] == 0, "the parent's store reached the child's data");
  });
  heap[6] = 'q';
  scratch[101] = 'q';
  write(fds[1], "x", 1);
  expect_ok(pid, "copy child");
  CHECK(heap[5] == static_cast<char>(5 * 7), "the child's store reached the parent");
  CHECK(scratch[100] == 'p', "the child's store reached the parent's data");
  close(fds[0]);
  close(fds[1]);
}

}  // namespace ut
