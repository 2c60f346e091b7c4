// profile: the command-line face of the sampling profiler.
//
//   profile PID on|off       start or stop sampling one process
//   profile all on|off       sample every process, or stop doing so
//   profile rate HZ          samples a second, 10..10000 (1000 after boot)
//   profile clear            forget every sample recorded so far
//   profile status           the profiler's state (/proc/profstat)
//   profile top [N]          the N functions with the most samples (10 if N is left out)
//   profile run CMD [ARG...] profile CMD from its first instruction to its exit, then
//                            print `profile top` for that process alone
//
// The kernel does the sampling: on each tick of the sampling clock it records, for the
// process running on that hart, the interrupted pc and the chain of return addresses it
// finds by following frame pointers (kernel frames first when the process was inside a
// system call). Reading /proc/profile renders those samples as a JSON array, one object per
// sample, with every address already named:
//
//   {"pid":3,"tid":3,"comm":"spin","timestamp":123,"hart":0,"mode":"user","samples":[
//     {"address":1234,"symbol":"hot","kernel":false}, ...]}
//
// `profile top` turns that into a table. For every function it counts two things:
//
//   self   samples whose innermost frame is in the function: time spent in its own code;
//   incl   samples with the function anywhere on the stack, counted once per sample even
//          when it recurses: time spent in it and in everything it called.
//
// A profile can hold tens of thousands of samples, megabytes of JSON, far more than this
// program wants to hold in memory. So the file is never loaded whole: a small scanner reads
// it a chunk at a time and parses it one character at a time, keeping only the sample it
// is in the middle of. Only the per-function counts grow, and there are few functions.
//
// LAB profile/run BEGIN
// `profile run` has to switch sampling on before the command executes its first
// instruction, but a process can only be named once it exists. So the child it forks waits
// on a pipe; the parent turns sampling on for the child's pid and only then writes the byte
// that lets the child exec. Samples of other processes are left alone: the report filters
// by pid instead of clearing the profile.
// LAB profile/run STARTER
// // `profile run CMD [ARG...]` runs CMD as a child process, samples it from its first
// // instruction to its exit, prints `profile: pid N (CMD) exited with status S after T ms`,
// // and then the report for that process alone. Samples of other processes must stay in
// // the profile.
// LAB profile/run END
#include "abi/profile.h"
#include "lib/user.h"

namespace {

constexpr const char *kUsage =
    "usage: profile PID on|off\n"
    "       profile all on|off\n"
    "       profile rate HZ        (10..10000 samples a second)\n"
    "       profile clear\n"
    "       profile status\n"
    "       profile top [N]\n"
    "       profile run CMD [ARG...]\n";

constexpr const char *kProfilePath = "/proc/profile";
constexpr const char *kStatPath = "/proc/profstat";
constexpr int kAnyPid = -1;  // the report's filter: every process

[[noreturn]] void usage() {
  fprintf(2, "%s", kUsage);
  exit(1);
}

[[noreturn]] void fail(const char *what) {
  fprintf(2, "profile: %s\n", what);
  exit(1);
}

// A decimal number made of digits only (no sign, nothing after it), up to 9 of them, so it
// cannot overflow an int. atoi would read "3x" as 3 and "x" as 0.
bool parse_number(const char *s, int *out) {
  int n = 0, digits = 0;
  for (; *s != '\0'; s++, digits++) {
    if (*s < '0' || *s > '9' || digits == 9) return false;
    n = n * 10 + (*s - '0');
  }
  *out = n;
  return digits > 0;
}

// --- Reading a file a chunk at a time ----------------------------------------------------

// A byte source over a file descriptor, with one character of lookahead. The buffer is
// small on purpose: /proc/profile renders what each read asks for, so any size works.
class Stream {
 public:
  explicit Stream(int fd) : fd_(fd) {}

