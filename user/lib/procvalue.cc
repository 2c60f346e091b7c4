// Reading one `KEY: value` line of a file in /proc: /proc/profstat for the profile command
// and its tests, /proc/meminfo for the tests that count free pages.
#include "lib/user.h"

bool proc_value(const char *path, const char *key, char *out, int cap) {
  // Static, not on the one-page stack: `profiling:` alone lists up to NPROC pids.
  static char text[2048];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  int len = 0, n;
  while (len < static_cast<int>(sizeof(text)) - 1 &&
         (n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
    len += n;
  close(fd);
  text[len] = '\0';
  int keylen = strlen(key);
  for (char *line = text; *line != '\0';) {
    char *end = strchr(line, '\n');
    if (end != nullptr) *end = '\0';
    if (strncmp(line, key, keylen) == 0 && line[keylen] == ':') {
      const char *v = line + keylen + 1;
      while (*v == ' ') v++;
      int i = 0;
      for (; v[i] != '\0' && i < cap - 1; i++) out[i] = v[i];
      out[i] = '\0';
      return true;
    }
    if (end == nullptr) break;
    line = end + 1;
  }
  return false;
}

bool profstat_value(const char *key, char *out, int cap) {
  return proc_value("/proc/profstat", key, out, cap);
}

long free_pages() {
  char value[24];
  return proc_value("/proc/meminfo", "free pages", value, sizeof(value)) ? atoi(value) : -1;
}
