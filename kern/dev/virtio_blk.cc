// The disk: a driver for QEMU's virtio block device (modern virtio-mmio, see virtio.h).
//
// The buffer cache calls virtio_disk_rw(b, write) to move one file-system block between
// b->data and the disk. The driver turns that into a request on the device's only
// virtqueue, a chain of three descriptors:
//
//     [ header: IN or OUT, sector ] -> [ b->data, BSIZE bytes ] -> [ status byte ]
//
// puts the chain's head on the available ring, rings the doorbell (QueueNotify), and sleeps
// on the Buf. When the device has done the work it appends the head to the used ring and
// raises interrupt 1; virtio_disk_intr() finds each newly finished request, clears b->disk
// and wakes the process waiting for it.
//
// The data descriptor may be longer than one block: virtio_disk_rw_blocks() moves any number
// of consecutive blocks between the disk and one physically contiguous kernel buffer in a
// single request. Each request costs a round trip through QEMU (a trap on the doorbell, the
// host's work, an interrupt, a wakeup) whatever its size, so a request of 64 blocks moves
// data tens of times faster than 64 requests of one. The export disk (kern/dev/export.cc)
// uses this; the file system moves one block at a time through the buffer cache.
//
// Several harts and processes may use the disk at once: each request owns three of the
// QUEUE_SIZE descriptors while it is in flight. Free descriptors form a pool guarded by the
// driver's spinlock; a process that finds fewer than three free sleeps until a finished
// request returns its chain. The same lock serialises the interrupt handler against
// submitters, and because holding a spinlock disables interrupts on this hart, a process
// can never be interrupted by the handler while it holds the lock.
//
// The kernel maps RAM at its physical addresses, so the pointers we hand the device (queue
// memory, headers, buffer data) are physical addresses as they stand.
//
// There may be two disks, in the first two virtio-mmio slots: the root file system (device
// ROOTDEV, slot 0, required) and the optional export disk (device EXPORTDEV, slot 1, see
// kern/dev/export.cc). Each has its own queue, lock and interrupt; a request's dev picks one.

#include "abi/fs_format.h"
#include "abi/param.h"
#include "arch/riscv/memlayout.h"
#include "dev/virtio.h"
#include "dev/virtio_blk.h"
#include "fs/buf.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "mm/kalloc.h"
#include "proc/proc.h"