  // The next byte without consuming it, or -1 at the end of the file (or on an error).
  int peek() {
    if (pos_ == len_ && !fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }

  int get() {
    int c = peek();
    if (c >= 0) {
      pos_++;
      offset_++;
    }
    return c;
  }

  // How many bytes have been consumed: where a parse error was found.
  unsigned long offset() const { return offset_; }

 private:
  bool fill() {
    if (eof_) return false;
    int n = read(fd_, buf_, sizeof(buf_));
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    len_ = n;
    pos_ = 0;
    return true;
  }

  int fd_;
  char buf_[512];
  int len_ = 0;
  int pos_ = 0;
  unsigned long offset_ = 0;
  bool eof_ = false;
};

// --- Parsing the profile ------------------------------------------------------------------

constexpr int kNameMax = 96;     // longer names are cut (the kernel cuts at 95 as well)
constexpr int kMaxFrames = 64;   // more than the kernel records per sample (32)

struct Frame {
  char name[kNameMax];
  bool kernel;
};

// One sample, as much of it as the report needs. The parser sets every field it uses.
struct Sample {
  int pid;
  int nframes;
  Frame frames[kMaxFrames];
};

// A recursive-descent parser for the JSON of /proc/profile, reading from a Stream. It
// accepts any valid JSON with the documented shape, in any key order, and skips keys it
// does not know, so extra fields in a later kernel do not break it. Every method returns
// false on malformed input; the caller reports where.
class ProfileParser {
 public:
  ProfileParser(Stream &in, Sample &scratch) : in_(in), sample_(scratch) {}

  // Calls visit(sample) for each sample in the array. False if the text is not a valid
  // profile.
  template <typename Visit>
  bool each_sample(Visit &&visit) {
    if (!expect('[')) return false;
    skip_space();
    if (in_.peek() == ']') {
      in_.get();
      return at_end();
    }
    for (;;) {
      if (!sample(sample_)) return false;
      visit(static_cast<const Sample &>(sample_));
      skip_space();
      int c = in_.get();
      if (c == ']') return at_end();
      if (c != ',') return false;
    }
  }

 private:
  void skip_space() {
    for (;;) {
      int c = in_.peek();
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      in_.get();
    }
  }

  bool expect(char want) {
    skip_space();
    return in_.get() == want;
  }

  bool at_end() {
    skip_space();
    return in_.peek() < 0;
  }

  // A string into buf (cut to cap-1 bytes, always terminated). Escapes are decoded; a \u
  // escape outside ASCII becomes '?', since names here are plain ASCII anyway.
  bool string(char *buf, int cap) {
    if (!expect('"')) return false;
    int n = 0;
    for (;;) {
      int c = in_.get();
      if (c < 0 || c < 0x20) return false;  // control bytes must be escaped
      if (c == '"') break;
      if (c == '\\') {
        c = in_.get();
        switch (c) {
          case '"': case '\\': case '/': break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'n': c = '\n'; break;
          case 'r': c = '\r'; break;
          case 't': c = '\t'; break;
          case 'u': {
            int code = 0;
            for (int i = 0; i < 4; i++) {
              int h = in_.get();
              int v = h >= '0' && h <= '9'   ? h - '0'
                      : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                             : -1;
              if (v < 0) return false;
              code = code * 16 + v;
            }
            c = code < 0x80 ? code : '?';
            break;
          }
          default:
            return false;
        }
      }
      if (buf != nullptr && n < cap - 1) buf[n++] = static_cast<char>(c);
    }
    if (buf != nullptr) buf[n] = '\0';
    return true;
  }

  // A non-negative integer. Numbers of other forms are only ever skipped (skip_value).
  bool number(unsigned long *out) {
    skip_space();
    int c = in_.peek();
    if (c < '0' || c > '9') return false;
    unsigned long v = 0;
    while (c >= '0' && c <= '9') {
      v = v * 10 + (in_.get() - '0');
      c = in_.peek();
    }
    *out = v;
    return true;
  }

  bool literal(const char *word) {
    for (; *word != '\0'; word++)
      if (in_.get() != *word) return false;
    return true;
  }

  bool boolean(bool *out) {
    skip_space();
    if (in_.peek() == 't') {
      *out = true;
      return literal("true");
    }
    *out = false;
    return literal("false");
  }

  // Any JSON value, thrown away. Nesting is bounded so bad input cannot exhaust the stack.
  bool skip_value(int depth = 0) {
    if (depth > 16) return false;
    skip_space();
    int c = in_.peek();
    if (c == '"') return string(nullptr, 0);
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      in_.get();
      skip_space();
      if (in_.peek() == close) {
        in_.get();
        return true;
      }
      for (;;) {
        if (close == '}' && !(string(nullptr, 0) && expect(':'))) return false;
        if (!skip_value(depth + 1)) return false;
        skip_space();
        int next = in_.get();
        if (next == close) return true;
        if (next != ',') return false;
      }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      while ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
        in_.get();
        c = in_.peek();
      }
      return true;
    }
    return false;
  }

