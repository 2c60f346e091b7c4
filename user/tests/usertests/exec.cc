// usertests: exec. Arguments at and past the limits, and files that are not programs.
//
// exec replaces the calling process's memory with a program read from an ELF file, and
// hands it its arguments on the new stack page. Everything that can be wrong with the
// request must make exec return -1 to the *old* program, intact: too many arguments (more
// than MAXARG), arguments too big for the stack page, pointers the process cannot read,
// and files that are not runnable programs: empty, text, truncated in the header, the
// program headers or the segments, for another machine, or describing segments that are
// misaligned, overlapping, absurdly large or outside the file.
//
// The program that a successful exec runs here is usertests itself, in its probe mode
// (`usertests --probe ARG...`, see main.cc), which exits at once with a status that
// encodes what it received: argc + 100 * (total length of the arguments after --probe).
// So the test knows both that exec worked and that the arguments arrived whole.
//
// Each exec happens in a child, because a wrong success would replace the test itself.
#include "usertests.h"

namespace ut {

namespace {

constexpr int EXEC_RETURNED = 66;  // exit status of a child whose exec returned -1
constexpr const char *SELF = "/usertests";

// Execs path with argv in a child; returns the child's exit status. If exec returns -1
// the child first checks that its memory survived (the canary), then exits EXEC_RETURNED.
volatile unsigned long exec_canary = 0x5eed5eed;

int exec_status(const char *path, char **argv) {
  int pid = fork();
  CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    int r = exec(path, argv);
    CHECK(exec_canary == 0x5eed5eed, "a failed exec changed the caller's memory");
    exit(r == -1 ? EXEC_RETURNED : EXEC_RETURNED + 1);
  }
  return reap(pid);
}

int probe_status(char **argv) {
  int argc = 0;
  long payload = 0;
  for (; argv[argc] != nullptr; argc++) {
    if (argc >= 2) payload += strlen(argv[argc]);
  }
  return argc + 100 * static_cast<int>(payload);
}

// Up to 40 arguments: "usertests", "--probe", then payload strings.
char *exec_args[MAXARG + 10];
char exec_strings[MAXARG + 10][8];

}  // namespace

// MAXARG arguments work; one more is refused.
void test_execargs() {
  exec_args[0] = const_cast<char *>("usertests");
  exec_args[1] = const_cast<char *>("--probe");
  for (int i = 2; i < MAXARG + 1; i++) {
    numbered(exec_strings[i], "a", i * 37);
    exec_args[i] = exec_strings[i];
  }
  exec_args[MAXARG] = nullptr;
  int want = probe_status(exec_args);
  int got = exec_status(SELF, exec_args);
  CHECK(got == want, "exec with %d arguments: status %d, expected %d", MAXARG, got, want);

  exec_args[MAXARG] = exec_strings[2];
  exec_args[MAXARG + 1] = nullptr;
  got = exec_status(SELF, exec_args);
  CHECK(got == EXEC_RETURNED, "exec with %d arguments: status %d, expected -1 from exec",
        MAXARG + 1, got);

  // Far too many: the kernel must stop reading the array, not overrun its own copy.
  for (int i = 2; i < MAXARG + 9; i++) exec_args[i] = exec_strings[2];
  exec_args[MAXARG + 9] = nullptr;
  got = exec_status(SELF, exec_args);
  CHECK(got == EXEC_RETURNED, "exec with %d arguments: status %d", MAXARG + 9, got);

  // No arguments at all (argv = {0}) is allowed. The probe cannot be run that way (with no
  // --probe it would be the whole suite), so /echo is, with its standard output sent to a
  // file: it prints an empty line there and exits 0.
  char *none[] = {nullptr};
  int pid = fork();
  CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    close(1);
    CHECK(open("ue_out", O_CREATE | O_RDWR) == 1, "cannot redirect standard output");
    exec("/echo", none);
    exit(EXEC_RETURNED);
  }
  got = reap(pid);
  must_unlink("ue_out");
  CHECK(got == 0, "exec with an empty argv: status %d", got);
}

