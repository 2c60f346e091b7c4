// labwords: counts words in a hash table, for the profiler to explain (labs/profile task 3).
//
//   labwords [SECONDS [fnv]]     count for SECONDS (3 by default), then print the top words
//
// The program makes a vocabulary of 1500 made-up words, then draws words from it at random,
// favouring some over others, and counts how often each one comes up, in a hash table of
// 4096 slots with linear probing: a word goes in the slot its hash names, or, if that slot
// holds another word, the next free one after it.
//
//   main -> count_round -> next_word       picks the next word
//                       -> find_slot       finds the word's slot, comparing it with the
//                            -> same_word  word in each slot it passes
//
// At the end it prints the five most frequent words. Which function does the time go to,
// and why? Profile it and find out before reading the code of word_hash() closely. With
// `fnv` as the second argument it uses a different hash function; compare the two profiles.
#include "lib/user.h"

namespace {

constexpr int VOCABULARY = 1500;
constexpr int MAX_WORD = 8;  // letters, plus the terminating NUL
constexpr int SLOTS = 4096;
constexpr int ROUND = 2000;  // words counted between looks at the clock

struct Slot {
  char word[MAX_WORD];
  unsigned count;
};

char vocabulary[VOCABULARY][MAX_WORD];
Slot table[SLOTS];  // static: far larger than the one-page user stack
bool use_fnv = false;

unsigned long rng_state = 88172645463325252UL;

unsigned long next_random() {
  rng_state = xorshift(rng_state);
  return rng_state;
}

void make_vocabulary() {
  for (int w = 0; w < VOCABULARY; w++) {
    int len = 3 + static_cast<int>(next_random() % 5);  // 3 to 7 letters
    for (int i = 0; i < len; i++) vocabulary[w][i] = static_cast<char>('a' + next_random() % 26);
    vocabulary[w][len] = '\0';
  }
}

}  // namespace

// C linkage keeps the names in the profile plain.
extern "C" {

// The hash of a word: the sum of its letters, or FNV-1a with `fnv`.
__attribute__((noinline)) unsigned word_hash(const char *w) {
  unsigned h = use_fnv ? 2166136261u : 0;
  for (; *w != '\0'; w++) h = use_fnv ? (h ^ static_cast<unsigned char>(*w)) * 16777619u : h + *w;
  return h;
}

__attribute__((noinline)) bool same_word(const char *a, const char *b) {
  while (*a != '\0' && *a == *b) {
    a++;
    b++;
  }
  return *a == *b;
}

// The slot that holds w, or the free slot where it belongs.
__attribute__((noinline)) Slot *find_slot(const char *w) {
  for (unsigned i = word_hash(w) % SLOTS;; i = (i + 1) % SLOTS) {
    Slot &s = table[i];
    if (s.count == 0 || same_word(s.word, w)) return &s;
  }
}

// A word from the vocabulary; low-numbered words come up more often.
__attribute__((noinline)) const char *next_word() {
  unsigned long r = next_random();
  int w = static_cast<int>((r % VOCABULARY) * ((r >> 32) % VOCABULARY) / VOCABULARY);
  return vocabulary[w];
}

__attribute__((noinline)) void count_round() {
  for (int i = 0; i < ROUND; i++) {
    const char *w = next_word();
    Slot *s = find_slot(w);
    if (s->count == 0) strcpy(s->word, w);
    s->count++;
  }
}

}  // extern "C"

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 3;
  use_fnv = argc > 2 && strcmp(argv[2], "fnv") == 0;
  if (argc > 3 || seconds < 0 || (argc == 3 && !use_fnv)) usage_exit("labwords [SECONDS [fnv]]\n");
  make_vocabulary();
  int deadline = uptime() + 10 * seconds;
  unsigned long words = 0;
  while (uptime() < deadline) {
    count_round();
    words += ROUND;
  }
  // The five most frequent words: five passes over the table are plenty fast.
  printf("labwords: %lu words counted\n", words);
  unsigned last = ~0u;
  for (int k = 0; k < 5; k++) {
    Slot *best = nullptr;
    for (Slot &s : table)
      if (s.count < last && (best == nullptr || s.count > best->count)) best = &s;
    if (best == nullptr || best->count == 0) break;
    printf("  %s %u\n", best->word, best->count);
    last = best->count;
  }
  return 0;
}
