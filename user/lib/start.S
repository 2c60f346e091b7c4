# _start: where every user program begins (the ELF entry point, see user/user.ld).
#
# exec leaves argc in a0 and argv in a1, which are already main's first two arguments, so
# _start only has to call main and hand main's return value to exit. A program may also call
# exit itself; either way the process never returns past this function.
#
# _start also anchors the chain of frame pointers. Every function compiled with frame
# pointers saves its return address at fp-8 and its caller's fp at fp-16. _start builds a
# frame of its own whose two saved words are zero and points s0 at it, so anything that walks
# the chain (a debugger, the profiler) finds main's caller here and then a zero return
# address and a zero frame pointer: a clean end of the walk, not garbage from the stack.

  .section .text.entry, "ax", @progbits
  .global _start
  .type _start, @function
_start:
  addi sp, sp, -16
  sd zero, 8(sp)          # the "return address" slot: none
  sd zero, 0(sp)          # the "caller's frame pointer" slot: none
  addi s0, sp, 16         # s0 is this frame's top, as the compiler would set it
  call main               # a0 = argc, a1 = argv, untouched since exec
  call exit               # a0 = main's return value; exit does not return
  .size _start, . - _start