  // The members of an object, calling member(key) after each key and its ':'. member
  // parses (or skips) the value.
  template <typename Member>
  bool object(Member &&member) {
    if (!expect('{')) return false;
    skip_space();
    if (in_.peek() == '}') {
      in_.get();
      return true;
    }
    for (;;) {
      char key[16];
      if (!string(key, sizeof(key)) || !expect(':') || !member(key)) return false;
      skip_space();
      int c = in_.get();
      if (c == '}') return true;
      if (c != ',') return false;
    }
  }

  bool frame(Frame &f) {
    f.name[0] = '\0';
    f.kernel = false;
    return object([&](const char *key) {
      if (strcmp(key, "symbol") == 0) return string(f.name, kNameMax);
      if (strcmp(key, "kernel") == 0) return boolean(&f.kernel);
      return skip_value();
    });
  }

  bool frames(Sample &s) {
    if (!expect('[')) return false;
    skip_space();
    if (in_.peek() == ']') {
      in_.get();
      return true;
    }
    for (;;) {
      // Frames beyond what fits are parsed into a scratch slot and dropped: the report
      // only loses the outermost callers of an absurdly deep stack.
      Frame scratch;
      Frame &f = s.nframes < kMaxFrames ? s.frames[s.nframes] : scratch;
      if (!frame(f)) return false;
      if (s.nframes < kMaxFrames) s.nframes++;
      skip_space();
      int c = in_.get();
      if (c == ']') return true;
      if (c != ',') return false;
    }
  }

  bool sample(Sample &s) {
    s.pid = -1;
    s.nframes = 0;
    return object([&](const char *key) {
      if (strcmp(key, "pid") == 0) {
        unsigned long pid;
        if (!number(&pid)) return false;
        s.pid = static_cast<int>(pid);
        return true;
      }
      if (strcmp(key, "samples") == 0) return frames(s);
      return skip_value();
    });
  }

  Stream &in_;
  Sample &sample_;  // reused for every sample: the parser holds one at a time
};

// The sample being parsed. It is static because a user stack is a single 4 KiB page, and
// a sample's frames with their names take more than that.
Sample current_sample;

// --- Counting samples per function --------------------------------------------------------

struct FunctionCount {
  const char *name = nullptr;  // nullptr: a free slot
  bool kernel = false;
  int self = 0;
  int incl = 0;
  int last_sample = -1;  // the sample that last counted this function inclusively
};

// Per-function counts in an open-addressing hash table keyed by (name, kernel). The table
// has a fixed size; if a profile ever names more functions than it holds, the rest are
// counted together as "(other functions)" rather than failing the whole report.
class Tally {
 public:
  bool init() {
    slots_ = static_cast<FunctionCount *>(malloc(kSlots * sizeof(FunctionCount)));
    if (slots_ == nullptr) return false;
    for (int i = 0; i < kSlots; i++) slots_[i] = FunctionCount{};
    overflow_.name = "(other functions)";
    return true;
  }

  void add(const Sample &s) {
    if (s.nframes == 0) return;
    int serial = samples_++;
    find(s.frames[0])->self++;
    for (int i = 0; i < s.nframes; i++) {
      FunctionCount *f = find(s.frames[i]);
      if (f->last_sample != serial) {
        f->last_sample = serial;
        f->incl++;
      }
    }
  }

  int samples() const { return samples_; }

