// init: the first user process. The kernel starts it by hand; everything else descends
// from it.
//
// It sets up what every later program takes for granted: descriptors 0, 1 and 2 open on
// the console (inherited by all its descendants), and the device files under /proc and /dev.
// Those files are made here, when missing, rather than by mkfs, so that a disk image built
// by any mkfs, xv6's included, gets them too.
//
// Then it keeps a shell running, and it adopts every process whose parent exits first: the
// kernel hands orphans to init, and only a wait() by init frees them. So its loop is just
// wait(): any child that is not the shell is reaped silently, and when the shell itself
// exits a new one is started.
#include "abi/majors.h"
#include "abi/export.h"
#include "abi/profile.h"
#include "lib/user.h"

namespace {

// A device file that init creates if it is missing.
struct DeviceFile {
  const char *path;
  short major;
  short minor;
};

constexpr DeviceFile PROC_FILES[] = {
    {"/proc/meminfo", PROCFS_MAJOR, PROC_MEMINFO},
    {"/proc/cpustat", PROCFS_MAJOR, PROC_CPUSTAT},
    {"/proc/profile", PROCFS_MAJOR, PROC_PROFILE},
    {"/proc/profstat", PROCFS_MAJOR, PROC_PROFSTAT},
    {"/dev/export", EXPORT_MAJOR, 0},
};

void open_console() {
  int fd = open("console", O_RDWR);
  if (fd < 0) {
    mknod("console", CONSOLE_MAJOR, 0);
    fd = open("console", O_RDWR);
  }
  if (fd != 0) {
    // Nothing can be printed without a console; there is nothing better to do.
    exit(1);
  }
  dup(0);  // standard output
  dup(0);  // standard error
}

void make_proc_files() {
  // mkdir and mknod fail harmlessly when the name already exists, which is the usual case
  // after the first boot, so their results are not checked. A file that exists but cannot
  // be made is reported.
  mkdir("/proc");
  mkdir("/dev");
  for (const DeviceFile &f : PROC_FILES) {
    if (mknod(f.path, f.major, f.minor) < 0) {
      struct stat st;
      if (stat(f.path, &st) < 0) fprintf(2, "init: cannot create %s\n", f.path);
    }
  }
}

int start_shell() {
  printf("init: starting sh\n");
  for (;;) {
    int pid = fork();
    if (pid == 0) {
      char *argv[] = {const_cast<char *>("sh"), nullptr};
      exec("sh", argv);
      exec("/sh", argv);
      fprintf(2, "init: exec sh failed\n");
      exit(1);
    }
    if (pid > 0) return pid;
    fprintf(2, "init: fork failed, retrying\n");
    sleep(10);
  }
}

}  // namespace

int main() {
  open_console();
  make_proc_files();

  int shell = start_shell();
  for (;;) {
    int status;
    int pid = wait(&status);
    if (pid == shell) {
      shell = start_shell();
    } else if (pid < 0) {
      // No children at all: the shell must have vanished without wait() seeing it.
      fprintf(2, "init: wait failed\n");
      shell = start_shell();
    }
    // Any other pid was an orphan that has now been reaped.
  }
}
