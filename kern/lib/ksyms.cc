// The kernel symbol table: the Makefile's second link pass places the table made from the
// first pass between ksyms_start and ksyms_end (kern/kernel.ld).

#include "lib/ksyms.h"

#include "lib/linker.h"

const symtab::Table &ksyms() {
  // Validated on each call: cheap (a header check) and free of static-init machinery.
  static constinit symtab::Table table;
  static constinit bool ready = false;
  if (!ready) {
    table = symtab::Table::from(ksyms_start, size_t(ksyms_end - ksyms_start));
    ready = true;
  }
  return table;
}

const char *ksym_lookup(u64 pc, u64 *offset) {
  symtab::Symbol s = ksyms().lookup(pc);
  if (offset) *offset = s.name ? pc - s.start : 0;
  return s.name;
}
