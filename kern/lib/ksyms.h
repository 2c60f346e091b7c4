// The kernel's own symbol table, embedded by the build (see kern/lib/symtab.h).
#pragma once

#include "lib/symtab.h"
#include "lib/types.h"

// Name of the kernel function containing pc, or nullptr. *offset gets pc - start.
const char *ksym_lookup(u64 pc, u64 *offset = nullptr);
const symtab::Table &ksyms();
