// tforkfull: a fork that finds the process table full of zombie orphans waits for init.
//
//   tforkfull
//
// A zombie whose parent has exited is init's, and only init's wait() frees its slot. A fork
// that finds the table full while such zombies exist must wait for init to reap one and then
// succeed, not return -1 (kern/proc/proc.cc, allocproc_for_fork); a fork that finds the table
// full of processes that are not about to go must still fail at once. On one hart
// (CPUS=1) the program arranges the first case exactly. The scheduler runs processes in
// table order, going on from the slot of the one that stopped, and a fork takes the
// lowest free slot, so:
//
//   1. it forks fillers until fork fails, the table full, then kills the first ORPHANS + 2
//      it made: their slots, now the only free ones, are the lowest of those it filled;
//   2. a child takes the first of them, forks the ORPHANS grandchildren into the next ones,
//      each blocked reading the gate pipe, and exits: the grandchildren are init's now;
//   3. the starter takes the child's slot, below the orphans, and the forker the last free
//      one, above them. The table is full again, and a fork fails at once: none of the
//      orphans is a zombie yet;
//   4. the starter writes a byte for each orphan to the gate and one to the forker, and
//      blocks. The scheduler goes on from the starter's slot: the orphans read their byte
//      and exit, zombies of init, and the forker runs next, before the scan comes round to
//      init. Its fork finds the table full of the orphans' zombies.
//
// The forker exits 0 if its fork returned a child (which exits at once). Prints one
// `tforkfull: FAIL ...` line per wrong answer, then `tforkfull: ok` or `tforkfull: failed`.
// With more than one hart another one runs init at once, and the program proves nothing; on
// one hart, a time slice that ran out in the middle of step 4 could let init run first, which
// is why tests/qemu/test_orphans.py runs it under -icount, where the slices end at the same
// instructions every time.
#include "abi/param.h"
#include "lib/user.h"

namespace {

constexpr int ORPHANS = 4;

int failures = 0;
int children[NPROC], nchildren = 0;  // the fillers in the order fork made them, then the
                                     // starter and the forker

void fail(const char *what) {
  printf("tforkfull: FAIL %s\n", what);
  failures++;
}

// Give up: every filler still alive is killed (they wait on a pipe nobody writes), then the
// children are reaped. Orphans already made stay blocked on the gate until the machine stops.
[[noreturn]] void give_up(const char *why) {
  printf("tforkfull: %s\n", why);
  for (int i = 0; i < nchildren; i++) kill(children[i]);
  while (wait(nullptr) >= 0) {
  }
  exit(1);
}

// Read one byte from fd and return; a closed pipe or a kill ends the wait too.
void await(int fd) {
  char c;
  read(fd, &c, 1);
}

struct Pipe {
  int fds[2];
  Pipe() {
    if (pipe(fds) < 0) {
      printf("tforkfull: pipe failed\n");
      exit(1);
    }
  }
};

}  // namespace

int main() {
  Pipe hold, gate, go, start;  // hold is never written: whoever reads it waits to be killed

  // 1. The table full of fillers, then the lowest ORPHANS + 2 of their slots free again.
  for (;;) {
    if (nchildren == NPROC) give_up("FAIL fork never failed");
    int pid = fork();
    if (pid < 0) break;
    if (pid == 0) {
      await(hold.fds[0]);
      exit(0);
    }
    children[nchildren++] = pid;
  }
  if (nchildren < ORPHANS + 2) give_up("too few processes could be made");
  for (int i = 0; i < ORPHANS + 2; i++) kill(children[i]);
  for (int i = 0; i < ORPHANS + 2; i++) wait(nullptr);

  // 2. The orphans, blocked on the gate.
  int parent = fork();
  if (parent == 0) {
    for (int i = 0; i < ORPHANS; i++) {
      int pid = fork();
      if (pid < 0) exit(1);
      if (pid == 0) {
        await(gate.fds[0]);
        exit(0);
      }
    }
    exit(0);
  }
  int status = -1;
  if (parent < 0 || wait(&status) != parent || status != 0)
    give_up("FAIL could not make the orphans");

  // 3. The starter below the orphans, the forker above them.
  int starter = fork();
  if (starter == 0) {
    await(start.fds[0]);
    char bytes[ORPHANS + 1] = {};
    write(gate.fds[1], bytes, ORPHANS);
    write(go.fds[1], bytes, 1);
    await(hold.fds[0]);
    exit(0);
  }
  int forker = fork();
  if (forker == 0) {
    await(go.fds[0]);
    int pid = fork();
    if (pid == 0) exit(0);
    if (pid < 0) exit(1);
    wait(nullptr);
    exit(0);
  }
  if (starter > 0) children[nchildren++] = starter;  // from here on give_up() kills them too
  if (forker > 0) children[nchildren++] = forker;
  if (starter < 0 || forker < 0) give_up("FAIL no room left for the starter and the forker");
  int extra = fork();  // with no zombie to wait for, it returns -1 at once
  if (extra == 0) exit(0);
  if (extra > 0) fail("fork succeeded with the table full");

  // 4. Go, and wait for the forker's verdict.
  write(start.fds[1], "s", 1);
  if (wait(&status) != forker) fail("another child exited before the forker");
  if (status != 0) fail("fork returned -1 with the table full of zombie orphans");

  // Everyone else goes: the starter and the fillers are killed (they are blocked on hold).
  for (int i = ORPHANS + 2; i < nchildren; i++) kill(children[i]);
  while (wait(nullptr) >= 0) {
  }
  if (failures == 0)
    printf("tforkfull: ok\n");
  else
    printf("tforkfull: failed\n");
  exit(failures == 0 ? 0 : 1);
}
