// The sampling profiler (kern/profile/).
//
// How it fits together:
//
//   timer trap (kern/trap/timer.cc)
//     -> tick() (sampler.cc): is the process on this hart being profiled? if so
//     -> record() (sampler.cc): pid, hart, time, how late, mode, pc and the kernel and user
//        frame-pointer chains into the next free slot of a static sample array. No allocation, no
//        symbol lookup, no sleeping, no lock another hart can hold for long.
//     -> sweep_waits() (sampler.cc): once a period, on one hart, a wait sample of each
//        profiled process that is asleep (Mode::Wait), through the same record().
//   profile(2) (sysprofile.cc): switch sampling on and off per process or for all, set the
//        rate, clear. The symbols of profiled processes' executables are copied and kept
//        (images.cc) so that their samples can be symbolized later, even after the process
//        exits or execs or its file is unlinked.
//   /proc/profile (report.cc): renders the samples as JSON, symbolizing each address only
//        now: kernel addresses against the kernel's embedded table, user addresses against
//        the copy of the executable's own symbol table (symbolize.cc); and naming what a
//        wait sample waits for, from its kernel chain.
//   /proc/profstat (report.cc): the state, as `key: value` lines.
#pragma once

#include "abi/profile.h"
#include "lib/types.h"
#include "profile/profstate.h"
#include "profile/prologue.h"

struct Proc;
struct Inode;
struct KernelFrame;

