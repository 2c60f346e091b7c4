// expcopy: copy a file to the export disk, for the host to pick up.
//
//   expcopy [-t] FILE [NAME]
//
// Writes FILE's bytes to /dev/export after a 4096-byte header (kern/abi/export.h): the magic
// "TERNEXP1", the length, a CRC-32 of the data and NAME (default: FILE). tools/profget reads
// them back on the host and checks the CRC. Works with files of any size, including
// /proc/profile, which is read until end of file like any other.
//
// -t also prints where the time went, in milliseconds of the `time` counter (which follows
// the host's clock): reading FILE (for /proc/profile, that is the kernel rendering the
// JSON), computing the CRC, and writing the export disk.
#include "abi/export.h"
#include "lib/user.h"

namespace {

// CRC-32 (IEEE 802.3, the one zlib and binascii compute), table-driven.
unsigned int crc_table[256];

void crc_init() {
  for (unsigned int n = 0; n < 256; n++) {
    unsigned int c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

unsigned int crc_update(unsigned int crc, const unsigned char *p, int n) {
  crc = ~crc;
  for (int i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

struct Header {
  char magic[8];
  unsigned long length;
  unsigned int crc;
  unsigned int reserved;
  char name[64];
};

// The copy moves this much per read and write. /dev/export turns each write into one disk
// request of up to 256 KiB (kern/dev/export.cc), and a request costs about the same
// whatever its size, so smaller writes would be slower. Reading /proc/profile in big pieces
// is cheaper too: each read renders the sample it starts in again. Static: the user stack
// is only one page.
constexpr int CHUNK = 256 * 1024;
char chunk[CHUNK];

// Ticks spent in each part of the copy, for -t.
struct Times {
  unsigned long reading = 0, crc = 0, writing = 0;
};

}  // namespace

int main(int argc, char **argv) {
  bool timed = argc > 1 && strcmp(argv[1], "-t") == 0;
  if (timed) {
    argc--;
    argv++;
  }
  if (argc < 2 || argc > 3) usage_exit("expcopy [-t] FILE [NAME]\n");
  int in = open(argv[1], O_RDONLY);
  if (in < 0) {
    fprintf(2, "expcopy: cannot open %s\n", argv[1]);
    return 1;
  }
  int out = open("/dev/export", O_RDWR);
  if (out < 0) {
    fprintf(2, "expcopy: cannot open /dev/export\n");
    return 1;
  }
  crc_init();

  // The data first, after room for the header; the header last, once length and CRC are
  // known. A host that finds no magic knows the copy did not finish.
  memset(chunk, 0, EXPORT_HEADER_SIZE);
  if (write(out, chunk, EXPORT_HEADER_SIZE) != EXPORT_HEADER_SIZE) {
    fprintf(2, "expcopy: no export disk (start QEMU with a second drive, see tools/profget)\n");
    return 1;
  }
  unsigned long length = 0;
  unsigned int crc = 0;
  Times times;
  for (;;) {
    unsigned long t0 = rdtime();
    int n = read(in, chunk, CHUNK);
    unsigned long t1 = rdtime();
    times.reading += t1 - t0;
    if (n < 0) {
      fprintf(2, "expcopy: read error on %s\n", argv[1]);
      return 1;
    }
    if (n == 0) break;
    crc = crc_update(crc, reinterpret_cast<unsigned char *>(chunk), n);
    unsigned long t2 = rdtime();
    times.crc += t2 - t1;
    if (write(out, chunk, n) != n) {
      fprintf(2, "expcopy: export disk full after %lu bytes\n", length);
      return 1;
    }
    times.writing += rdtime() - t2;
    length += static_cast<unsigned long>(n);
  }
  close(out);

  Header h;
  memset(&h, 0, sizeof(h));
  memcpy(h.magic, EXPORT_MAGIC, 8);
  h.length = length;
  h.crc = crc;
  const char *name = argc == 3 ? argv[2] : argv[1];
  for (int i = 0; i < 63 && name[i]; i++) h.name[i] = name[i];
  out = open("/dev/export", O_RDWR);
  if (out < 0 || write(out, &h, sizeof(h)) != static_cast<int>(sizeof(h))) {
    fprintf(2, "expcopy: cannot write the header\n");
    return 1;
  }
  close(out);
  printf("expcopy: %lu bytes, crc %x\n", length, crc);
  if (timed) {
    printf("expcopy: ms reading %lu crc %lu writing %lu\n", times.reading / TIME_TICKS_PER_MS,
           times.crc / TIME_TICKS_PER_MS, times.writing / TIME_TICKS_PER_MS);
  }
  return 0;
}
