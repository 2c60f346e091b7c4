# The system-call stubs, one per line of kern/abi/syscalls.def.
#
# A system call is an ordinary function call from the program's point of view: the
# arguments are already in a0..a5 where the calling convention put them. The stub only adds
# the call's number in a7 and traps into the kernel with `ecall`; the kernel leaves the
# result in a0, which is exactly where the caller looks for a return value. No registers
# need saving, so the stub is three instructions and has no stack frame.
#
# The list of calls is not written here. The C preprocessor includes the shared list and
# expands each SYSCALL(name, number) line into one stub, so a call added to syscalls.def
# appears here by rebuilding.

#define SYSCALL(name, number) \
  .global name ; \
  .type name, @function ; \
  name: ; \
  li a7, number ; \
  ecall ; \
  ret ; \
  .size name, . - name ;

  .text
#include "abi/syscalls.def"
