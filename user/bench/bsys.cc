// bsys: system-call and profiler micro-benchmarks, counted in guest instructions.
//
//   bsys null N              N getpid calls
//   bsys fork N              N rounds of fork, exit in the child, wait in the parent
//   bsys exec N              N rounds of fork, exec of `bsys nop`, wait
//   bsys pingpong N          N one-byte round trips between two processes over two pipes
//   bsys pipe BYTES          BYTES through a pipe from a child to its parent, 4 KiB at a time
//   bsys fwrite BYTES        create a file of BYTES in 4 KiB writes (and delete it afterwards);
//                            also prints the instructions the harts spent idle meanwhile
//   bsys fread BYTES N       read a file of BYTES, already in the buffer cache, N times
//   bsys prof FRAMES UNITS HZ   UNITS units of work FRAMES user frames deep, profiled at HZ
//                               samples a second (HZ 0: not profiled)
//   bsys iprof FRAMES UNITS N   the same work, profiled on the instruction clock: a sample
//                               every N instructions (profile(2)'s PROF_CLOCK)
//   bsys wprof TICKS HZ      sleep TICKS ticks (100 ms each) profiled at HZ: wait samples
//   bsys ksys ROUNDS HZ      ROUNDS pipe round trips within one process (time spent in the
//                            kernel, so samples carry kernel frames), profiled at HZ (or 0)
//   bsys fill N [SECONDS [all]]   profile this process at the highest rate until the profile
//                            holds N samples (or is full), and keep them there; start no
//                            earlier than SECONDS after boot; `all`: profile every process,
//                            so that the sleeping ones give wait samples (see bench_fill)
//   bsys readtime FILE PASSES [SIZE]   read FILE (meant for /proc/profile) to its end PASSES
//                            times, in reads of SIZE bytes (1 to 4096, 4096 by default)
//   bsys run PROG [ARGS...]  one whole run of the program PROG, from fork to wait, after a
//                            first run, not counted, that brings its blocks and those of the
//                            files it reads into the buffer cache (labs/speed's workloads)
//   bsys nop                 do nothing (the program `bsys exec` runs)
//
// Each benchmark prints one line, `bsys: NAME key value key value ...`, with raw counts only:
// the guest instructions the measured part took (`insns`), and what was done in them. The host
// (tools/tern/bench/run.py) does the division. The counts come from the `instret` counter,
// which under QEMU's `-icount shift=0` is the virtual time in nanoseconds: one per instruction
// executed, plus whatever time the hart spent idle. (The `time` counter says the same in 100 ns
// ticks; instret has the resolution of one instruction.) Without -icount these counts mean
// nothing.
//
// A count is the same on every run only if the run itself is. Three things would make it vary,
// and each is kept out of the measured part:
//
//   * Where the timer interrupts fall. A timer interrupt (the 100 ms tick, the end of a 10 ms
//     time slice, a profiling sample) costs a few hundred instructions, and what it costs can
//     depend on what it interrupts. Where it falls depends on where the measurement starts on
//     the timer's grid, and a command starts whenever the host happened to type it. So each
//     benchmark first settles (settle() below): it sleeps one tick, which brings it just past
//     a tick of the 100 ms grid; spins until `time` is a fixed number of units past that tick
//     (the kernel's ticks fall on whole multiples of 100 ms of `time`, so the tick's own unit
//     is known); pads itself with no-ops to a fixed nanosecond within the next 100 ns unit;
//     and then makes the kernel reprogram the timer from there, by a round trip with a helper
//     process. From then on the hart's timeline depends on the guest alone. Profiling is
//     switched on after that, so the sampler's grid starts at a fixed point too. The spin is
//     needed because QEMU places each timer deadline at the nanosecond within its 100 ns unit
//     at which it was programmed, not on the unit's boundary, and that nanosecond comes from
//     whatever ran before the command: the tick's interrupt, and the wake-up after it, land
//     anywhere in a window of 100 ns. Padded from the wake-up alone, the count started one
//     unit later on some boots than on others, and every later tick, and every sleep that
//     ends on one, came 100 instructions sooner. Without -icount the host's timer decides
//     when the hart wakes, and nothing repeats exactly: settle() tries three ticks, then goes
//     on from where it woke.
//   * The disk. While a process waits for the disk the hart is idle, and QEMU (sleep=off)
//     moves virtual time on to the next timer deadline at once; how many such jumps a wait
//     takes depends on the host's disk. Only `fwrite` waits for the disk inside its
//     measurement (every write commits log transactions), and its virtual time varies for
//     that reason; it also reports the idle part of it (/proc/cpustat), and the rest, the
//     work, repeats exactly: the kernel's scheduler handles a finished request's interrupt
//     at the same point whenever the host finished it. `fread` reads a file small enough to
//     stay in the buffer cache and warms it first; `exec` runs this same small program,
//     whose blocks stay cached too.
//   * The console. Nothing is printed while a measurement runs.
//
// What remains is the kernel's own history: a copy in the kernel takes a couple of instructions
// more or less depending on whether the source page lies below the destination page, so
// figures that copy pages (fork, exec) can move by a few instructions a round between runs in
// one boot. The same sequence of commands after a fresh boot gives the same counts.
//
// The profiler benchmarks build their call chains exactly (see `on_fresh_chain` below) so that
// a sample of `prof FRAMES ...` holds FRAMES user frames, up to the kernel's limit of 32 per
// sample, and they report what the samples really held, read back from /proc/profile.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

