// /proc/profile and /proc/profstat: the profile as the user sees it.
//
// /proc/profile is a JSON array with one object per sample, innermost frame first:
//
//   [
//   {"pid":3,"tid":3,"comm":"spin","timestamp":1234567,"hart":0,"mode":"user","samples":[
//     {"address":1234,"symbol":"hot","kernel":false}, ...],"late":0},
//   ...
//   ]
//
// (The real output has no line break inside an object.) "pid"/"tid"/"timestamp" (µs since
// boot)/"samples" with "address"/"symbol" are the classic schema; "comm" (the program's
// name), "hart", "mode", "late", "irqoff" and "kernel" are extras. "mode" is "user" or
// "kernel" where a running process was caught, or "wait" for a process found asleep
// (sampler.cc), which then also has "wchan": what it waits for (WAIT_KINDS below). "late"
// is how many microseconds after its deadline the sample was taken; "irqoff":true, present
// only when so, says the sampling interrupt had been held off by disabled interrupts: the
// sample shows where they came back on, not where the time went (skid: profiler.h). The
// first address of a sample is the interrupted pc and is looked up as is; every other one
// is a return address and is looked up at address - 1, so a call that is the last
// instruction of a function is charged to that function, not the next.
//
// One opening, one document: the samples a document holds are fixed at the first read of
// an opening, as the number committed then (kept in the open file's dev_state, with the
// generation), and every later read of that opening serves the same document: after its
// closing "]" a read returns 0, however many samples arrive meanwhile. The next opening
// sees them: two openings in a row read two valid documents, the second holding the first's
// samples and any newer ones. After a `profile clear`, an opening that had already started
// reading gets -1: its samples are gone.
//
// LAB profile/procfile BEGIN
// The file can be large (megabytes), so it is never built whole. The document is a
// sequence of pieces: "[", pieces of a few consecutive samples (each "\n" or ",\n" then the
// object; a piece takes samples until it holds PIECE_FILL bytes), and "\n]\n". A read of
// [off, off+n) renders pieces one at a time and copies out the overlap.
// Rendering is deterministic and samples are only ever appended, so every document of one
// generation has the same pieces at the same offsets, and only where its "\n]\n" goes
// differs: any read size gives the same bytes. The pieces rendered last are kept (a few,
// by generation and first sample, so several readers each find their own), each with its
// offset: a read starts from the kept piece nearest below its offset, and a piece is
// rendered once however many reads it takes to copy it out. Reading sequentially, even a
// byte at a time, costs time proportional to the bytes read.
// LAB profile/procfile STARTER
// // The file can be large (a full sample array is megabytes of JSON), far more than any
// // kernel buffer. A read asks for the bytes [off, off+n) of the document; whatever the read
// // size, a reader must get the same bytes, and one opening reads exactly one valid
// // document even while profiling continues. Reading the whole file from start to end, in
// // reads of any size, should cost time proportional to its size.
// LAB profile/procfile END

#include "fs/procfs.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "proc/proc.h"
#include "profile/json.h"
#include "profile/profiler.h"
#include "trap/timer.h"

