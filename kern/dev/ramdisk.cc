// The RAM disk: the root file system in memory, for counts that repeat exactly.
//
// The bench (tools/bench) counts guest instructions under QEMU's -icount, where a count is
// a property of the code alone and repeats from run to run, except where the host takes a
// part. The virtio disk is such a part: QEMU does each request on a host thread, so where
// the completion interrupt lands in the guest's instruction stream, and how long a process
// sleeps for it, depends on the host. A file system on that disk can never be counted
// exactly.
//
// So the root file system may live in RAM instead. `qemu ... -initrd fs.img` loads the
// image into memory and names its bounds in the device tree (/chosen, linux,initrd-start
// and -end). When the image there is a file system (ramdisk_problem() says what is checked),
// disk_rw() moves the root device's blocks with memmove: synchronously, with no interrupt
// and no sleep, the same instructions on every run. Its pages never reach the page
// allocator (kinit() leaves them out). An initrd that cannot be a file system is refused
// with a message, and the kernel uses virtio disk 0 as it always does; nothing panics.
//
// What it is not: a disk. Everything written there is lost when QEMU stops, and nothing on
// the host sees it. It does not make the kernel's other work exact (a console's output
// still waits for the host), and it measures no device: the bench keeps its virtio write
// figure beside the RAM disk's. The export disk (kern/dev/export.cc) stays on virtio.

#include "dev/ramdisk.h"

#include "abi/param.h"
#include "dev/virtio_blk.h"
#include "fs/buf.h"
#include "lib/printf.h"
#include "lib/string.h"

namespace {

// [start, end) of the root file system in RAM; both 0 when the root disk is virtio's.
// Written once at boot, before any other hart runs; read-only after.
constinit u64 disk_start = 0;
constinit u64 disk_end = 0;

}  // namespace

void ramdisk_init(u64 start, u64 end, u64 ram_start, u64 ram_end, u64 dtb) {
  if (start != 0 || end != 0) {
    const char *problem = ramdisk_problem(start, end, ram_start, ram_end, dtb);
    if (problem == nullptr) {
      disk_start = start;
      disk_end = end;
      kprintf("tern: disk: ram, %lu KiB\n", (end - start) >> 10);
      return;
    }
    kprintf("tern: initrd %p..%p cannot be the root disk: %s\n", reinterpret_cast<void *>(start),
            reinterpret_cast<void *>(end), problem);
  }
  kprintf("tern: disk: virtio\n");
}

u64 ramdisk_start() { return disk_start; }
u64 ramdisk_end() { return disk_end; }

// The caller holds b->lock, which owns the block: the buffer cache keeps one buffer a block,
// and the log's staging buffer is used by one commit at a time. So no lock is needed here.
void disk_rw(Buf *b, bool write) {
  if (b->dev != ROOTDEV || disk_end == 0) {
    virtio_disk_rw(b, write);
    return;
  }
  u64 offset = u64(b->blockno) * fsfmt::BSIZE;
  if (offset + fsfmt::BSIZE > disk_end - disk_start)
    panic("ramdisk: block %u is past the end of the disk", b->blockno);
  u8 *block = reinterpret_cast<u8 *>(disk_start + offset);
  if (write)
    memmove(block, b->data, fsfmt::BSIZE);
  else
    memmove(b->data, block, fsfmt::BSIZE);
}