constexpr int CHUNK = 4096;
constexpr const char *FILE = "bsys.tmp";
constexpr const char *SELF = "/bsys";

char buf[CHUNK];  // static: the user stack is only one page

[[noreturn]] void fail(const char *what) {
  fprintf(2, "bsys: %s\n", what);
  exit(1);
}

// Guest instructions so far (see the essay above).
unsigned long rdinstret() {
  unsigned long n;
  asm volatile("rdinstret %0" : "=r"(n));
  return n;
}

// A measurement: construct it right after settle(), call insns() at the end.
class Stopwatch {
 public:
  Stopwatch() : m_start(rdinstret()) {}
  unsigned long insns() const { return rdinstret() - m_start; }

 private:
  unsigned long m_start;
};

// The instructions all harts have spent idle so far, from /proc/cpustat ("hart H idle N" a
// line). While a process waits for the disk its hart is idle, and under -icount with
// sleep=off QEMU fills that with jumps of virtual time whose number depends on the host's
// disk; the count less the idle part is the work alone. That holds with one hart (the bench
// runs -smp 1): with more, another hart's idle stretch from before the first read could end,
// and count, after it. The file is opened before the measurement, one descriptor a read
// (each read renders the file afresh from its offset 0): opening it afterwards could wait
// for the disk itself, after the writes have pushed its directory's blocks out of the
// buffer cache, and that wait would count as idle.
class IdleCounter {
 public:
  IdleCounter() {
    for (int &fd : m_fds)
      if ((fd = open("/proc/cpustat", O_RDONLY)) < 0) fail("cannot open /proc/cpustat");
  }
  ~IdleCounter() {
    for (int fd : m_fds) close(fd);
  }
  IdleCounter(const IdleCounter &) = delete;
  IdleCounter &operator=(const IdleCounter &) = delete;

  // The first call reads through the first descriptor, the second through the second.
  unsigned long read_next() {
    if (m_used == 2) fail("IdleCounter read more than twice");
    static char text[512];
    int n = read(m_fds[m_used++], text, sizeof(text) - 1);
    if (n <= 0) fail("cannot read /proc/cpustat");
    text[n] = '\0';
    unsigned long total = 0;
    for (char *s = text; (s = strchr(s, 'e')) != nullptr; s++) {  // each "idle N"
      if (s - text < 3 || strncmp(s - 3, "idle ", 5) != 0) continue;
      unsigned long v = 0;
      for (s += 2; *s >= '0' && *s <= '9'; s++) v = v * 10 + static_cast<unsigned long>(*s - '0');
      total += v;
    }
    return total;
  }

 private:
  int m_fds[2];
  int m_used = 0;
};

void reap(int pid) {
  int status = 0;
  if (wait(&status) != pid || status != 0) fail("a child failed");
}

// A pipe pair, closed when it goes out of scope.
class Pipe {
 public:
  Pipe() {
    if (pipe(m_fds) < 0) fail("pipe failed");
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe &) = delete;
  Pipe &operator=(const Pipe &) = delete;

  int rd() const { return m_fds[0]; }
  int wr() const { return m_fds[1]; }
  void close_read() {
    if (m_fds[0] >= 0) close(m_fds[0]);
    m_fds[0] = -1;
  }
  void close_write() {
    if (m_fds[1] >= 0) close(m_fds[1]);
    m_fds[1] = -1;
  }