// Arguments that fit in the stack page arrive whole; bigger ones make exec fail.
void test_exechuge() {
  char *big = scratch;  // a long run of 'x', cut to length with a NUL
  memset(big, 'x', 6000);

  big[3000] = '\0';
  char *fits[] = {const_cast<char *>("usertests"), const_cast<char *>("--probe"), big, nullptr};
  int got = exec_status(SELF, fits);
  CHECK(got == probe_status(fits), "exec of a 3000-byte argument: status %d", got);

  big[3000] = 'x';
  big[5000] = '\0';
  got = exec_status(SELF, fits);
  CHECK(got == EXEC_RETURNED, "exec of a 5000-byte argument: status %d, expected -1", got);

  // Three of 2000 bytes each fit one at a time but not together in one page.
  big[5000] = 'x';
  big[2000] = '\0';
  char *three[] = {
      const_cast<char *>("usertests"), const_cast<char *>("--probe"), big, big, big, nullptr};
  got = exec_status(SELF, three);
  CHECK(got == EXEC_RETURNED, "exec of 3 x 2000-byte arguments: status %d, expected -1", got);

  // The most arguments, each 200 bytes: 6 KB in all.
  big[2000] = 'x';
  big[200] = '\0';
  exec_args[0] = const_cast<char *>("usertests");
  exec_args[1] = const_cast<char *>("--probe");
  for (int i = 2; i < MAXARG; i++) exec_args[i] = big;
  exec_args[MAXARG] = nullptr;
  got = exec_status(SELF, exec_args);
  CHECK(got == EXEC_RETURNED, "exec of 32 x 200-byte arguments: status %d, expected -1", got);
}

