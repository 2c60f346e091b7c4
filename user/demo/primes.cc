// primes: counts the primes below N in one of two ways, to show that a profile points at
// the algorithm, not only at the code.
//
//   primes naive N     trial division: test each number on its own
//   primes sieve N     the sieve of Eratosthenes: cross out the multiples of each prime
//
// Both print the same count, then how long they took (on QEMU, for N = 1000000):
//
//   primes: naive: 78498 primes below 1000000 in 529 ms
//   primes: sieve: 78498 primes below 1000000 in 29 ms
//
// The naive way asks of every number n whether any d with d * d <= n divides it. For the
// primes, the answer is no only after trying every such d, about sqrt(n) divisions each.
// Under the profiler almost every sample lands in `is_prime`, the function that divides;
// making it a little faster would help a little. The sieve never divides: for each prime p
// it walks through the multiples of p and marks them composite, about N log log N steps in
// all, and a profile of it has a couple of dozen samples where the naive one has hundreds.
// The lesson: the first thing to change about a hot function may be whether it is called
// at all.
#include "lib/user.h"

namespace {

constexpr int MAX_N = 4000000;  // the sieve's table is N bytes of heap

// A decimal number from 1 to MAX_N, or 0 if `s` is anything else.
int parse_limit(const char *s) {
  int n = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9' || n > MAX_N) return 0;
    n = n * 10 + (*s - '0');
  }
  return n <= MAX_N ? n : 0;
}

[[noreturn]] void usage() {
  fprintf(2, "usage: primes naive|sieve N   (1 <= N <= %d)\n", MAX_N);
  exit(1);
}

}  // namespace

// C linkage keeps the names in a profile plain: `is_prime`, not a mangled name.
extern "C" {

__attribute__((noinline, noclone)) bool is_prime(int n) {
  if (n < 2) return false;
  for (int d = 2; d * d <= n; d++)
    if (n % d == 0) return false;
  return true;
}

__attribute__((noinline, noclone)) int count_naive(int limit) {
  int count = 0;
  for (int n = 2; n < limit; n++)
    if (is_prime(n)) count++;
  return count;
}

// composite[n] ends up 1 for every n below limit that has a smaller prime factor.
__attribute__((noinline, noclone)) int count_sieve(int limit) {
  char *composite = static_cast<char *>(malloc(limit));
  if (composite == nullptr) {
    fprintf(2, "primes: no memory for a table of %d bytes\n", limit);
    exit(1);
  }
  memset(composite, 0, limit);
  int count = 0;
  for (long p = 2; p < limit; p++) {
    if (composite[p]) continue;
    count++;
    // Smaller multiples of p were crossed out already, by p's smaller prime factors.
    for (long m = p * p; m < limit; m += p) composite[m] = 1;
  }
  free(composite);
  return count;
}

}  // extern "C"

int main(int argc, char **argv) {
  if (argc != 3) usage();
  bool naive = strcmp(argv[1], "naive") == 0;
  if (!naive && strcmp(argv[1], "sieve") != 0) usage();
  int limit = parse_limit(argv[2]);
  if (limit == 0) usage();

  unsigned long start = now_ms();
  int count = naive ? count_naive(limit) : count_sieve(limit);
  unsigned long took = now_ms() - start;
  printf("primes: %s: %d primes below %d in %lu ms\n", argv[1], count, limit, took);
  return 0;
}