 private:
  int m_fds[2];
};

}  // namespace

// Pads with no-ops until the instruction count is at a fixed remainder modulo 100: it reads the
// count, and jumps into a run of 100 two-byte no-ops so as to execute (100 - count % 100) of
// them.
extern "C" void bsys_phase_align();
asm(R"(
  .text
  .globl bsys_phase_align
  .type bsys_phase_align, @function
bsys_phase_align:
  rdinstret t0
  li t1, 100
  remu t0, t0, t1
  sub t0, t1, t0
  slli t0, t0, 1
  la t2, 1f
  sub t2, t2, t0
  jr t2
  .rept 100
  c.nop
  .endr
1:
  ret
  .size bsys_phase_align, . - bsys_phase_align
)");

namespace {

// The 100 ms tick in units of `time`: the kernel's ticks fall on its multiples
// (kern/trap/timer.cc).
constexpr unsigned long TICK_TIME = 100 * TIME_TICKS_PER_MS;
// How far past a tick settle() stops: longer than waking up from sleep() takes under -icount
// (about 65 units), much shorter than a time slice (10 ms).
constexpr unsigned long SETTLE_TIME = 1000;
// How many ticks settle() tries before it goes on from wherever it woke. Under -icount the
// first does. Without it the host's timer decides when the hart wakes, often later than
// SETTLE_TIME, and no count repeats exactly there anyway: the wall-clock benchmarks
// (`bsys fill`, `bsys readtime`) must not wait for a wake-up that may never come in time.
constexpr int SETTLE_TRIES = 3;

// Put this process at a fixed point of the hart's timeline (see the essay above): SETTLE_TIME
// past a tick, at a fixed nanosecond, with the timer reprogrammed from there. The reprogramming
// happens when the scheduler switches to the helper and back, each switch starting a time slice.
// Under -icount instret and time count the same virtual nanoseconds (time in units of 100), so
// padding instret to a multiple of 100 pads to the start of a unit of time.
void settle() {
  Pipe there, back;
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    there.close_write();
    back.close_read();
    char c;
    if (read(there.rd(), &c, 1) != 1 || write(back.wr(), &c, 1) != 1) exit(1);
    exit(0);
  }
  unsigned long tick = 0;
  for (int tries = 0; tries < SETTLE_TRIES; tries++) {
    sleep(1);
    tick = rdtime() / TICK_TIME * TICK_TIME;   // the tick that woke this process
    if (rdtime() < tick + SETTLE_TIME) break;  // else something else ran first, or
  }                                            // the host woke the hart late: again
  while (rdtime() < tick + SETTLE_TIME) {
  }
  bsys_phase_align();
  char c = 's';
  if (write(there.wr(), &c, 1) != 1 || read(back.rd(), &c, 1) != 1) fail("settle failed");
  reap(pid);
}

int parse(const char *s, const char *what) {
  int n = atoi(s);
  if (n <= 0) {
    fprintf(2, "bsys: %s must be a positive number, not %s\n", what, s);
    exit(1);
  }
  return n;
}

// --- System calls ----------------------------------------------------------------------------

void bench_null(int n) {
  settle();
  Stopwatch w;
  for (int i = 0; i < n; i++) getpid();
  printf("bsys: null calls %d insns %lu\n", n, w.insns());
}

void bench_fork(int n) {
  settle();
  Stopwatch w;
  for (int i = 0; i < n; i++) {
    int pid = fork();
    if (pid < 0) fail("fork failed");
    if (pid == 0) exit(0);
    reap(pid);
  }
  printf("bsys: fork rounds %d insns %lu\n", n, w.insns());
}

void exec_once() {
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    const char *argv[] = {"bsys", "nop", nullptr};
    exec(SELF, const_cast<char **>(argv));
    fail("exec /bsys failed");
  }
  reap(pid);
}

void bench_exec(int n) {
  exec_once();  // brings the program's blocks into the buffer cache
  settle();
  Stopwatch w;
  for (int i = 0; i < n; i++) exec_once();
  unsigned long insns = w.insns();
  struct stat st;
  if (stat(SELF, &st) < 0) fail("cannot stat /bsys");
  printf("bsys: exec rounds %d insns %lu size %lu\n", n, insns, st.size);
}

// Fork, exec argv[0] with argv, wait: the child's exit status (127 if it could not exec).
int spawn(char **argv) {
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    exec(argv[0], argv);
    fprintf(2, "bsys: cannot exec %s\n", argv[0]);
    exit(127);
  }
  int status = 0;
  if (wait(&status) != pid) fail("wait failed");
  return status;
}

