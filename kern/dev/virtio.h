// Virtio over MMIO: the register map and the shared-memory structures of the virtio 1.1
// specification (OASIS "Virtual I/O Device (VIRTIO) Version 1.1"), as the block driver in
// kern/dev/virtio_blk.cc uses them.
//
// A virtio device is a peripheral that QEMU emulates with a deliberately simple interface.
// The driver talks to it in two ways:
//
//  - A small window of 32-bit registers (section 4.2.2, "MMIO Device Register Layout").
//    They identify the device, negotiate features, and tell the device where its queues
//    live in memory. Writing QueueNotify says "look at the queue, there is new work".
//
//  - Virtqueues in ordinary RAM (section 2.6, "Split Virtqueues"). A queue has three parts:
//      descriptor table  the driver describes buffers here: address, length, flags, and
//                        the index of the next descriptor when a request spans several;
//      available ring    (the spec's "driver area") the driver appends the head
//                        descriptor of each new request and advances `idx`;
//      used ring         (the spec's "device area") the device appends the head of each
//                        finished request and advances its own `idx`, then interrupts.
//    Both rings are only ever appended to, so each side just remembers how far it has read.
//
// Only the "modern" interface (Version register = 2) is described here; QEMU offers it when
// started with `-global virtio-mmio.force-legacy=false`. All fields are little-endian, as
// is RISC-V, so the structures are used directly.
#pragma once

#include "lib/types.h"

namespace virtio {

// Register offsets from the device's base address (spec 4.2.2). Registers are 32 bits
// wide and must be accessed as such.
enum class Reg : u32 {
  MagicValue = 0x000,  // "virt" (0x74726976)
  Version = 0x004,     // 2 for the modern interface, 1 for legacy
  DeviceId = 0x008,    // what kind of device: 2 is a block device, 0 is no device
  VendorId = 0x00c,
  DeviceFeatures = 0x010,     // 32 feature bits, chosen by DeviceFeaturesSel
  DeviceFeaturesSel = 0x014,  // 0 selects bits 0-31, 1 selects bits 32-63
  DriverFeatures = 0x020,     // the features the driver accepts, likewise in two halves
  DriverFeaturesSel = 0x024,
  QueueSel = 0x030,         // which queue the Queue* registers below refer to
  QueueNumMax = 0x034,      // the largest queue size the device supports (0: no queue)
  QueueNum = 0x038,         // the queue size the driver chose
  QueueReady = 0x044,       // write 1 once the queue's addresses are set
  QueueNotify = 0x050,      // write a queue index: "new buffers are available"
  InterruptStatus = 0x060,  // why the device interrupted (bits below)
  InterruptAck = 0x064,     // write those bits back to acknowledge
  Status = 0x070,           // the device status handshake (bits below); 0 resets
  QueueDescLow = 0x080,     // physical address of the descriptor table
  QueueDescHigh = 0x084,
  QueueDriverLow = 0x090,  // physical address of the available ring
  QueueDriverHigh = 0x094,
  QueueDeviceLow = 0x0a0,  // physical address of the used ring
  QueueDeviceHigh = 0x0a4,
  ConfigGeneration = 0x0fc,
  Config = 0x100,  // device-specific configuration starts here
};

inline constexpr u32 MAGIC = 0x74726976;  // "virt", little-endian
inline constexpr u32 VERSION_MODERN = 2;
inline constexpr u32 DEVICE_ID_BLOCK = 2;

// Device status bits (spec 2.1). The driver sets them one after another during
// initialisation; the device may set NEEDS_RESET, the driver sets FAILED to give up.
inline constexpr u32 STATUS_ACKNOWLEDGE = 1;  // the driver has noticed the device
inline constexpr u32 STATUS_DRIVER = 2;       // and knows how to drive it
inline constexpr u32 STATUS_DRIVER_OK = 4;    // and is ready: the device may start
inline constexpr u32 STATUS_FEATURES_OK = 8;  // feature negotiation is complete
inline constexpr u32 STATUS_NEEDS_RESET = 64;
inline constexpr u32 STATUS_FAILED = 128;

// Feature bits (spec 6, "Reserved Feature Bits"). VERSION_1 marks a device that follows the
// 1.x specification; a modern driver must accept it or the device refuses FEATURES_OK.
inline constexpr u32 F_VERSION_1 = 32;

// InterruptStatus bits (spec 4.2.2).
inline constexpr u32 INTERRUPT_USED_BUFFER = 1;  // the used ring has new entries
inline constexpr u32 INTERRUPT_CONFIG_CHANGE = 2;

// One descriptor: a physically contiguous buffer (spec 2.6.5). The table must be 16-byte
// aligned.
struct VirtqDesc {
  u64 addr;   // physical address
  u32 len;    // length in bytes
  u16 flags;  // DESC_F_* below
  u16 next;   // the following descriptor, when flags has DESC_F_NEXT
};
static_assert(sizeof(VirtqDesc) == 16);

inline constexpr u16 DESC_F_NEXT = 1;   // the request continues in `next`
inline constexpr u16 DESC_F_WRITE = 2;  // the device writes this buffer (otherwise reads it)

// The available ring (spec 2.6.6), written by the driver, 2-byte aligned. `ring` holds the
// head descriptor of each request; `idx` is where the driver will put the next one, and
// counts up forever (it wraps at 2^16, and entries are at idx % queue size).
template <u32 N>
struct VirtqAvail {
  u16 flags;
  u16 idx;
  u16 ring[N];
  u16 used_event;  // only with VIRTIO_F_EVENT_IDX, which we do not negotiate
};

// The used ring (spec 2.6.8), written by the device, 4-byte aligned. `id` is the head
// descriptor of a finished request; `len` is how many bytes the device wrote into it.
struct VirtqUsedElem {
  u32 id;
  u32 len;
};
static_assert(sizeof(VirtqUsedElem) == 8);

template <u32 N>
struct VirtqUsed {
  u16 flags;
  u16 idx;
  VirtqUsedElem ring[N];
  u16 avail_event;
};

// Block device requests (spec 5.2.6). A request is a chain of three buffers: this header
// (read by the device), the data (read for a write, written for a read), and one status
// byte the device writes when it is done.
struct BlkReqHeader {
  u32 type;  // BLK_T_IN or BLK_T_OUT
  u32 reserved;
  u64 sector;  // in 512-byte sectors, whatever the file system's block size
};
static_assert(sizeof(BlkReqHeader) == 16);

inline constexpr u32 BLK_T_IN = 0;   // read from the disk
inline constexpr u32 BLK_T_OUT = 1;  // write to the disk
inline constexpr u8 BLK_S_OK = 0;
inline constexpr u8 BLK_S_IOERR = 1;
inline constexpr u8 BLK_S_UNSUPP = 2;
inline constexpr u32 BLK_SECTOR_SIZE = 512;

}  // namespace virtio