  // Prints the n functions with the most self samples (ties: more inclusive samples first).
  void print_top(int n) {
    FunctionCount **order = static_cast<FunctionCount **>(malloc((used_ + 1) * sizeof(void *)));
    if (order == nullptr) fail("out of memory");
    int count = 0;
    for (int i = 0; i < kSlots; i++)
      if (slots_[i].name != nullptr) order[count++] = &slots_[i];
    if (overflow_.incl > 0) order[count++] = &overflow_;
    if (n > count) n = count;
    // A selection sort of the first n: n is small and this runs once.
    for (int i = 0; i < n; i++) {
      int best = i;
      for (int j = i + 1; j < count; j++)
        if (before(*order[j], *order[best])) best = j;
      FunctionCount *t = order[i];
      order[i] = order[best];
      order[best] = t;
    }
    printf("%7s %6s %7s %6s  %s\n", "self", "%", "incl", "%", "function");
    for (int i = 0; i < n; i++) {
      const FunctionCount &f = *order[i];
      int self = tenths_of_percent(f.self), incl = tenths_of_percent(f.incl);
      printf("%7d %3d.%d%% %7d %3d.%d%%  %s%s\n", f.self, self / 10, self % 10, f.incl,
             incl / 10, incl % 10, f.kernel ? "[k] " : "", f.name);
    }
    free(order);
  }

 private:
  static constexpr int kSlots = 2048;
  static constexpr int kMaxUsed = kSlots * 3 / 4;  // keep probe sequences short

  static unsigned hash(const char *s, bool kernel) {
    unsigned h = kernel ? 2166136261u ^ 0x5bd1e995u : 2166136261u;  // FNV-1a
    for (; *s != '\0'; s++) h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
    return h;
  }

  static bool before(const FunctionCount &a, const FunctionCount &b) {
    if (a.self != b.self) return a.self > b.self;
    return a.incl > b.incl;
  }

  int tenths_of_percent(int part) const {
    return samples_ == 0 ? 0 : static_cast<int>((part * 1000L + samples_ / 2) / samples_);
  }

  FunctionCount *find(const Frame &f) {
    const char *name = f.name[0] != '\0' ? f.name : "??";
    for (unsigned i = hash(name, f.kernel) % kSlots;; i = (i + 1) % kSlots) {
      FunctionCount &slot = slots_[i];
      if (slot.name == nullptr) {
        if (used_ >= kMaxUsed) return &overflow_;
        char *copy = static_cast<char *>(malloc(strlen(name) + 1));
        if (copy == nullptr) return &overflow_;
        strcpy(copy, name);
        slot.name = copy;
        slot.kernel = f.kernel;
        used_++;
        return &slot;
      }
      if (slot.kernel == f.kernel && strcmp(slot.name, name) == 0) return &slot;
    }
  }

  FunctionCount *slots_ = nullptr;
  FunctionCount overflow_;
  int used_ = 0;
  int samples_ = 0;
};

// --- /proc/profstat -----------------------------------------------------------------------


int show_status() {
  int fd = open(kStatPath, O_RDONLY);
  if (fd < 0) fail("cannot open /proc/profstat");
  char buf[256];
  int n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) write(1, buf, n);
  close(fd);
  return 0;
}

// --- The commands ---------------------------------------------------------------------------

// profile top: the report over the samples of `pid`, or of everyone for kAnyPid.
int top(int n, int pid) {
  Tally tally;
  if (!tally.init()) fail("out of memory");
  int fd = open(kProfilePath, O_RDONLY);
  if (fd < 0) fail("cannot open /proc/profile");
  Stream in(fd);
  ProfileParser parser(in, current_sample);
  bool ok = parser.each_sample([&](const Sample &s) {
    if (pid == kAnyPid || s.pid == pid) tally.add(s);
  });
  close(fd);
  if (!ok) {
    fprintf(2, "profile: /proc/profile is not a valid profile (at byte %lu)\n", in.offset());
    return 1;
  }
  if (tally.samples() > 0) tally.print_top(n);
  char dropped[24];
  if (!profstat_value("dropped", dropped, sizeof(dropped))) strcpy(dropped, "?");
  printf("%d samples (%s dropped)\n", tally.samples(), dropped);
  return 0;
}

// LAB profile/run BEGIN: write `profile run`, see labs/profile/README.md, task 3
// The child of `profile run`: wait for the parent's word, then become the command.
[[noreturn]] void run_child(int go_fd, char **argv) {
  char go = 0;
  int n = read(go_fd, &go, 1);
  close(go_fd);
  if (n != 1 || go != 'g') exit(1);  // the parent could not switch sampling on
  exec(argv[0], argv);
  // Like the shell: a bare name not found here is looked for in the root directory.
  if (strchr(argv[0], '/') == nullptr && strlen(argv[0]) < MAXPATH - 1) {
    char path[MAXPATH];
    path[0] = '/';
    strcpy(path + 1, argv[0]);
    exec(path, argv);
  }
  fprintf(2, "profile: exec %s failed\n", argv[0]);
  exit(1);
}