// Both runs start settled, because the first leaves the kernel's state (its free pages and their
// order, its caches) to the second. Started wherever the command was typed, the first run met the
// timer at different points on each boot, and its processes interleaved differently: about one
// fresh boot in ten then counted the second run of usertests -q 57 instructions apart.
void bench_run(char **argv) {
  settle();
  int status = spawn(argv);  // the first run warms the buffer cache
  if (status != 0) {
    printf("bsys: run insns 0 status %d\n", status);
    return;
  }
  settle();
  Stopwatch w;
  status = spawn(argv);
  unsigned long insns = w.insns();
  printf("bsys: run insns %lu status %d\n", insns, status);
}

void bench_pingpong(int n) {
  Pipe there, back;
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    there.close_write();  // or the read below would never see the end of the pipe
    back.close_read();
    char c;
    while (read(there.rd(), &c, 1) == 1)
      if (write(back.wr(), &c, 1) != 1) exit(1);
    exit(0);
  }
  there.close_read();
  back.close_write();
  char c = 'x';
  settle();
  Stopwatch w;
  for (int i = 0; i < n; i++)
    if (write(there.wr(), &c, 1) != 1 || read(back.rd(), &c, 1) != 1) fail("round trip failed");
  unsigned long insns = w.insns();
  there.close_write();
  reap(pid);
  printf("bsys: pingpong rounds %d insns %lu\n", n, insns);
}

// The child waits for a start byte, so that the fork is not part of the measurement.
void bench_pipe(int bytes) {
  Pipe data, go;
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    data.close_read();
    char c;
    if (read(go.rd(), &c, 1) != 1) exit(1);
    for (int left = bytes; left > 0; left -= CHUNK) {
      int n = left < CHUNK ? left : CHUNK;
      if (write(data.wr(), buf, n) != n) exit(1);
    }
    exit(0);
  }
  data.close_write();
  settle();
  Stopwatch w;
  if (write(go.wr(), "g", 1) != 1) fail("cannot start the writer");
  int got = 0, n;
  while ((n = read(data.rd(), buf, CHUNK)) > 0) got += n;
  unsigned long insns = w.insns();
  reap(pid);
  if (got != bytes) fail("the pipe lost bytes");
  printf("bsys: pipe bytes %d insns %lu\n", bytes, insns);
}

void write_file(int bytes) {
  int fd = open(FILE, O_CREATE | O_WRONLY);
  if (fd < 0) fail("cannot create bsys.tmp");
  for (int left = bytes; left > 0; left -= CHUNK) {
    int n = left < CHUNK ? left : CHUNK;
    if (write(fd, buf, n) != n) fail("file write failed");
  }
  close(fd);
}

void read_file(int bytes) {
  int fd = open(FILE, O_RDONLY);
  if (fd < 0) fail("cannot open bsys.tmp");
  int got = 0, n;
  while ((n = read(fd, buf, CHUNK)) > 0) got += n;
  close(fd);
  if (got != bytes) fail("file read came back short");
}

void bench_fwrite(int bytes) {
  unlink(FILE);
  IdleCounter idle_count;
  settle();
  unsigned long idle = idle_count.read_next();
  Stopwatch w;
  write_file(bytes);
  unsigned long insns = w.insns();
  idle = idle_count.read_next() - idle;
  unlink(FILE);
  printf("bsys: fwrite bytes %d insns %lu idle %lu\n", bytes, insns, idle);
}

void bench_fread(int bytes, int rounds) {
  unlink(FILE);
  write_file(bytes);
  read_file(bytes);  // every block is now in the buffer cache
  settle();
  Stopwatch w;
  for (int i = 0; i < rounds; i++) read_file(bytes);
  unsigned long insns = w.insns();
  unlink(FILE);
  printf("bsys: fread bytes %d rounds %d insns %lu\n", bytes, rounds, insns);
}

// --- The profiler -----------------------------------------------------------------------------

// The number on the line `key: N` of /proc/profstat.
long profstat(const char *key) {
  char value[24];
  if (!profstat_value(key, value, sizeof(value))) fail("cannot read /proc/profstat");
  return atoi(value);
}

void set_rate(int hz) {
  if (profile(0, PROF_RATE, hz) < 0) fail("the kernel refused the sampling rate");
}

