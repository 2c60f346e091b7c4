// Boot: the order in which the kernel brings itself up.
//
// OpenSBI starts one hart, chosen by lottery, at _entry (kern/arch/riscv/entry.S), which
// gives it a stack and calls kmain(hartid, dtb). kmain refuses a machine with less than
// mem::MIN_MEMORY_MIB of RAM, picks the root disk (an initrd in RAM, if QEMU loaded one
// that holds a file system, else virtio disk 0), initialises everything shared (deciding,
// in timer_init(), how every hart arms its timer), creates the first process, starts every
// other hart through SBI HSM at _secondary_entry -> kmain_secondary(), and joins the
// scheduler. Each secondary hart only sets up its own state (paging, trap vector, timer,
// PLIC context) and joins the scheduler too.

#include "boot/main.h"

#include "abi/param.h"
#include "arch/riscv/bootstack.h"
#include "arch/riscv/memlayout.h"
#include "arch/riscv/sbi.h"
#include "boot/fdt.h"
#include "dev/console.h"
#include "dev/export.h"
#include "dev/ramdisk.h"
#include "dev/virtio_blk.h"
#include "fs/buf.h"
#include "fs/file.h"
#include "fs/fs.h"
#include "fs/procfs.h"
#include "lib/linker.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/kalloc.h"
#include "mm/vm.h"
#include "proc/proc.h"
#include "profile/profiler.h"
#include "trap/plic.h"
#include "trap/timer.h"
#include "trap/trap.h"

u64 phys_end = 0;         // end of RAM, from the device tree
char bootargs[128] = {};  // the kernel command line, from the device tree

namespace {

// Bring up this hart's own state and run its scheduler.
[[noreturn]] void hart_main() {
  kvminithart();
  // Let user programs read the time, cycle and instret counters (rdtime etc.): benchmarks
  // time themselves with them.
  CSR_WRITE(scounteren, 0x7);
  trapinithart();
  plicinithart();
  timer_init_hart();
  prof::iclock_init_hart();
  mycpu()->hartid = riscv::r_tp();
  mycpu()->started = true;
  scheduler();
}

// Make QEMU exit with status 1 through its test device (the SBI's shutdown always exits 0).
[[noreturn]] void power_off_failed() {
  *reinterpret_cast<volatile u32 *>(mem::TEST_DEVICE) = (1 << 16) | 0x3333;
  sbi::srst::shutdown();
}

int start_other_harts(u64 boot) {
  int started = 1;
  for (u64 h = 0; h < NCPU; h++) {
    if (h == boot) continue;
    sbi::Result r = sbi::hsm::hart_start(h, reinterpret_cast<u64>(_secondary_entry), 0);
    if (r.error == 0) started++;
  }
  return started;
}

}  // namespace

extern "C" [[noreturn]] void kmain(u64 hartid, u64 dtb) {
  memset(bss_start, 0, bss_end - bss_start);
  // Read what we need from the device tree now: it lies in RAM that kalloc() hands out.
  phys_end = fdt_memory_end(dtb);
  if (phys_end <= mem::KERNBASE) phys_end = mem::DEFAULT_PHYSTOP;
  safestrcpy(bootargs, fdt_bootargs(dtb), sizeof(bootargs));
  PhysRange initrd = fdt_initrd(dtb);

  console_init();
  kprintf("\ntern: booting on hart %lu\n", hartid);
  u64 mib = (phys_end - mem::RAMBASE) >> 20;
  if (mib < mem::MIN_MEMORY_MIB) {
    kprintf("tern: %lu MiB of memory is too little: tern needs at least %lu MiB\n", mib,
            mem::MIN_MEMORY_MIB);
    power_off_failed();
  }
  // Before kinit(): an initrd that becomes the root disk is kept out of the free pages.
  ramdisk_init(initrd.start, initrd.end, riscv::pg_round_up(reinterpret_cast<u64>(end)), phys_end,
               dtb);
  kinit(phys_end, ramdisk_start(), ramdisk_end());
  kvminit();
  procinit();
  trapinithart();       // the Sstc probe in timer_init() needs the trap vector
  timer_init();         // before any other hart starts: they all arm their timers its way
  prof::iclock_init();  // the same for the instruction clock
  plicinit();
  binit();
  iinit();
  fileinit();
  procfsinit();
  exportinit();
  prof::report_init();
  virtio_disk_init();
  userinit();
  __sync_synchronize();

  // `make qemu QEMUEXTRA="-append test.panic"` checks the panic path: message, backtrace.
  for (const char *a = bootargs; *a; a++)
    if (strncmp(a, "test.panic", 10) == 0) panic("test.panic given on the command line");

  int harts = start_other_harts(hartid);
  kprintf("tern: %d harts, %lu MiB memory\n", harts, (phys_end - mem::RAMBASE) >> 20);
  hart_main();
}

extern "C" [[noreturn]] void kmain_secondary(u64) { hart_main(); }