int run(char **argv) {
  int go[2];
  if (pipe(go) < 0) fail("pipe failed");
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    close(go[1]);
    run_child(go[0], argv);
  }
  close(go[0]);
  bool on = profile(pid, PROF_ON, 0) == 0;
  unsigned long start = now_ms();
  write(go[1], on ? "g" : "x", 1);
  close(go[1]);
  int status = 0;
  int waited;
  while ((waited = wait(&status)) != pid && waited >= 0) {
  }
  if (!on) {
    fprintf(2, "profile: could not start profiling pid %d\n", pid);
    return 1;
  }
  // The process has exited, which stopped its sampling; its samples stay. Its time from the
  // go-ahead to its exit says how many samples the rate promised (it was not running all of
  // that time: it may have slept, or waited for a hart).
  printf("profile: pid %d (%s) exited with status %d after %lu ms\n", pid, argv[0], status,
         now_ms() - start);
  return top(10, pid);
}
// LAB profile/run STARTER
// // profile run CMD [ARG...]: argv is CMD and its arguments, null-terminated.
// int run([[maybe_unused]] char **argv) {
//   fprintf(2, "profile: run is not written yet\n");
//   return 1;
// }
// LAB profile/run END

int set_rate(const char *arg) {
  int hz;
  if (!parse_number(arg, &hz) || hz < PROF_MIN_HZ || hz > PROF_MAX_HZ) {
    fprintf(2, "profile: rate must be a number from %d to %d (samples a second)\n", PROF_MIN_HZ,
            PROF_MAX_HZ);
    return 1;
  }
  if (profile(0, PROF_RATE, hz) < 0) fail("the kernel refused the rate");
  return 0;
}

// profile all on|off
int switch_all(bool on) {
  if (profile(PROF_ALL_PIDS, on ? PROF_ON : PROF_OFF, 0) == 0) return 0;
  fail(on ? "cannot profile all processes" : "not profiling all processes");
}

// profile PID on|off
int switch_pid(int pid, bool on) {
  if (profile(pid, on ? PROF_ON : PROF_OFF, 0) == 0) return 0;
  if (on) {
    fprintf(2, "profile: no process %d\n", pid);
    return 1;
  }
  // The kernel answers -1 both for a pid that does not exist and for one that is not being
  // profiled. Switching sampling on tells the two apart, and is undone at once: at worst
  // it records a sample or two of a process that was running anyway.
  if (profile(pid, PROF_ON, 0) < 0) {
    fprintf(2, "profile: no process %d\n", pid);
    return 1;
  }
  profile(pid, PROF_OFF, 0);
  fprintf(2, "profile: process %d is not being profiled\n", pid);
  return 1;
}

// "on" -> 1, "off" -> 0, anything else -> -1.
int on_off(const char *word) {
  if (strcmp(word, "on") == 0) return 1;
  if (strcmp(word, "off") == 0) return 0;
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage();
  const char *verb = argv[1];

  if (strcmp(verb, "run") == 0) {
    if (argc < 3) usage();
    return run(argv + 2);
  }
  if (strcmp(verb, "top") == 0) {
    int n = 10;
    if (argc > 3 || (argc == 3 && (!parse_number(argv[2], &n) || n == 0))) usage();
    return top(n, kAnyPid);
  }
  if (strcmp(verb, "status") == 0 || strcmp(verb, "clear") == 0) {
    if (argc != 2) usage();
    if (verb[0] == 's') return show_status();
    if (profile(0, PROF_CLEAR, 0) < 0) fail("clear failed");
    return 0;
  }
  if (strcmp(verb, "rate") == 0) {
    if (argc != 3) usage();
    return set_rate(argv[2]);
  }

  // profile PID|all on|off
  if (argc != 3) usage();
  int on = on_off(argv[2]);
  if (on < 0) usage();
  if (strcmp(verb, "all") == 0) return switch_all(on == 1);
  int pid;
  if (!parse_number(verb, &pid)) usage();
  return switch_pid(pid, on == 1);
}