// Counts of a few fixed strings in /proc/profile, read as a stream: how many samples there are
// and what they hold. Each sample object has one "pid" key, one "address" key per frame, and
// "kernel":true on each kernel frame.
struct ProfileShape {
  long samples = 0;
  long frames = 0;
  long kernel_frames = 0;
  long kernel_samples = 0;  // samples taken while the process was in the kernel
};

class Counter {
 public:
  explicit Counter(const char *pattern) : m_pattern(pattern), m_len(strlen(pattern)) {}

  // Feed one byte; true when it completes an occurrence. (The patterns used here cannot
  // overlap themselves, so restarting at their first byte is enough.)
  bool feed(char c) {
    if (c == m_pattern[m_at]) {
      if (++m_at == m_len) {
        m_at = 0;
        return true;
      }
      return false;
    }
    m_at = c == m_pattern[0] ? 1 : 0;
    return false;
  }

 private:
  const char *m_pattern;
  int m_len;
  int m_at = 0;
};

ProfileShape profile_shape() {
  int fd = open("/proc/profile", O_RDONLY);
  if (fd < 0) fail("cannot open /proc/profile");
  Counter pid("\"pid\":"), address("\"address\":"), kernel("\"kernel\":true"),
      kmode("\"mode\":\"kernel\"");
  ProfileShape shape;
  int n;
  while ((n = read(fd, buf, CHUNK)) > 0) {
    for (int i = 0; i < n; i++) {
      shape.samples += pid.feed(buf[i]);
      shape.frames += address.feed(buf[i]);
      shape.kernel_frames += kernel.feed(buf[i]);
      shape.kernel_samples += kmode.feed(buf[i]);
    }
  }
  close(fd);
  return shape;
}

// Profiles this process (or `pid`; PROF_ALL_PIDS: every process) for the lifetime of the
// object, at `hz` (0: not at all, and no system call). The sampler starts its grid at the
// first timer interrupt after this (the end of the current time slice), which is a fixed point
// once the caller has aligned to a tick.
class ProfiledSection {
 public:
  static constexpr int SELF = 0;  // no process has pid 0
  explicit ProfiledSection(int hz, int pid = SELF) : m_on(hz > 0), m_pid(pid) {
    if (!m_on) return;
    if (m_pid == SELF) m_pid = getpid();
    if (profile(m_pid, PROF_ON, 0) < 0) fail("cannot switch profiling on");
  }
  ~ProfiledSection() {
    if (m_on) profile(m_pid, PROF_OFF, 0);
  }
  ProfiledSection(const ProfiledSection &) = delete;
  ProfiledSection &operator=(const ProfiledSection &) = delete;

 private:
  bool m_on;
  int m_pid;
};

// Start from an empty profile at `hz` (or at the default rate, for an unprofiled run, so that
// both runs see the same kernel state).
void prepare_profile(int hz) {
  if (profile(0, PROF_CLEAR, 0) < 0) fail("cannot clear the profile");
  set_rate(hz > 0 ? hz : PROF_DEFAULT_HZ);
}

void report_profiled(const char *name, const char *what, int amount, int hz, unsigned long insns,
                     int frames_asked) {
  long recorded = hz > 0 ? profstat("recorded") : 0;
  long cost = hz > 0 ? profstat("sample cost ns") : 0;
  ProfileShape shape = hz > 0 ? profile_shape() : ProfileShape{};
  set_rate(PROF_DEFAULT_HZ);
  profile(0, PROF_CLEAR, 0);
  printf(
      "bsys: %s frames %d %s %d hz %d insns %lu samples %ld cost_ns %ld frames_total %ld "
      "kernel_frames %ld kernel_samples %ld\n",
      name, frames_asked, what, amount, hz, insns, recorded, cost, shape.frames,
      shape.kernel_frames, shape.kernel_samples);
}

}  // namespace

