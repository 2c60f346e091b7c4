// profile: Tally, the per-function counts of `profile top` (tally.h).
#include "tally.h"

#include "abi/profile.h"
#include "lib/user.h"
#include "profile.h"

namespace prof {

Sample scratch_sample;
constinit Processes processes;

bool Tally::init() {
  m_slots = static_cast<FunctionCount *>(malloc(SLOTS * sizeof(FunctionCount)));
  if (m_slots == nullptr) return false;
  for (int i = 0; i < SLOTS; i++) m_slots[i] = FunctionCount{};
  m_overflow.name = "(other functions)";
  return true;
}

void Tally::add(const Sample &s) {
  if (s.nframes == 0) return;
  int serial = m_samples++;
  find(s.frames[0], s.pid)->self++;
  for (int i = 0; i < s.nframes; i++) {
    FunctionCount *f = find(s.frames[i], s.pid);
    if (f->last_sample != serial) {
      f->last_sample = serial;
      f->incl++;
    }
  }
}

void Tally::print_top(int n, const Processes &procs) {
  FunctionCount **order = static_cast<FunctionCount **>(malloc((m_used + 1) * sizeof(void *)));
  if (order == nullptr) fail("out of memory");
  int count = 0;
  for (int i = 0; i < SLOTS; i++)
    if (m_slots[i].name != nullptr) order[count++] = &m_slots[i];
  if (m_overflow.incl > 0) order[count++] = &m_overflow;
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
  printf("%7s %6s %7s %6s %6s  %-15s %s\n", "self", "%", "incl", "%", "pid", "process", "function");
  for (int i = 0; i < n; i++) {
    const FunctionCount &f = *order[i];
    int self = tenths_of_percent(f.self), incl = tenths_of_percent(f.incl);
    char pid[12];
    if (f.pid < 0)
      strcpy(pid, "-");
    else
      snprintf(pid, sizeof(pid), "%d", f.pid);
    printf("%7d %3d.%d%% %7d %3d.%d%% %6s  %-15s %s%s\n", f.self, self / 10, self % 10, f.incl,
           incl / 10, incl % 10, pid, f.pid < 0 ? "-" : procs.comm(f.pid), f.kernel ? "[k] " : "",
           f.name);
  }
  if (count > n) printf("(%d more row%s left out)\n", count - n, count - n == 1 ? "" : "s");
  free(order);
}

unsigned Tally::hash(const char *s, bool kernel, int pid) {
  unsigned h = (kernel ? 2166136261u ^ 0x5bd1e995u : 2166136261u) ^ pid * 0x9e3779b9u;  // FNV-1a
  for (; *s != '\0'; s++) h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
  return h;
}

bool Tally::before(const FunctionCount &a, const FunctionCount &b) {
  if (a.self != b.self) return a.self > b.self;
  return a.incl > b.incl;
}

int Tally::tenths_of_percent(int part) const {
  return m_samples == 0 ? 0 : static_cast<int>((part * 1000L + m_samples / 2) / m_samples);
}

FunctionCount *Tally::find(const Frame &f, int pid) {
  const char *name = f.name[0] != '\0' ? f.name : "??";
  for (unsigned i = hash(name, f.kernel, pid) % SLOTS;; i = (i + 1) % SLOTS) {
    FunctionCount &slot = m_slots[i];
    if (slot.name == nullptr) {
      if (m_used >= MAX_USED) return &m_overflow;
      char *copy = static_cast<char *>(malloc(strlen(name) + 1));
      if (copy == nullptr) return &m_overflow;
      strcpy(copy, name);
      slot.name = copy;
      slot.kernel = f.kernel;
      slot.pid = pid;
      m_used++;
      return &slot;
    }
    if (slot.kernel == f.kernel && slot.pid == pid && strcmp(slot.name, name) == 0) return &slot;
  }
}

void Processes::note(const Sample &s) {
  if (m_last < 0 || m_entries[m_last].pid != s.pid) {
    m_last = -1;
    for (int i = 0; i < m_count; i++)
      if (m_entries[i].pid == s.pid) m_last = i;
    if (m_last < 0) {
      if (m_count == MAX) return;
      m_last = m_count++;
      m_entries[m_last].pid = s.pid;
      m_entries[m_last].comm[0] = '\0';
      m_entries[m_last].samples = 0;
    }
  }
  if (s.comm[0] != '\0') strcpy(m_entries[m_last].comm, s.comm);
  m_entries[m_last].samples++;
}

const char *Processes::comm(int pid) const {
  for (int i = 0; i < m_count; i++)
    if (m_entries[i].pid == pid) return m_entries[i].comm[0] != '\0' ? m_entries[i].comm : "?";
  return "?";
}

void Processes::print_followed(int root) const {
  for (int i = 0; i < m_count; i++) {
    const Entry &e = m_entries[i];
    if (e.pid == root) continue;
    printf("profile: pid %d (%s), forked by pid %d: %d samples\n", e.pid, comm(e.pid),
           profile(e.pid, PROF_FOLLOWED, 0), e.samples);
  }
}

bool in_family(int pid, int root) {
  // A report asks once a sample: keep the last verdicts, by pid.
  static constexpr int KEPT = 64;
  static struct {
    int pid, root;
    bool in;
  } kept[KEPT];
  static int next;
  for (const auto &k : kept)
    if (k.pid == pid && k.root == root) return k.in;
  // Each answer is a smaller pid (a parent forks before its child), so the climb ends.
  int p = pid;
  while (p > root) p = profile(p, PROF_FOLLOWED, 0);
  bool in = p == root;
  kept[next] = {pid, root, in};
  next = (next + 1) % KEPT;
  return in;
}

}  // namespace prof
