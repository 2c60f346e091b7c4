#!/usr/bin/env python3
"""nm's output on stdin, the kernel's binary symbol table on stdout: see tools/tern/symtab.py.

Usage: nm -C -n -S --defined-only ELF | tools/mksymtab.py > table.bin
"""

from tern.symtab import main

main()