// The work and the call chains, with C linkage so that their names in a profile are plain.
//
// bsys_spin(units, keep_fp) does units x 10,000 rounds of a xorshift generator (8 instructions
// a round, the same arithmetic as pbench) and touches no memory while it loops. It builds an
// ordinary frame record, so a walk from its pc goes on to its caller; with keep_fp == 0 it
// clears s0 for the duration of the loop instead, and a walk ends at the pc: a one-frame stack.
//
// on_fresh_chain(frames, units) starts a new chain of frame records: its own record holds a
// zero return address and a zero frame pointer, as _start's does, so a walk from anything it
// calls ends with it. It then calls bsys_spin directly (1 or 2 frames: the pc, then
// on_fresh_chain itself) or descend(frames - 2), which adds one frame per level.
extern "C" {
unsigned long bsys_spin(unsigned long units, unsigned long keep_fp);
unsigned long on_fresh_chain(unsigned long frames, unsigned long units);

volatile unsigned long sink;

__attribute__((noinline, noclone)) unsigned long descend(unsigned long levels,
                                                         unsigned long units) {
  unsigned long r = levels > 1 ? descend(levels - 1, units) : bsys_spin(units, 1);
  sink = r;  // work after the call: it stays a call, and this frame stays on the stack
  return r + levels;
}
}

asm(R"(
  .text
  .globl bsys_spin
  .type bsys_spin, @function
bsys_spin:
  addi sp, sp, -16
  sd ra, 8(sp)
  sd s0, 0(sp)
  addi s0, sp, 16
  bnez a1, 1f
  li s0, 0
1:
  li t0, 88172645463325252
2:
  beqz a0, 4f
  li t2, 10000
3:
  slli t3, t0, 13
  xor t0, t0, t3
  srli t3, t0, 7
  xor t0, t0, t3
  slli t3, t0, 17
  xor t0, t0, t3
  addi t2, t2, -1
  bnez t2, 3b
  addi a0, a0, -1
  j 2b
4:
  mv a0, t0
  ld ra, 8(sp)
  ld s0, 0(sp)
  addi sp, sp, 16
  ret
  .size bsys_spin, . - bsys_spin

  .globl on_fresh_chain
  .type on_fresh_chain, @function
on_fresh_chain:
  addi sp, sp, -32
  sd ra, 24(sp)
  sd s0, 16(sp)
  sd zero, 8(sp)
  sd zero, 0(sp)
  addi s0, sp, 16
  li t0, 2
  bgtu a0, t0, 1f
  addi a0, a0, -1
  mv t1, a1
  mv a1, a0
  mv a0, t1
  call bsys_spin
  j 2f
1:
  addi a0, a0, -2
  call descend
2:
  ld ra, 24(sp)
  ld s0, 16(sp)
  addi sp, sp, 32
  ret
  .size on_fresh_chain, . - on_fresh_chain
)");