namespace {

using namespace virtio;

// Descriptors in the queue. Each request uses three, so up to ten requests can be in flight.
constexpr u32 QUEUE_SIZE = 32;
constexpr u32 CHAIN = 3;
static_assert((QUEUE_SIZE & (QUEUE_SIZE - 1)) == 0, "ring indexes wrap at 2^16");
constexpr u64 SECTORS_PER_BLOCK = fsfmt::BSIZE / BLK_SECTOR_SIZE;

// The three areas of the virtqueue, placed together in one zeroed page. Their alignment
// requirements (16, 2 and 4 bytes) are met by the layout and checked below.
struct QueueMemory {
  VirtqDesc desc[QUEUE_SIZE];
  VirtqAvail<QUEUE_SIZE> avail;
  alignas(4) VirtqUsed<QUEUE_SIZE> used;
};
static_assert(sizeof(QueueMemory) <= riscv::PGSIZE);
static_assert(__builtin_offsetof(QueueMemory, desc) % 16 == 0);
static_assert(__builtin_offsetof(QueueMemory, used) % 4 == 0);

// What the driver keeps for one request in flight, indexed by the request's head
// descriptor. The header and the status byte are read and written by the device, so they
// live here in kernel memory for as long as the request does.
struct Request {
  BlkReqHeader header;
  u8 status;
  // The submitter's "in flight" flag (b->disk for a Buf), which the interrupt clears; the
  // submitter sleeps on its address. Null when the slot is idle.
  bool *busy;
};

struct Disk {
  Spinlock lock{"virtio_disk"};
  u64 base = 0;  // the device's registers
  bool present = false;
  u64 sectors = 0;  // capacity, in 512-byte sectors
  // Everything below is protected by lock.
  QueueMemory *queue = nullptr;
  bool desc_free[QUEUE_SIZE] = {};
  u32 nfree = 0;      // how many entries of desc_free are true
  u16 used_seen = 0;  // entries of the used ring already handled
  Request requests[QUEUE_SIZE] = {};
};
constexpr int NDISK = 2;
constinit Disk disks[NDISK];

volatile u32 &reg(const Disk &disk, Reg r) {
  return *reinterpret_cast<volatile u32 *>(disk.base + static_cast<u32>(r));
}
u32 read_reg(const Disk &disk, Reg r) { return reg(disk, r); }
void write_reg(const Disk &disk, Reg r, u32 v) { reg(disk, r) = v; }

// The disk for a device number, or nullptr.
Disk *disk_for(u32 dev) {
  if (dev == ROOTDEV) return &disks[0];
  if (dev == EXPORTDEV && disks[1].present) return &disks[1];
  return nullptr;
}

// Kernel addresses are physical addresses (the direct map), which is what the device wants.
u64 phys(const volatile void *p) { return reinterpret_cast<u64>(p); }

void write_addr(const Disk &disk, Reg low, Reg high, u64 addr) {
  write_reg(disk, low, static_cast<u32>(addr));
  write_reg(disk, high, static_cast<u32>(addr >> 32));
}

// Take CHAIN free descriptors, sleeping until that many are free. Taking them all at once
// means a process never holds part of a chain while waiting for the rest, so requests
// cannot starve each other into a deadlock. Caller holds disk.lock.
void alloc_chain(Disk &disk, u16 (&chain)[CHAIN]) {
  while (disk.nfree < CHAIN) sleep(&disk.nfree, disk.lock);
  u32 got = 0;
  for (u16 i = 0; got < CHAIN; i++) {
    if (disk.desc_free[i]) {
      disk.desc_free[i] = false;
      chain[got++] = i;
    }
  }
  disk.nfree -= CHAIN;
}

// Return a finished request's descriptors to the pool. Caller holds disk.lock.
void free_chain(Disk &disk, const u16 (&chain)[CHAIN]) {
  for (u16 d : chain) {
    if (disk.desc_free[d]) panic("virtio_disk: descriptor %u freed twice", d);
    disk.queue->desc[d] = VirtqDesc{};
    disk.desc_free[d] = true;
  }
  disk.nfree += CHAIN;
  wakeup(&disk.nfree);
}

// Status handshake, feature negotiation and queue set-up, in the order of spec 3.1.1
// ("Driver Requirements: Device Initialization").
void negotiate(Disk &disk) {
  write_reg(disk, Reg::Status, 0);  // reset
  u32 status = STATUS_ACKNOWLEDGE;
  write_reg(disk, Reg::Status, status);
  status |= STATUS_DRIVER;
  write_reg(disk, Reg::Status, status);

  // We need none of the optional block features (read-only disks, flush, multiple queues,
  // and so on), so the only bit we accept is VERSION_1, which a modern device requires.
  write_reg(disk, Reg::DeviceFeaturesSel, 1);
  constexpr u32 VERSION_1_HIGH = 1u << (F_VERSION_1 - 32);
  if ((read_reg(disk, Reg::DeviceFeatures) & VERSION_1_HIGH) == 0) {
    panic("virtio_disk_init: device does not offer VIRTIO_F_VERSION_1");
  }
  write_reg(disk, Reg::DriverFeaturesSel, 0);
  write_reg(disk, Reg::DriverFeatures, 0);
  write_reg(disk, Reg::DriverFeaturesSel, 1);
  write_reg(disk, Reg::DriverFeatures, VERSION_1_HIGH);
  status |= STATUS_FEATURES_OK;
  write_reg(disk, Reg::Status, status);
  // The device clears FEATURES_OK again if it cannot work with what we accepted.
  if ((read_reg(disk, Reg::Status) & STATUS_FEATURES_OK) == 0) {
    panic("virtio_disk_init: device rejected our features");
  }

  write_reg(disk, Reg::QueueSel, 0);
  if (read_reg(disk, Reg::QueueReady) != 0) panic("virtio_disk_init: queue 0 already in use");
  u32 max = read_reg(disk, Reg::QueueNumMax);
  if (max < QUEUE_SIZE) panic("virtio_disk_init: queue holds only %u descriptors", max);
  disk.queue = static_cast<QueueMemory *>(kalloc());  // zeroed: both rings start empty
  if (disk.queue == nullptr) panic("virtio_disk_init: out of memory");
  write_reg(disk, Reg::QueueNum, QUEUE_SIZE);
  write_addr(disk, Reg::QueueDescLow, Reg::QueueDescHigh, phys(disk.queue->desc));
  write_addr(disk, Reg::QueueDriverLow, Reg::QueueDriverHigh, phys(&disk.queue->avail));
  write_addr(disk, Reg::QueueDeviceLow, Reg::QueueDeviceHigh, phys(&disk.queue->used));
  write_reg(disk, Reg::QueueReady, 1);

  status |= STATUS_DRIVER_OK;
  write_reg(disk, Reg::Status, status);
}

// Is there a modern virtio block device in this disk's slot?
bool probe(const Disk &disk) {
  return read_reg(disk, Reg::MagicValue) == MAGIC &&
         read_reg(disk, Reg::Version) == VERSION_MODERN &&
         read_reg(disk, Reg::DeviceId) == DEVICE_ID_BLOCK;
}

void init_disk(Disk &disk) {
  SpinGuard g(disk.lock);
  negotiate(disk);
  for (bool &f : disk.desc_free) f = true;
  disk.nfree = QUEUE_SIZE;
  // The block device's configuration starts with its capacity in sectors (spec 5.2.4).
  disk.sectors =
      read_reg(disk, Reg::Config) | (u64(read_reg(disk, Reg(u32(Reg::Config) + 4))) << 32);
  disk.present = true;
}

// Move `len` bytes between the disk, from sector `sector` on, and the memory at physical
// address `data`, as one request, and sleep until it is done. `busy` is the caller's flag
// for "the device owns the memory", set here and cleared by the interrupt; the submitter
// sleeps on its address.
void submit_and_wait(Disk &disk, bool write, u64 sector, u64 data, u32 len, bool *busy) {
  SpinGuard g(disk.lock);
  u16 chain[CHAIN];
  alloc_chain(disk, chain);

  Request &req = disk.requests[chain[0]];
  req.header = BlkReqHeader{
      .type = write ? BLK_T_OUT : BLK_T_IN,
      .reserved = 0,
      .sector = sector,
  };
  req.status = 0xff;  // the device overwrites this with BLK_S_OK or an error
  req.busy = busy;

  VirtqDesc *desc = disk.queue->desc;
  desc[chain[0]] = {phys(&req.header), sizeof(BlkReqHeader), DESC_F_NEXT, chain[1]};
  // For a read the device writes the buffer; for a write it only reads it.
  u16 data_flags = DESC_F_NEXT | (write ? 0 : DESC_F_WRITE);
  desc[chain[1]] = {data, len, data_flags, chain[2]};
  desc[chain[2]] = {phys(&req.status), 1, DESC_F_WRITE, 0};

  *busy = true;
  volatile auto &avail = disk.queue->avail;
  avail.ring[avail.idx % QUEUE_SIZE] = chain[0];
  // The device may look at the ring as soon as idx moves, so the descriptors and the ring
  // entry must be in memory before the new idx, and idx before the doorbell.
  __sync_synchronize();
  avail.idx = avail.idx + 1;
  __sync_synchronize();
  write_reg(disk, Reg::QueueNotify, 0);

  while (*static_cast<volatile bool *>(busy)) sleep(busy, disk.lock);

  u8 status = *static_cast<volatile u8 *>(&req.status);
  if (status != BLK_S_OK) {
    panic("virtio_disk: device failed %s of %u bytes at sector %lu (status %u)",
          write ? "write" : "read", len, sector, status);
  }
  req.busy = nullptr;
  free_chain(disk, chain);
}

}  // namespace