namespace prof {

namespace {

// What a wait sample waits for, by the first function of its kernel chain (innermost first)
// that is in this table: sleep() itself is under every one of them, so it is the caller that
// says why. The names are as symbolize() gives them, without the parameter list.
struct WaitKind {
  const char *function;
  const char *wait;
};
constexpr WaitKind WAIT_KINDS[] = {
    {"Sleeplock::acquire", "sleeplock"},  // a buffer's lock, too: waiting for its holder
    {"virtio_disk_rw", "disk"},
    {"virtio_disk_rw_blocks", "disk"},
    {"piperead", "pipe"},
    {"pipewrite", "pipe"},
    {"sys_sleep", "sleep"},
    {"wait", "wait"},
    {"console_read", "console"},
    {"uart_putc", "console"},
};
constexpr const char *WAIT_OTHER = "other";
constexpr u32 WAIT_NAME_MAX = 9;  // "sleeplock", the longest of them
constexpr bool wait_names_fit() {
  for (const WaitKind &k : WAIT_KINDS)
    if (__builtin_strlen(k.wait) > WAIT_NAME_MAX) return false;
  return __builtin_strlen(WAIT_OTHER) <= WAIT_NAME_MAX;
}
static_assert(wait_names_fit(), "WAIT_NAME_MAX bounds the JSON of a wait sample");

// Is `name` (a symbolized name, maybe with its parameters) the function `function`?
bool names_function(const char *name, const char *function) {
  size_t n = strlen(function);
  return strncmp(name, function, n) == 0 && (name[n] == '\0' || name[n] == '(');
}

// What a sleeper waits for if the kernel function `name` (as symbolize() gives it) is on its
// kernel chain: 1 + the index of its WaitKind, or 0 if that function does not say. (A byte:
// a kept frame holds it in what would be padding.)
u8 wait_of(const char *name) {
  for (u32 i = 0; i < sizeof(WAIT_KINDS) / sizeof(WAIT_KINDS[0]); i++)
    if (names_function(name, WAIT_KINDS[i].function)) return static_cast<u8>(i + 1);
  return 0;
}

// The name of a wait_of() answer other than 0.
const char *wait_text(u8 kind) { return WAIT_KINDS[kind - 1].wait; }

// The name of what wait sample s waits for: "disk", "pipe", ..., or "other". Symbolizes its
// kernel frames, so it is for when the sample is rendered, never the trap. Caller holds lock().
// LAB profile/procfile BEGIN
// (Unused here: render_sample() asks kept_wait_name() below, which gives the same answer
// from the frames it keeps, without looking a name up again.)
// LAB profile/procfile STARTER
// // (Maybe unused: the profile lab's starter has no render_sample() to call it yet.)
// LAB profile/procfile END
[[maybe_unused]] const char *wait_name(const Sample &s) {
  int nkernel = s.nkernel < MAX_FRAMES ? s.nkernel : MAX_FRAMES;
  for (int i = 0; i < nkernel; i++) {
    char name[NAME_MAX];
    u64 lookup = i == 0 ? s.frames[i] : s.frames[i] - 1;  // a return address: its call
    if (!symbolize(true, NO_IMAGE, lookup, name, sizeof(name))) continue;
    if (u8 kind = wait_of(name)) return wait_text(kind);
  }
  return WAIT_OTHER;
}

// LAB profile/procfile BEGIN: write profile_read(), see labs/profile/README.md, task 2
// The most one sample's piece can take, added up from what render_sample writes: the fixed
// text, every number at its longest, and every string at its longest with every byte
// escaped (json.h). Names are at most NAME_MAX - 1 bytes (symbolize() cuts longer ones with
// "..."), the program's name at most COMM_MAX, and a sample holds at most MAX_FRAMES frames,
// so no sample, whatever its names, can overflow the piece.
constexpr u32 COMM_MAX = sizeof(Proc::name) - 1;
constexpr size_t HEADER_MAX =
    json::literal_len(",\n{") + json::literal_len("\"pid\":") + json::NUMBER_MAX +
    json::literal_len(",\"tid\":") + json::NUMBER_MAX + json::literal_len(",\"comm\":") +
    json::string_max(COMM_MAX) + json::literal_len(",\"timestamp\":") + json::NUMBER_MAX +
    json::literal_len(",\"hart\":") + json::NUMBER_MAX + json::literal_len(",\"mode\":\"kernel\"") +
    json::literal_len(",\"wchan\":") + json::string_max(WAIT_NAME_MAX) +
    json::literal_len(",\"samples\":[");
constexpr size_t FRAME_MAX = json::literal_len(",{\"address\":") + json::NUMBER_MAX +
                             json::literal_len(",\"symbol\":") + json::string_max(NAME_MAX - 1) +
                             json::literal_len(",\"kernel\":false}");
constexpr size_t TRAILER_MAX = json::literal_len("]") + json::literal_len(",\"late\":") +
                               json::NUMBER_MAX + json::literal_len(",\"irqoff\":true}");
constexpr size_t SAMPLE_MAX = HEADER_MAX + MAX_FRAMES * FRAME_MAX + TRAILER_MAX;
constexpr u32 PIECE_MAX = 33 * 1024;
static_assert(PIECE_MAX >= SAMPLE_MAX, "a sample with the longest names must fit its piece");
// A piece takes samples while it holds less than this, so that a read copies out a few
// samples at a time, not one; after PIECE_FILL bytes there is still PIECE_MAX for one more.
constexpr u32 PIECE_FILL = 4096;

// A piece rendered lately: samples [index, index + count) of `generation` (0: none), at
// byte `pos` of the document. `used` orders them, to reuse the one least recently used.
struct Piece {
  u32 generation = 0;
  u32 index = 0;
  u32 count = 0;
  u64 pos = 0;
  u32 len = 0;
  u64 used = 0;
  // The text starts at byte pos % 8 of buf, where it lies in a reader's buffer if that is
  // aligned and read from an aligned offset: then copying it out goes a word at a time.
  char *text = nullptr;
  alignas(8) char buf[PIECE_FILL + PIECE_MAX + 7];
};
constexpr int NPIECES = 4;  // readers at once that each keep their piece
constinit Piece pieces[NPIECES];
constinit u64 use_clock = 0;

// Most frames of a profile repeat: a program spends its time in a few places, and the
// samples of one system call share its kernel frames. So the text of each frame,
// {"address":...,"symbol":"...","kernel":...}, is kept once rendered, and a frame found
// again costs a copy: no lookup, no escaping, no number to format. The texts are packed in
// frame_text, and each is found through kept_frames, a hash table keyed by what the text
// depends on: the address, the address looked up, whether it is a kernel frame, and for a
// user frame the program. Frames whose hashes collide take the next free slots (open
// addressing), so a frame stays kept however many others share its hash. When frame_text
// is full, or the table is 3/4 full (so that a search soon meets an empty slot), every
// kept frame is forgotten and it fills again.
struct KeptFrame {
  u64 addr = 0;
  u64 lookup = 0;
  i32 image = 0;
  bool kernel = false;
  bool caller_in_ra = false;  // a user pc whose caller is in ra (caller_in_ra(), symbolize.cc)
  u8 wait = 0;                // for a kernel frame, wait_of() its function's name; else 0
  u32 at = 0;                 // where its text starts in frame_text
  u32 len = 0;                // 0: an empty slot
};
static_assert(sizeof(KeptFrame) == 32, "wait fits in what was padding: the table stays 64 KiB");
constexpr u32 KEPT_BITS = 11;
constexpr u32 NKEPT_FRAMES = 1u << KEPT_BITS;
constexpr u32 KEPT_MAX = NKEPT_FRAMES / 4 * 3;
constexpr u32 FRAME_TEXT_BYTES = 64 * 1024;
static_assert(FRAME_TEXT_BYTES >= FRAME_MAX, "the longest frame must fit");
constinit KeptFrame kept_frames[NKEPT_FRAMES];
constinit u32 nkept = 0;
constinit char frame_text[FRAME_TEXT_BYTES];
constinit u32 frame_text_used = 0;

void forget_frames() {
  for (KeptFrame &f : kept_frames) f.len = 0;
  nkept = 0;
  frame_text_used = 0;
}

// The slot that keeps this frame, or the empty slot where it would go: the slots are tried
// from the one its hash names, onwards. Caller holds lock(). (Inlined, as frame() is: most
// frames are found kept, and with the two calls gone a sample rendered in 3,275 instructions
// instead of 3,765, at cf4628c; only a new frame pays for a call, to keep_frame().)
[[gnu::always_inline]] inline KeptFrame &slot_of(bool kernel, int image, u64 addr, u64 lookup) {
  u64 hash = (lookup ^ (static_cast<u64>(image) << 32)) * 0x9e3779b97f4a7c15ull;
  for (u32 i = static_cast<u32>(hash >> (64 - KEPT_BITS));; i = (i + 1) % NKEPT_FRAMES) {
    KeptFrame &f = kept_frames[i];
    if (f.len == 0) return f;
    if (f.addr == addr && f.lookup == lookup && f.image == image && f.kernel == kernel) return f;
  }
}

// A frame not kept yet: rendered into frame_text and kept in `slot`, its empty slot in
// kept_frames, or if the table or the text is full, in its slot once every kept frame is
// forgotten. Returns the kept frame. Caller holds lock().
[[gnu::noinline]] const KeptFrame &keep_frame(KeptFrame *slot, bool kernel, int image, u64 addr,
                                              u64 lookup) {
  // Make room first if the table or the text is full.
  if (nkept == KEPT_MAX || FRAME_TEXT_BYTES - frame_text_used < FRAME_MAX) {
    forget_frames();
    slot = &slot_of(kernel, image, addr, lookup);
  }
  char name[NAME_MAX];
  if (!symbolize(kernel, image, lookup, name, sizeof(name))) safestrcpy(name, "??", sizeof(name));
  json::Writer w(frame_text + frame_text_used, FRAME_MAX);
  w.begin_object();
  w.key("address").number(addr);
  w.key("symbol").string(name, NAME_MAX - 1);
  w.key("kernel").boolean(kernel);
  w.end_object();
  // The questions about a user pc's code bytes and a kernel function's wait are kept with
  // its text: asked once, too.
  bool ra = !kernel && lookup == addr && caller_in_ra(image, addr);
  u8 wait = kernel ? wait_of(name) : 0;
  *slot = {addr, lookup, image, kernel, ra, wait, frame_text_used, static_cast<u32>(w.size())};
  frame_text_used += slot->len;
  nkept++;
  return *slot;
}

// The text of one frame, from kept_frames if it is there, or rendered and kept. Caller holds
// lock().
[[gnu::always_inline]] inline const KeptFrame &frame(bool kernel, int image, u64 addr, u64 lookup) {
  if (kernel) image = NO_IMAGE;  // a kernel frame's name does not depend on the program
  KeptFrame &kept = slot_of(kernel, image, addr, lookup);
  return kept.len != 0 ? kept : keep_frame(&kept, kernel, image, addr, lookup);
}

// What an opening keeps in dev_state: the generation and the number of samples its document
// holds. Generations start at 1, so a state of 0 means "not read yet".
constexpr u64 snapshot(u32 generation, u32 count) { return (u64(generation) << 32) | count; }
constexpr u32 snapshot_generation(u64 state) { return static_cast<u32>(state >> 32); }
constexpr u32 snapshot_count(u64 state) { return static_cast<u32>(state); }

// wait_name(s), from the kept frames: each kernel frame's function was asked what it waits
// for once, when its text was rendered, so a wait sample costs no lookups of its own, only
// one more look in kept_frames for each kernel frame up to the first that names a wait (a
// frame not kept yet is looked up and kept here, as rendering it would anyway). Frames whose
// name was not found ("??") say nothing, as in wait_name(). Caller holds lock().
const char *kept_wait_name(const Sample &s) {
  int nkernel = s.nkernel < MAX_FRAMES ? s.nkernel : MAX_FRAMES;
  for (int i = 0; i < nkernel; i++) {
    const KeptFrame &f = frame(true, NO_IMAGE, s.frames[i], i == 0 ? s.frames[i] : s.frames[i] - 1);
    if (f.wait != 0) return wait_text(f.wait);
  }
  return WAIT_OTHER;
}

u32 render_sample(const Sample &s, bool first, char *out) {
  json::Writer w(out, PIECE_MAX);
  w.raw(first ? "\n" : ",\n");
  w.begin_object();
  w.key("pid").number(s.pid);
  w.key("tid").number(s.pid);
  w.key("comm").string(image_name(s.image), COMM_MAX);
  w.key("timestamp").number(s.time / (TIMEBASE_HZ / 1'000'000));  // microseconds
  w.key("hart").number(s.hart);
  if (s.mode == Mode::Wait) {
    w.key("mode").string("wait");
    w.key("wchan").string(kept_wait_name(s));
  } else {
    w.key("mode").string(s.mode == Mode::Kernel ? "kernel" : "user");
  }
  w.key("samples").begin_array();
  // The frames as recorded, plus the caller of a system-call stub or of a function caught
  // in its prologue or epilogue, which the trap-time walk cannot see (walk.h, prologue.h):
  // it goes right after the user pc. A sample stays within MAX_FRAMES, so on a full stack
  // the outermost frame gives way.
  int n = 0, nkernel = s.nkernel < MAX_FRAMES ? s.nkernel : MAX_FRAMES;
  for (int i = 0; i < s.nframes && i < MAX_FRAMES && n < MAX_FRAMES; i++) {
    bool kernel = i < nkernel;
    u64 addr = s.frames[i];
    // frames[0] and frames[nkernel] are interrupted pcs; the others return addresses.
    bool is_pc = i == 0 || i == nkernel;
    const KeptFrame &f = frame(kernel, s.image, addr, is_pc ? addr : addr - 1);
    w.verbatim(frame_text + f.at, f.len);
    n++;
    if (i == nkernel && n < MAX_FRAMES && s.user_ra != 0 && f.caller_in_ra) {
      const KeptFrame &caller = frame(false, s.image, s.user_ra, s.user_ra - 1);
      w.verbatim(frame_text + caller.at, caller.len);
      n++;
    }
  }
  w.end_array();
  // Skid (profiler.h, Sample::late): how late, and "irqoff" only when it had been held off.
  w.key("late").number(s.late & LATE_MAX_US);
  if (s.late & LATE_IRQOFF) w.key("irqoff").boolean(true);
  w.end_object();
  if (w.overflow()) panic("render_sample: a sample outgrew its %u-byte piece", PIECE_MAX);
  return static_cast<u32>(w.size());
}

// Copy the part of [text, text+len) that lies in the window; pos is text's document offset.
// Returns false if copying to the user failed.
bool emit(const char *text, u32 len, u64 pos, bool user, u64 addr, u64 off, int n, int *done) {
  u64 want_lo = off + static_cast<u64>(*done);
  u64 want_hi = off + static_cast<u64>(n);
  if (pos + len <= want_lo || pos >= want_hi) return true;
  u64 from = want_lo > pos ? want_lo - pos : 0;
  u64 to = pos + len < want_hi ? len : want_hi - pos;
  if (either_copyout(user, addr + *done, text + from, to - from) < 0) return false;
  *done += static_cast<int>(to - from);
  return true;
}

// The kept piece that starts with sample `index` and holds none from `end` on, or the least
// recently used one rendered anew from `index`, up to `end` at most (a piece kept for a
// newer document can hold more). Caller holds lock(); nullptr if sample `index` is not
// committed.
Piece *piece_of(u32 generation, u32 index, u32 end, u64 pos) {
  Piece *victim = &pieces[0];
  for (Piece &p : pieces) {
    if (p.generation == generation && p.index == index && p.index + p.count <= end) {
      p.used = ++use_clock;
      return &p;
    }
    if (p.used < victim->used) victim = &p;
  }
  if (sample(index) == nullptr) return nullptr;
  victim->generation = generation;
  victim->index = index;
  victim->count = 0;
  victim->pos = pos;
  victim->text = victim->buf + pos % 8;
  victim->len = 0;
  victim->used = ++use_clock;
  for (u32 i = index; i < end && victim->len < PIECE_FILL; i++) {
    const Sample *s = sample(i);
    if (s == nullptr) break;
    victim->len += render_sample(*s, i == 0, victim->text + victim->len);
    victim->count++;
  }
  return victim;
}

int profile_read(bool user, u64 addr, u32 off, int n, u64 &state) {
  if (n <= 0) return 0;
  lock();
  Counters c = counters();
  if (state == 0) state = snapshot(c.generation, c.recorded);  // this opening's document
  u32 generation = snapshot_generation(state), count = snapshot_count(state);
  if (generation != c.generation) {  // cleared since this opening began: its samples are gone
    unlock();
    return -1;
  }
  // Start at the kept piece of this document nearest below off, or at the beginning.
  const Piece *from = nullptr;
  for (const Piece &p : pieces)
    if (p.generation == generation && p.index < count && p.pos <= off &&
        (from == nullptr || p.pos > from->pos))
      from = &p;
  int done = 0;
  bool ok = true;
  u32 i = 0;
  u64 pos = 1;  // after "["
  if (from != nullptr) {
    i = from->index;
    pos = from->pos;
  } else {
    ok = emit("[", 1, 0, user, addr, off, n, &done);
  }
  while (ok && done < n && i < count) {
    Piece *p = piece_of(generation, i, count, pos);
    if (p == nullptr) break;
    ok = emit(p->text, p->len, pos, user, addr, off, n, &done);
    pos += p->len;
    i += p->count;
  }
  if (ok && done < n && i >= count) ok = emit("\n]\n", 3, pos, user, addr, off, n, &done);
  unlock();
  return ok ? done : -1;
}
// LAB profile/procfile STARTER
// // The window [off, off+n) of /proc/profile, copied to addr (a user address if user is
// // true); returns the number of bytes copied, 0 at the end, -1 if the copy failed. `state`
// // belongs to the open file: zero when it is opened, kept between its reads.
// int profile_read([[maybe_unused]] bool user, [[maybe_unused]] u64 addr,
//                  [[maybe_unused]] u32 off, [[maybe_unused]] int n,
//                  [[maybe_unused]] u64 &state) {
//   return 0;
// }
// LAB profile/procfile END

namespace {

// ` PID PID ...` for the processes `picked` chooses, or ` none`; then the end of the line.
template <typename Pick>
void pid_list(ProcText &out, Pick picked) {
  int shown = 0;
  for (Proc &p : procs) {
    if (picked(p)) {
      out.ch(' ').num(static_cast<u64>(p.pid));
      shown++;
    }
  }
  if (shown == 0) out.str(" none");
  out.ch('\n');
}

}  // namespace

void render_profstat(ProcText &out) {
  lock();
  Counters c = counters();
  unlock();
  out.str("profiling:");
  if (all_mode)
    out.str(" all\n");
  else
    pid_list(out, [](const Proc &p) { return p.prof.profiled != 0; });
  // The processes whose forks are sampled too (PROF_FOLLOW, sysprofile.cc).
  out.str("following:");
  pid_list(out, [](const Proc &p) { return p.prof.follow != 0; });
  // The sampler's count of profiled processes, and the flags it counts, by scanning the
  // table (sysprofile.cc keeps them equal; a test compares them).
  int flagged = 0;
  for (Proc &p : procs) flagged += p.prof.profiled ? 1 : 0;
  out.str("profiled: ").num(static_cast<u64>(nprofiled)).ch('\n');
  out.str("flagged: ").num(static_cast<u64>(flagged)).ch('\n');
  out.str("rate: ").num(rate()).ch('\n');
  // What takes the samples: the timer at that rate, or the instruction clock (iclock.cc).
  if (u64 n = clock_every; n != 0)
    out.str("clock: instructions ").num(n).ch('\n');
  else
    out.str("clock: timer\n");
  out.str("recorded: ").num(c.recorded).ch('\n');
  out.str("dropped: ").num(c.dropped).ch('\n');
  out.str("missed: ").num(c.missed).ch('\n');
  // Counted with instret (sampler.cc, tick): under QEMU's -icount shift=0 instructions,
  // exactly, and as many nanoseconds of guest time.
  out.str("sample cost ns: ").num(c.cost_ns).ch('\n');
  out.str("taken: ").num(c.taken).ch('\n');
  // Of those taken, the wait samples of sleeping processes, and what one cost the sweep.
  out.str("wait samples: ").num(c.waits).ch('\n');
  out.str("wait cost ns: ").num(c.wait_cost).ch('\n');
  out.str("capacity: ").num(CAPACITY).ch('\n');
}

}  // namespace

void report_init() {
  procfs_register_reader(PROC_PROFILE, profile_read);
  procfs_register(PROC_PROFSTAT, render_profstat);
}

void report_reset() {
  // LAB profile/procfile BEGIN: forget what profile_read keeps between reads (profile CLEAR)
  for (Piece &p : pieces) p.generation = 0;
  forget_frames();  // the image slots, by which user frames were kept, are emptied too
  // LAB profile/procfile STARTER
  // LAB profile/procfile END
}

}  // namespace prof