namespace prof {

// Capacity of the sample array, fixed at build time (make PROFILE_CAPACITY=n).
#ifndef PROFILE_CAPACITY
#define PROFILE_CAPACITY 65536  // > 60 s at 1000 Hz
#endif
inline constexpr u32 CAPACITY = PROFILE_CAPACITY;
inline constexpr int MAX_FRAMES = 32;  // per sample: kernel frames first, then user frames
// The longest function name symbolize() gives, with its NUL: every kernel name (the longest,
// a demangled C++ name, is 151 characters) fits whole; a longer user name is cut to
// NAME_MAX - 1 bytes, the last three of them "...". /proc/profile escapes each byte that is
// not printable ASCII as six (\u00XX), so one name can take 6 * (NAME_MAX - 1) bytes of JSON.
inline constexpr u32 NAME_MAX = 160;

// User and Kernel: where the timer trap found a process running on a hart. Wait: a process
// found asleep by the once-a-period sweep (sampler.cc, sweep_waits); its kernel chain is
// where it went to sleep, and what it waits for is named when the sample is rendered
// (report.cc, WAIT_KINDS).
enum class Mode : u8 { User = 0, Kernel = 1, Wait = 2 };

// One sample, as the trap handler records it. `seq` is written last: a slot whose seq
// does not match (generation, index) is not (yet) part of the profile.
struct Sample {
  u64 seq;
  u32 pid;
  i32 image;  // index into the image table for the user frames, or NO_IMAGE
  u64 time;   // `time` CSR at the sample (10 MHz since boot)
  u16 hart;
  Mode mode;   // where the trap came from
  u8 nkernel;  // frames[0, nkernel) are kernel addresses
  u8 nframes;  // frames[nkernel, nframes) are user addresses
  u8 pad0;
  u16 late;                // how late the sample was taken: see late_mark() below
  u64 user_ra;             // the user ra register (see in_syscall_stub in walk.h)
  u64 frames[MAX_FRAMES];  // innermost first; frames[0] is the pc
};
static_assert(sizeof(Sample) == 40 + 8 * MAX_FRAMES);

// Skid: a sampling interrupt that comes due while interrupts are off on the hart (under a
// spinlock, between an ecall and usertrap turning them on, or in another interrupt's
// handler) waits, and is taken where they come back on: at pop_off(), in usertrap(), at
// the end of a kernel trap, at the return to user mode. Each sample
// says how late it was. Sample::late holds the microseconds between the deadline and the
// trap, at most LATE_MAX_US, and LATE_IRQOFF when the interrupt had been held off: it was
// already pending when interrupts came back on (Cpu::held_off, kern/proc/proc.h).
inline constexpr u16 LATE_MAX_US = 0x7fff;
inline constexpr u16 LATE_IRQOFF = 0x8000;

// --- sampler.cc: the trap side ---
// Called from the timer interrupt on every hart. kf is non-null when the trap came from
// supervisor mode; `held` is LATE_IRQOFF if the interrupt had been held off
// (Cpu::held_off), else 0. Cheap when nothing is being profiled.
void tick(KernelFrame *kf, u64 now, u64 held);
// Sampling period in `time` ticks, and whether any process is being profiled.
bool active();
// Reserve-and-fill, exposed for the benchmark and tests. kf is null for a trap from user
// mode, and for a wait sample (p is then Sleeping, and the caller holds p->lock). `late`
// goes into Sample::late as it is.
void record(Proc *p, KernelFrame *kf, u64 now, u64 late);
// The wait samples of one sampling period: record() for every profiled process that is
// asleep. Called from tick(), with the process this hart runs (or null); runs on one hart a
// period however many harts tick. Only the timer clock sweeps: while the instruction clock
// takes the samples (PROF_CLOCK), tick() returns first, and there are no wait samples.
void sweep_waits(u64 now, Proc *running);
// record(), with what it cost counted for /proc/profstat: how either clock takes a sample.
// `start` is instret read at the caller's first line, so the cost counts the clock's own
// work for the sample too (and every line a lab's regions run for it).
void take(Proc *p, KernelFrame *kf, u64 now, u64 start, u64 late);

// --- iclock.cc: the instruction clock ---
void iclock_init();               // boot hart, before the others start: is there one?
void iclock_init_hart();          // every hart: take its counter-overflow interrupt
int set_clock(int instructions);  // PROF_CLOCK: 0, or -1 if refused
// On a timer interrupt: starts or stops this hart's counter as PROF_CLOCK last said.
// True if the instruction clock takes the samples. Needed only while iclock_involved().
bool iclock_sync();
extern volatile u64 clock_every;     // what PROF_CLOCK last set
extern volatile int clock_counting;  // harts whose counter runs
inline bool iclock_involved() { return clock_every != 0 || clock_counting != 0; }
void counter_overflow(KernelFrame *kf);  // the counter-overflow interrupt

// Counters and the array, for the reader (report.cc) and the syscall.
struct Counters {
  u32 recorded;   // committed samples in the current generation
  u64 dropped;    // samples lost because the array was full
  u64 missed;     // sampling periods skipped because the timer interrupt came late
  u64 cost_ns;    // average instret count of tick() with a sample (instructions, and
                  // nanoseconds, under -icount shift=0)
  u64 taken;      // calls of record(): recorded + dropped, but for those that met a clear
  u64 waits;      // of those, wait samples: calls of record() for a sleeping process
  u64 wait_cost;  // average instret count of one wait sample in the sweep (the lock, the
                  // check and record()); cost_ns averages the other taken - waits
  u32 generation;
};
Counters counters();
const Sample *sample(u32 index);  // nullptr if index is not a committed sample
void set_rate(u32 hz);
u32 rate();
// Discard every sample; waits for samples being written on other harts to finish.
void clear_samples();

// Who is profiled. `all` mode samples every process.
extern volatile bool all_mode;
// The number of processes with prof.profiled set; it changes with a flag, under that
// process's lock (sysprofile.cc).
extern volatile int nprofiled;

// --- images.cc: what is kept of each sampled program, for symbolization ---
inline constexpr int NIMAGE = 32;  // programs kept until `profile clear`
// A program's symbols and ecall addresses, copied into the profiler's own memory when it
// was registered (symbolize.cc makes the copy, images.cc owns the memory).
struct ImageSymbols {
  const u8 *table = nullptr;  // a lib/symtab.h table (Header, Entries, strings)
  u32 table_len = 0;
  const u64 *ecalls = nullptr;  // addresses of the ecall instructions in its code, sorted
  u32 necalls = 0;
  const profwalk::Window *windows = nullptr;  // its prologues and epilogues (prologue.h)
  u32 nwindows = 0;
};
// Register p's current executable (a copy of what symbolization needs of its exe inode)
// and set p->prof.image. Process context, with prof::lock() held.
void attach_image(Proc *p);
// The two below: caller holds prof::lock().
const ImageSymbols *image_symbols(int image);  // nullptr if none
const char *image_name(int image);
// Drop every image; process context, with prof::lock() held, outside any spinlock.
void release_images();

// --- the hooks the rest of the kernel calls ---
void on_exec(Proc *p);  // after exec committed the new image; takes the profiler's lock
// child->lock held: the child runs the parent's image, and is sampled if the parent follows.
void on_fork(Proc *parent, Proc *child);
// After on_fork, with no lock held, before the child can run: a child that will be sampled
// registers its program under the profiler's lock (a `profile clear` may have renumbered it).
void after_fork(Proc *child);
void on_exit(Proc *p);  // p->lock held, as exit() makes p a Zombie: stops sampling p

// --- symbolize.cc ---
// Copy what symbolization needs of ip (locked) into buf, at most cap bytes, and describe it
// in *out. Returns the bytes used. Names are cut as symbolize() cuts them (to NAME_MAX - 1
// bytes, ending in "..."); a table that does not fit is cut after its last whole symbol.
u32 load_symbols(Inode *ip, u8 *buf, u32 cap, ImageSymbols *out);
// Name of the function containing addr. `user` selects the image's table; kernel addresses
// use the kernel's. Writes a NUL-terminated name into buf (len >= 4 bytes, NAME_MAX to hold
// any name whole) and returns true, or returns false if unknown. A name longer than len - 1
// bytes is cut to len - 1, the last three "...".
bool symbolize(bool kernel, int image, u64 addr, char *buf, u32 len);
void symbolize_reset();  // forget cached lookups (after clear)
// Is user address pc inside a system-call stub of the image? (Reads the program's code.)
bool stub_at(int image, u64 pc);
// Is the caller of a user pc in ra rather than in the frame chain: in a system-call stub, or
// in a prologue or epilogue (prologue.h)?
bool caller_in_ra(int image, u64 pc);

// --- report.cc ---
void report_init();  // registers /proc/profile and /proc/profstat
// Forget what /proc/profile keeps between reads (after clear); with prof::lock() held.
void report_reset();

// --- sysprofile.cc ---
// A serialising lock for the reader, clear and the syscall's slow paths.
void lock();
void unlock();
bool holding_lock();  // by this process

}  // namespace prof