void virtio_disk_init() {
  disks[0].base = mem::VIRTIO0;
  disks[1].base = mem::VIRTIO1;
  if (!probe(disks[0])) {
    // Version 1 means QEMU ran without -global virtio-mmio.force-legacy=false; device 0
    // means no -device virtio-blk-device on this slot.
    panic(
        "virtio_disk_init: no modern virtio block device at %p "
        "(magic %x, version %u, device id %u)",
        reinterpret_cast<void *>(mem::VIRTIO0), read_reg(disks[0], Reg::MagicValue),
        read_reg(disks[0], Reg::Version), read_reg(disks[0], Reg::DeviceId));
  }
  init_disk(disks[0]);
  if (probe(disks[1])) init_disk(disks[1]);  // the export disk is optional
}

u64 virtio_disk_blocks(u32 dev) {
  Disk *disk = disk_for(dev);
  return disk ? disk->sectors / SECTORS_PER_BLOCK : 0;
}

void virtio_disk_rw(Buf *b, bool write) {
  Disk *disk = disk_for(b->dev);
  if (disk == nullptr) panic("virtio_disk_rw: no disk for device %u", b->dev);
  submit_and_wait(*disk, write, u64(b->blockno) * SECTORS_PER_BLOCK, phys(b->data), fsfmt::BSIZE,
                  &b->disk);
}

