# gdb-multiarch reads this when started in the top directory (after `make qemu-gdb`).
# If gdb refuses to load it, start gdb as `gdb-multiarch -ix .gdbinit`, or add
# "add-auto-load-safe-path /path/to/this/.gdbinit" to ~/.config/gdb/gdbinit.
set confirm off
set pagination off
set architecture riscv:rv64
file build/kernel.elf
set disassemble-next-line auto
set riscv use-compressed-breakpoints yes
# tern-proc, tern-bt, tern-sample: see tools/gdb/tern.py.
source tools/gdb/tern.py
# make qemu-gdb writes the port it chose into .gdbport.
source .gdbport
