// tformat: snprintf (user/lib/printf.cc) formats random values into buffers of random sizes.
//
//   tformat SEED CASES
//
// For each case it picks a conversion, a value and a capacity (0 to 24 bytes), calls
// snprintf into a buffer with guard bytes on both sides, and prints one line
//
//   tformat: FORMAT|VALUE|CAP|RETURNED|TEXT
//
// VALUE is the argument: for a number its 64 bits in 16 hex digits, written by hand here
// rather than by the formatter under test, for a string the string.
// which the host checks against its own formatting (tests/qemu/test_userlib.py): TEXT must be
// the first CAP - 1 bytes of the whole text and RETURNED its full length. A write outside
// the CAP bytes it was given is reported here, as a line starting with "tformat: FAIL".
#include "lib/user.h"

namespace {

constexpr int MAX_CAP = 24;
constexpr char GUARD = '#';

// The conversions tried, each with one argument.
enum class Arg { INT, UINT, LONG, ULONG, STR };
struct Conversion {
  const char *format;
  Arg arg;
};
constexpr Conversion CONVERSIONS[] = {
    {"%d", Arg::INT},    {"%5d", Arg::INT},   {"%-6d", Arg::INT},  {"%05d", Arg::INT},
    {"x=%d!", Arg::INT}, {"%u", Arg::UINT},   {"%x", Arg::UINT},   {"%08x", Arg::UINT},
    {"%ld", Arg::LONG},  {"%lu", Arg::ULONG}, {"%lx", Arg::ULONG}, {"%s", Arg::STR},
    {"%-9s;", Arg::STR}, {"%7s", Arg::STR},   {"%s%%", Arg::STR},
};
constexpr const char *WORDS[] = {"", "a", "tern", "profile", "a longer piece of text"};

// A value of every size, often near the edges: 0, 1, -1, the largest and smallest.
unsigned long pick_bits(Rng &rng) {
  switch (rng.below(4)) {
    case 0: return rng.below(3) - 1UL;
    case 1: return 1UL << rng.below(64);
    case 2: return rng.below(100000);
    default: return rng.next();
  }
}

// The 64 bits in 16 hex digits, without the formatter under test.
void hex_bits(unsigned long bits, char *out) {
  for (int i = 15; i >= 0; i--, bits >>= 4) out[i] = "0123456789abcdef"[bits & 0xf];
  out[16] = '\0';
}

// Formats one case into out; returns what snprintf returned.
int format_case(const Conversion &c, unsigned long bits, const char *word, char *out, int cap) {
  switch (c.arg) {
    case Arg::INT: return snprintf(out, cap, c.format, static_cast<int>(bits));
    case Arg::UINT: return snprintf(out, cap, c.format, static_cast<unsigned>(bits));
    case Arg::LONG: return snprintf(out, cap, c.format, static_cast<long>(bits));
    case Arg::ULONG: return snprintf(out, cap, c.format, bits);
    case Arg::STR: return snprintf(out, cap, c.format, word);
  }
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[2]) < 1) usage_exit("tformat SEED CASES\n");
  int seed = atoi(argv[1]);
  int cases = atoi(argv[2]);
  printf("tformat: seed %d, %d cases\n", seed, cases);
  Rng rng{0x9e3779b97f4a7c15UL ^ static_cast<unsigned long>(seed)};
  int failures = 0;
  for (int k = 0; k < cases; k++) {
    const Conversion &c = CONVERSIONS[rng.below(sizeof(CONVERSIONS) / sizeof(CONVERSIONS[0]))];
    unsigned long bits = pick_bits(rng);
    const char *word = WORDS[rng.below(sizeof(WORDS) / sizeof(WORDS[0]))];
    int cap = static_cast<int>(rng.below(MAX_CAP + 1));
    char guarded[MAX_CAP + 2];
    memset(guarded, GUARD, sizeof(guarded));
    int returned = format_case(c, bits, word, guarded + 1, cap);
    bool inside = guarded[0] == GUARD;
    for (int i = cap + 1; i < static_cast<int>(sizeof(guarded)); i++)
      inside = inside && guarded[i] == GUARD;
    if (!inside) {
      printf("tformat: FAIL case %d: snprintf(\"%s\") wrote outside its %d bytes\n", k, c.format,
             cap);
      failures++;
      continue;
    }
    char value[17];
    if (c.arg != Arg::STR) hex_bits(bits, value);
    printf("tformat: %s|%s|%d|%d|%s\n", c.format, c.arg == Arg::STR ? word : value, cap, returned,
           cap > 0 ? guarded + 1 : "");
  }
  printf("tformat: %s\n", failures == 0 ? "done" : "FAILED");
  return failures == 0 ? 0 : 1;
}