namespace {

void bench_prof(int frames, int units, int hz) {
  prepare_profile(hz);
  settle();
  unsigned long insns;
  {
    ProfiledSection section(hz);
    Stopwatch w;
    sink = on_fresh_chain(frames, units);
    insns = w.insns();
  }
  report_profiled("prof", "units", units, hz, insns, frames);
}

// The same work sampled by the instruction clock, every `every` instructions. The section
// switches profiling on; each hart's counter starts at its next timer interrupt.
void bench_iprof(int frames, int units, int every) {
  prepare_profile(PROF_DEFAULT_HZ);
  if (profile(0, PROF_CLOCK, every) < 0) fail("the kernel refused the instruction clock");
  settle();
  unsigned long insns;
  {
    ProfiledSection section(1);
    Stopwatch w;
    sink = on_fresh_chain(frames, units);
    insns = w.insns();
  }
  report_profiled("iprof", "units", units, every, insns, frames);
  profile(0, PROF_CLOCK, 0);
}

// Asleep and profiled: `ticks` sleep() ticks (100 ms each) at `hz`, so that the samples are
// the sweep's wait samples (kern/profile/sampler.cc), and what one cost it, in instructions.
void bench_wprof(int ticks, int hz) {
  prepare_profile(hz);
  settle();
  {
    ProfiledSection section(hz);
    sleep(ticks);
  }
  long waits = profstat("wait samples");
  long cost = profstat("wait cost ns");
  ProfileShape shape = profile_shape();
  set_rate(PROF_DEFAULT_HZ);
  profile(0, PROF_CLEAR, 0);
  printf("bsys: wprof ticks %d hz %d waits %ld cost_ns %ld frames_total %ld kernel_frames %ld\n",
         ticks, hz, waits, cost, shape.frames, shape.kernel_frames);
}

// One round: 4 KiB through a pipe to ourselves, in 512-byte pieces that never fill it.
extern "C" __attribute__((noinline)) void pipe_rounds(int rfd, int wfd, int rounds) {
  constexpr int PIECE = 512;
  for (int r = 0; r < rounds; r++)
    for (int off = 0; off < CHUNK; off += PIECE)
      if (write(wfd, buf + off, PIECE) != PIECE || read(rfd, buf + off, PIECE) != PIECE)
        fail("pipe round failed");
}

void bench_ksys(int rounds, int hz) {
  Pipe p;
  prepare_profile(hz);
  settle();
  unsigned long insns;
  {
    ProfiledSection section(hz);
    Stopwatch w;
    pipe_rounds(p.rd(), p.wr(), rounds);
    insns = w.insns();
  }
  report_profiled("ksys", "rounds", rounds, hz, insns, 0);
}

// Fill the profile with `want` samples (or as many as it holds) of a mix of user work, eight
// frames deep, and system calls (and with `all`, wait samples of the processes asleep; see
// below), at the highest rate, and leave them there for a reader to time.
// Prints how long that took in `time` ticks (100 ns), which also means something without -icount,
// and the part of it the hart spent idle (/proc/cpustat), which must be none: a wait for the
// disk inside the fill would last as long as the host takes, and under -icount the samples
// taken, and so the profile read afterwards, would differ from run to run.
//
// Each sample carries its time in microseconds since boot, and writing a number costs a little
// more for each digit it has. How long the machine has been up depends on the host (an idle
// hart skips ahead to its next timer deadline, and the machine idles whenever it waits for the
// host to type), so with `after` > 0 the fill first waits until `after` seconds since boot:
// the bench asks for 100 s, early in a fresh boot, so that every timestamp has nine digits.
// Under -icount that wait passes in a second or two of host time.
//
// With `all`, every process is profiled: init and the shell sleep in wait() throughout, and
// each period's sweep records a wait sample of each (what it waits for is named, from its
// kernel frames, when the profile is read), beside this program's own samples. The section
// switches all mode on after settle(), as it would this process's profiling, so the profile
// repeats as exactly as without `all`.
void bench_fill(int want, int after, bool all) {
  Pipe p;
  // Profiling a program reads its symbol table from the disk (kern/profile/images.cc): once
  // here for each program profiled below, so that the section finds the blocks in the buffer
  // cache.
  int pid = all ? PROF_ALL_PIDS : getpid();  // asked here, outside the measured part
  { ProfiledSection warm(PROF_MAX_HZ, pid); }
  prepare_profile(PROF_MAX_HZ);
  long capacity = profstat("capacity");
  if (want > capacity) want = static_cast<int>(capacity);
  constexpr unsigned long TICKS_PER_SECOND = 10'000'000;
  constexpr unsigned long TICKS_PER_SLEEP = TICKS_PER_SECOND / 10;  // sleep() counts 100 ms
  unsigned long start;
  asm volatile("rdtime %0" : "=r"(start));
  unsigned long wanted = static_cast<unsigned long>(after) * TICKS_PER_SECOND;
  if (start < wanted) sleep(static_cast<int>((wanted - start) / TICKS_PER_SLEEP) + 1);
  IdleCounter idle_count;
  settle();
  unsigned long idle = idle_count.read_next();
  asm volatile("rdtime %0" : "=r"(start));
  {
    ProfiledSection section(PROF_MAX_HZ, pid);
    long have = 0;
    while (have < want) {
      for (int i = 0; i < 16; i++) {
        sink = on_fresh_chain(8, 2);
        pipe_rounds(p.rd(), p.wr(), 1);
      }
      have = profstat("recorded");
    }
  }
  unsigned long end;
  asm volatile("rdtime %0" : "=r"(end));
  idle = idle_count.read_next() - idle;
  set_rate(PROF_DEFAULT_HZ);
  printf("bsys: fill samples %ld capacity %ld ticks %lu start %lu idle %lu\n", profstat("recorded"),
         capacity, end - start, start, idle);
}

// Time reading `path` to its end in reads of `size` bytes, `passes` times over. It is meant for
// /proc/profile, which the kernel renders, and symbolizes, while it is read: the first pass
// after new samples looks every address up in the executables' symbol tables (on disk); later
// passes find the names in the kernel's cache and show the cost of rendering alone. Each pass
// prints both counts: instructions (meaningful under -icount) and `time` ticks of 100 ns
// (meaningful without it). Megabytes of JSON would take minutes to cross the console, which is
// why the timing is done here. Small reads show whether the kernel keeps what it rendered:
// a pass of 1-byte reads must not cost a sample's rendering per byte.
void bench_readtime(const char *path, int passes, int size) {
  for (int pass = 1; pass <= passes; pass++) {
    settle();  // again for each pass: the first may have waited for the disk
    unsigned long t0;
    asm volatile("rdtime %0" : "=r"(t0));
    Stopwatch w;
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail("cannot open the file to time");
    unsigned long bytes = 0, reads = 0;
    int n;
    while ((n = read(fd, buf, size)) > 0) {
      bytes += n;
      reads++;
    }
    close(fd);
    unsigned long insns = w.insns();
    unsigned long t1;
    asm volatile("rdtime %0" : "=r"(t1));
    if (n < 0) fail("read error");
    printf("bsys: readtime pass %d size %d bytes %lu reads %lu insns %lu ticks %lu\n", pass, size,
           bytes, reads, insns, t1 - t0);
  }
}

// The benchmarks that take one number: `bsys NAME N` or `bsys NAME BYTES`.
struct OneNumber {
  const char *name;
  const char *what;  // the number's name, for parse()'s message
  void (*run)(int);
};
constexpr OneNumber ONE_NUMBER[] = {
    {"null", "N", bench_null},     {"fork", "N", bench_fork},
    {"exec", "N", bench_exec},     {"pingpong", "N", bench_pingpong},
    {"pipe", "BYTES", bench_pipe}, {"fwrite", "BYTES", bench_fwrite},
};

// A sampling rate for the profiler, 0 for none.
int parse_hz(const char *s) {
  int hz = atoi(s);
  if (hz != 0 && (hz < PROF_MIN_HZ || hz > PROF_MAX_HZ)) fail("HZ must be 0 or 10..10000");
  return hz;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "nop") == 0) return 0;
  for (int i = 0; i < CHUNK; i++) buf[i] = static_cast<char>('a' + i % 26);
  const char *cmd = argc >= 2 ? argv[1] : "";
  for (const OneNumber &b : ONE_NUMBER) {
    if (argc == 3 && strcmp(cmd, b.name) == 0) {
      b.run(parse(argv[2], b.what));
      return 0;
    }
  }
  if (argc == 4 && strcmp(cmd, "fread") == 0) {
    bench_fread(parse(argv[2], "BYTES"), parse(argv[3], "N"));
  } else if (argc == 5 && strcmp(cmd, "prof") == 0) {
    bench_prof(parse(argv[2], "FRAMES"), parse(argv[3], "UNITS"), parse_hz(argv[4]));
  } else if (argc == 5 && strcmp(cmd, "iprof") == 0) {
    bench_iprof(parse(argv[2], "FRAMES"), parse(argv[3], "UNITS"), parse(argv[4], "N"));
  } else if (argc == 4 && strcmp(cmd, "wprof") == 0) {
    bench_wprof(parse(argv[2], "TICKS"), parse_hz(argv[3]));
  } else if (argc == 4 && strcmp(cmd, "ksys") == 0) {
    bench_ksys(parse(argv[2], "ROUNDS"), parse_hz(argv[3]));
  } else if ((argc >= 3 && argc <= 5) && strcmp(cmd, "fill") == 0) {
    if (argc == 5 && strcmp(argv[4], "all") != 0) fail("the last word of fill can only be `all`");
    bench_fill(parse(argv[2], "N"), argc >= 4 ? parse(argv[3], "SECONDS") : 0, argc == 5);
  } else if ((argc == 4 || argc == 5) && strcmp(cmd, "readtime") == 0) {
    int size = argc == 5 ? parse(argv[4], "SIZE") : CHUNK;
    if (size < 1 || size > CHUNK) fail("SIZE must be 1..4096");
    bench_readtime(argv[2], parse(argv[3], "PASSES"), size);
  } else if (argc >= 3 && strcmp(cmd, "run") == 0) {
    bench_run(argv + 2);
  } else {
    usage_exit(
        "bsys null|fork|exec|pingpong N\n"
        "       bsys pipe|fwrite BYTES\n"
        "       bsys fread BYTES N\n"
        "       bsys prof FRAMES UNITS HZ\n"
        "       bsys iprof FRAMES UNITS N\n"
        "       bsys wprof TICKS HZ\n"
        "       bsys ksys ROUNDS HZ\n"
        "       bsys fill N [SECONDS [all]]\n"
        "       bsys readtime FILE PASSES [SIZE]\n"
        "       bsys run PROG [ARGS...]\n"
        "       bsys nop\n");
  }
  return 0;
}
