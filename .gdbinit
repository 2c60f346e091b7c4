# gdb-multiarch reads this when started in the top directory (after `make qemu-gdb`).
# If gdb refuses to load it, add "add-auto-load-safe-path /path/to/this/.gdbinit" to
# ~/.config/gdb/gdbinit, or start gdb with -ix .gdbinit.
set confirm off
set architecture riscv:rv64
file build/kernel.elf
set disassemble-next-line auto
set riscv use-compressed-breakpoints yes
# make qemu-gdb writes the port it chose into .gdbport.
source .gdbport
