// tfault: checks that bad memory accesses kill only the process that makes them.
//
//   tfault KIND     KIND is null, text, kernel, guard, maxva, allones or all
//
// For each kind a child process makes one forbidden access and the parent reports how the
// child ended, as "tfault KIND: child exit status S". The kernel should kill the child, so
// S should be -1; a child that survives its access exits with 1 instead, which shows up as
// a wrong status. The accesses:
//
//   null    store through a null pointer (address 0 is the program's read-only text)
//   text    store into the program's own code (the first bytes of main)
//   kernel  load from 0x80000000, where the kernel lives
//   guard   store into the guard page just below the stack page
//   maxva   load from 2^38, the first address past Sv39's user range
//   allones load from 0xffffffffffffffff, the very top of the address space
//   all     each of the above in turn, one line each
//
// Each kind uses exactly one child, so the kernel prints exactly one "killed pid N" line.
//
// Each access is a single load or store instruction written in inline assembly: a null
// dereference in C++ is undefined behaviour, and the compiler would be free to replace it
// with a trap instruction or drop it, which would test something else.
#include "lib/user.h"

int main(int argc, char **argv);

namespace {

constexpr unsigned long PAGE_SIZE = 4096;
constexpr int SURVIVED = 1;  // exit status of a child whose access did not fault

void store_byte(unsigned long addr) { asm volatile("sb zero, 0(%0)" : : "r"(addr) : "memory"); }

void load_byte(unsigned long addr) {
  unsigned long value;
  asm volatile("lb %0, 0(%1)" : "=r"(value) : "r"(addr) : "memory");
}

// Runs one faulting access in a child and returns the child's exit status.
int in_child(void (*access)(unsigned long), unsigned long addr) {
  int pid = fork();
  if (pid < 0) {
    fprintf(2, "tfault: fork failed\n");
    exit(1);
  }
  if (pid == 0) {
    access(addr);
    exit(SURVIVED);
  }
  int status = 0;
  if (wait(&status) != pid) {
    fprintf(2, "tfault: wait failed\n");
    exit(1);
  }
  return status;
}

// The guard page is the page right below the one holding the stack; any local variable
// tells which page that is (the stack is a single page).
unsigned long guard_page_address() {
  volatile char local = 0;
  unsigned long stack_page = reinterpret_cast<unsigned long>(&local) & ~(PAGE_SIZE - 1);
  return stack_page - PAGE_SIZE / 2;
}

// Returns the status to report for one kind, or false if the kind is unknown.
bool run_kind(const char *kind, int &status) {
  if (strcmp(kind, "null") == 0) {
    status = in_child(store_byte, 0);
  } else if (strcmp(kind, "text") == 0) {
    status = in_child(store_byte, reinterpret_cast<unsigned long>(&main));
  } else if (strcmp(kind, "kernel") == 0) {
    status = in_child(load_byte, 0x80000000UL);
  } else if (strcmp(kind, "guard") == 0) {
    status = in_child(store_byte, guard_page_address());
  } else if (strcmp(kind, "maxva") == 0) {
    status = in_child(load_byte, 1UL << 38);
  } else if (strcmp(kind, "allones") == 0) {
    status = in_child(load_byte, ~0UL);
  } else {
    return false;
  }
  return true;
}

constexpr const char *ALL_KINDS[] = {"null", "text", "kernel", "guard", "maxva", "allones"};

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) usage_exit("tfault null|text|kernel|guard|maxva|allones|all\n");
  if (strcmp(argv[1], "all") == 0) {
    int failures = 0;
    for (const char *kind : ALL_KINDS) {
      int status;
      run_kind(kind, status);
      printf("tfault %s: child exit status %d\n", kind, status);
      if (status != -1) failures++;
    }
    return failures == 0 ? 0 : 1;
  }
  int status;
  if (!run_kind(argv[1], status)) {
    fprintf(2, "tfault: unknown kind %s\n", argv[1]);
    usage_exit("tfault null|text|kernel|guard|maxva|allones|all\n");
  }
  printf("tfault %s: child exit status %d\n", argv[1], status);
  return status == -1 ? 0 : 1;
}
