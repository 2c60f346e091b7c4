// halt: powers the machine off. The kernel asks the SBI firmware to shut down, and QEMU
// exits. On success this program never gets to return.
#include "lib/user.h"

int main(int argc, char **) {
  if (argc != 1) usage_exit("halt\n");
  halt();
  fprintf(2, "halt: the kernel refused to power off\n");
  return 1;
}
