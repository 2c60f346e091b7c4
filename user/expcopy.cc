// expcopy: copy a file to the export disk, for the host to pick up.
//
//   expcopy FILE [NAME]
//
// Writes FILE's bytes to /dev/export after a 4096-byte header (kern/abi/export.h): the magic
// "TERNEXP1", the length, a CRC-32 of the data and NAME (default: FILE). tools/profget reads
// them back on the host and checks the CRC. Works with files of any size, including
// /proc/profile, which is read until end of file like any other.
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

char block[EXPORT_HEADER_SIZE];

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(2, "usage: expcopy FILE [NAME]\n");
    return 1;
  }
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
  memset(block, 0, sizeof(block));
  if (write(out, block, sizeof(block)) != static_cast<int>(sizeof(block))) {
    fprintf(2, "expcopy: no export disk (start QEMU with a second drive, see tools/profget)\n");
    return 1;
  }
  unsigned long length = 0;
  unsigned int crc = 0;
  for (;;) {
    int n = read(in, block, sizeof(block));
    if (n < 0) {
      fprintf(2, "expcopy: read error on %s\n", argv[1]);
      return 1;
    }
    if (n == 0) break;
    if (write(out, block, n) != n) {
      fprintf(2, "expcopy: export disk full after %lu bytes\n", length);
      return 1;
    }
    crc = crc_update(crc, reinterpret_cast<unsigned char *>(block), n);
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
  return 0;
}
