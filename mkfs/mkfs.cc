// mkfs: the command that makes the disk image the kernel boots with.
//
//   mkfs/mkfs [-s BLOCKS] [-i INODES] fs.img FILE...
//
// Each FILE goes into the root directory under its last path component, less a leading '_'
// (the build names user programs build/user/_ls so they don't clash with source files; on the
// disk they are just "ls"). Without options the image has FSSIZE blocks and NINODES inodes, the
// sizes xv6 uses.
//
// The work happens in two phases so that a mistake never leaves a half-made image behind. First
// every input is read and added to an in-memory image (image.h); any problem, such as a missing
// file, a name that is too long or a disk that is too small, stops mkfs with a message and exit
// status 1 before the output is touched. Only then is the image written, to a temporary file
// next to the output that is renamed over it at the end: a reader sees either the old image or
// the complete new one, never a partial write.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "image.h"

namespace {

constexpr const char *kUsage = "usage: mkfs [-s blocks] [-i inodes] fs.img file...\n";

struct Options {
  uint32_t size = FSSIZE;
  uint32_t ninodes = NINODES;
  std::string output;
  std::vector<std::string> inputs;
};

// Parses a positive decimal count; false if `text` is not one.
bool parse_count(const char *text, uint32_t &out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0 || v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_args(int argc, char **argv, Options &opt) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    std::string flag = argv[i];
    if (flag == "--") {
      i++;
      break;
    }
    uint32_t *target = flag == "-s" ? &opt.size : flag == "-i" ? &opt.ninodes : nullptr;
    if (target == nullptr || i + 1 >= argc || !parse_count(argv[i + 1], *target)) {
      std::fprintf(stderr, "mkfs: bad option %s\n", argv[i]);
      return false;
    }
    i++;
  }
  if (i >= argc) return false;
  opt.output = argv[i++];
  opt.inputs.assign(argv + i, argv + argc);
  return true;
}

mkfs::Status read_input(const std::string &path, std::vector<uint8_t> &out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return mkfs::Status::failure(path + ": no such regular file");
  // Refuse an oversized file before reading it all into memory.
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return mkfs::Status::failure(path + ": " + ec.message());
  if (size > mkfs::kMaxFileBytes)
    return mkfs::Status::failure(path + ": " + std::to_string(size) + " bytes is more than the " +
                                 std::to_string(mkfs::kMaxFileBytes) +
                                 " (MAXFILE blocks) a file can hold");
  std::ifstream in(path, std::ios::binary);
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return mkfs::Status::failure(path + ": read error");
  return mkfs::Status::success();
}

// Writes `bytes` to `path` through a temporary file and a rename, so `path` is never partial.
mkfs::Status write_atomically(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::string temp = path + ".XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0)
    return mkfs::Status::failure(path +
                                 ": cannot create a file next to it: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      close(fd);
      unlink(temp.c_str());
      return mkfs::Status::failure(temp + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates the file readable only by its owner; give it the permissions any new file
  // would get, as if it had been created with open().
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || close(fd) != 0 || rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    unlink(temp.c_str());
    return mkfs::Status::failure(path + ": " + why);
  }
  return mkfs::Status::success();
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mkfs: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parse_args(argc, argv, opt)) {
    std::fputs(kUsage, stderr);
    return 1;
  }

  mkfs::Layout layout;
  if (mkfs::Status s = mkfs::plan_layout(opt.size, opt.ninodes, layout); !s.ok())
    return fail(s.message());
  mkfs::ImageBuilder image(layout);

  for (const std::string &path : opt.inputs) {
    std::vector<uint8_t> data;
    if (mkfs::Status s = read_input(path, data); !s.ok()) return fail(s.message());
    if (mkfs::Status s = image.add_file(mkfs::image_name(path), data); !s.ok())
      return fail(path + ": " + s.message());
  }

  if (mkfs::Status s = write_atomically(opt.output, image.bytes()); !s.ok())
    return fail(s.message());

  std::printf("mkfs: %s: %u blocks (%u metadata, %u data, %u in use), %u inodes (%u in use)\n",
              opt.output.c_str(), layout.size, layout.datastart, layout.nblocks(),
              image.used_blocks(), layout.ninodes, image.next_inum() - 1);
  return 0;
}