void virtio_disk_rw_blocks(u32 dev, u32 blockno, void *data, u32 nblocks, bool write) {
  Disk *disk = disk_for(dev);
  if (disk == nullptr) panic("virtio_disk_rw_blocks: no disk for device %u", dev);
  if (nblocks == 0) return;
  if (u64(blockno) + nblocks > disk->sectors / SECTORS_PER_BLOCK) {
    panic("virtio_disk_rw_blocks: blocks %u..%u are past the end of device %u", blockno,
          blockno + nblocks - 1, dev);
  }
  // Only the kernel touches the flag (the interrupt handler, through the kernel page table,
  // which maps this stack on every hart), so it may live on the stack; `data` is what the
  // device sees, and must be direct-mapped memory.
  bool busy = false;
  submit_and_wait(*disk, write, u64(blockno) * SECTORS_PER_BLOCK, phys(data),
                  nblocks * fsfmt::BSIZE, &busy);
}

void virtio_disk_intr(int slot) {
  if (slot < 0 || slot >= NDISK) return;
  Disk &disk = disks[slot];
  SpinGuard g(disk.lock);
  if (disk.queue == nullptr) return;  // not ours yet: the device is not initialised

  // Acknowledge before scanning: a completion that arrives while we scan raises a new
  // interrupt instead of being missed (at worst that interrupt finds nothing new).
  write_reg(
      disk, Reg::InterruptAck,
      read_reg(disk, Reg::InterruptStatus) & (INTERRUPT_USED_BUFFER | INTERRUPT_CONFIG_CHANGE));
  __sync_synchronize();

  volatile auto &used = disk.queue->used;
  while (disk.used_seen != used.idx) {
    __sync_synchronize();  // read the entry only after seeing the idx that covers it
    u32 id = used.ring[disk.used_seen % QUEUE_SIZE].id;
    if (id >= QUEUE_SIZE || disk.requests[id].busy == nullptr) {
      panic("virtio_disk_intr: completion for descriptor %u, which is not in flight", id);
    }
    bool *busy = disk.requests[id].busy;
    *busy = false;  // the memory is the process's again
    wakeup(busy);
    disk.used_seen++;
  }
}