namespace {

// ---- Files that are not (good) programs -------------------------------------------------------

struct ElfHeader {
  unsigned char ident[16];
  unsigned short type, machine;
  unsigned int version;
  unsigned long entry, phoff, shoff;
  unsigned int flags;
  unsigned short ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
static_assert(sizeof(ElfHeader) == 64);

struct ElfProgramHeader {
  unsigned int type, flags;
  unsigned long offset, vaddr, paddr, filesz, memsz, align;
};
static_assert(sizeof(ElfProgramHeader) == 56);

constexpr unsigned PT_LOAD = 1;
constexpr const char *BAD_ELF = "ue_badelf";

// This program's own file, read into the heap. Returns its size.
char *self_image = nullptr;
int self_size = 0;

void load_self() {
  int fd = open(SELF, O_RDONLY);
  CHECK(fd >= 0, "cannot open %s", SELF);
  struct stat st;
  CHECK(fstat(fd, &st) == 0, "fstat %s failed", SELF);
  self_size = static_cast<int>(st.size);
  self_image = sbrk(self_size);
  CHECK(!sbrk_failed(self_image), "sbrk failed");
  read_exact(fd, self_image, self_size, SELF);
  close(fd);
}

ElfHeader *self_header() { return reinterpret_cast<ElfHeader *>(self_image); }

// The index of the program's first PT_LOAD header.
ElfProgramHeader *first_load() {
  ElfHeader *eh = self_header();
  for (int i = 0; i < eh->phnum; i++) {
    auto *ph =
        reinterpret_cast<ElfProgramHeader *>(self_image + eh->phoff + i * sizeof(ElfProgramHeader));
    if (ph->type == PT_LOAD) return ph;
  }
  TEST_FAIL("%s has no PT_LOAD segment", SELF);
}

// Writes the first n bytes of the (possibly patched) image to BAD_ELF and checks that
// exec of it fails and leaves this process alone.
void expect_exec_fails(int n, const char *what) {
  make_file(BAD_ELF, self_image, n);
  char *argv[] = {const_cast<char *>("badelf"), nullptr};
  int got = exec_status(BAD_ELF, argv);
  CHECK(got == EXEC_RETURNED, "exec of %s: status %d, expected exec to return -1", what, got);
}

// A patch to the image, undone after its exec has been tried.
template <typename T>
void with_patch(T *field, T value, const char *what) {
  T saved = *field;
  *field = value;
  expect_exec_fails(self_size, what);
  *field = saved;
}

}  // namespace

void test_execbadelf() {
  load_self();

  // A sanity check of the method: the unpatched copy runs.
  make_file(BAD_ELF, self_image, self_size);
  char *argv[] = {const_cast<char *>("usertests"), const_cast<char *>("--probe"), nullptr};
  int got = exec_status(BAD_ELF, argv);
  CHECK(got == 2, "exec of an exact copy of %s: status %d", SELF, got);

  make_file(BAD_ELF, "", 0);
  expect_exec_fails(0, "an empty file");
  const char *text = "#!/bin/sh\necho this is not a program\n";
  make_file(BAD_ELF, text, strlen(text));
  char *targv[] = {const_cast<char *>("badelf"), nullptr};
  got = exec_status(BAD_ELF, targv);
  CHECK(got == EXEC_RETURNED, "exec of a text file: status %d", got);

  expect_exec_fails(40, "a file cut inside the ELF header");
  expect_exec_fails(64, "a file of the ELF header alone");
  ElfHeader *eh = self_header();
  expect_exec_fails(static_cast<int>(eh->phoff + sizeof(ElfProgramHeader) / 2),
                    "a file cut inside the program headers");
  ElfProgramHeader *ph = first_load();
  expect_exec_fails(static_cast<int>(ph->offset + ph->filesz / 2),
                    "a file cut inside the text segment");

  with_patch(&eh->ident[1], static_cast<unsigned char>('e'), "a wrong magic number");
  with_patch(&eh->ident[4], static_cast<unsigned char>(1), "a 32-bit ELF class");
  with_patch(&eh->machine, static_cast<unsigned short>(62), "an x86-64 program");
  with_patch(&eh->phoff, static_cast<unsigned long>(self_size + 4096),
             "program headers past the end of the file");
  with_patch(&eh->phnum, static_cast<unsigned short>(0xffff),
             "65535 program headers running past the end of the file");

  unsigned long filesz = ph->filesz;
  with_patch(&ph->memsz, filesz / 2, "a segment with memsz < filesz");
  with_patch(&ph->vaddr, ph->vaddr + 8, "a segment at an unaligned address");
  with_patch(&ph->vaddr, 0xffffffffffff0000UL, "a segment whose end wraps around");
  with_patch(&ph->vaddr, MAX_VA, "a segment at MAXVA");
  with_patch(&ph->vaddr, MAX_VA - PAGE, "a segment running into the top of the address space");
  with_patch(&ph->offset, 0xfffff000UL, "a segment whose data lies beyond the file");
  with_patch(&ph->filesz, 0x100000000UL, "a segment with a 4 GB file size");
  with_patch(&ph->memsz, 0x3000000000UL, "a segment of 192 GB");

  // Two loadable segments that overlap: the second starts inside the first.
  for (int i = 0; i < eh->phnum; i++) {
    auto *other =
        reinterpret_cast<ElfProgramHeader *>(self_image + eh->phoff + i * sizeof(ElfProgramHeader));
    if (other != ph && other->type == PT_LOAD) {
      with_patch(&other->vaddr, ph->vaddr, "two segments at the same address");
      break;
    }
  }

  // Not a file at all.
  char *dargv[] = {const_cast<char *>("root"), nullptr};
  got = exec_status("/", dargv);
  CHECK(got == EXEC_RETURNED, "exec of a directory: status %d", got);
  got = exec_status("/ue_no_such_program", dargv);
  CHECK(got == EXEC_RETURNED, "exec of a missing file: status %d", got);
  got = exec_status("/proc/meminfo", dargv);
  CHECK(got == EXEC_RETURNED, "exec of a device file: status %d", got);

  must_unlink(BAD_ELF);
}

}  // namespace ut
