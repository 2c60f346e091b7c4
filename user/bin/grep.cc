// grep: prints the lines of each file (or standard input) that match a pattern.
//
// Patterns are a tiny regular-expression language:
//   c   any ordinary character matches itself
//   .   matches any one character
//   x*  matches zero or more of x (x is a character or '.')
//   ^   at the start: the match must begin at the start of the line
//   $   at the end: the match must finish at the end of the line
//
// The pattern is first turned into a list of items, each "this character (or any
// character), exactly once or any number of times". Matching then tries each starting
// position in the line and walks the items; a starred item first takes as many characters
// as it can and gives them back one at a time until the rest of the pattern matches
// (backtracking). Lines are read in chunks and split at newlines; a line longer than the
// buffer is matched in buffer-sized pieces.
#include "lib/user.h"

namespace {

struct Item {
  bool any;       // '.' : matches every character
  char c;         // otherwise, the character to match
  bool repeated;  // followed by '*'
};

constexpr int MAX_ITEMS = 128;

struct Pattern {
  Item items[MAX_ITEMS];
  int count = 0;
  bool anchored_start = false;
  bool anchored_end = false;
};

// Returns false if the pattern is too long.
bool compile(const char *text, Pattern &p) {
  if (*text == '^') {
    p.anchored_start = true;
    text++;
  }
  while (*text != '\0') {
    // '$' is special only as the last character of the pattern.
    if (text[0] == '$' && text[1] == '\0') {
      p.anchored_end = true;
      break;
    }
    if (p.count == MAX_ITEMS) return false;
    Item &item = p.items[p.count++];
    item.any = *text == '.';
    item.c = *text;
    item.repeated = text[1] == '*';
    text += item.repeated ? 2 : 1;
  }
  return true;
}

bool item_matches(const Item &item, char c) { return item.any || item.c == c; }

// Do items [i, count) match the text starting at s (ending at end)?
bool match_here(const Pattern &p, int i, const char *s, const char *end) {
  for (; i < p.count; i++) {
    const Item &item = p.items[i];
    if (item.repeated) {
      // Take the longest run first, then back off one character at a time.
      const char *t = s;
      while (t < end && item_matches(item, *t)) t++;
      for (;; t--) {
        if (match_here(p, i + 1, t, end)) return true;
        if (t == s) return false;
      }
    }
    if (s == end || !item_matches(item, *s)) return false;
    s++;
  }
  return !p.anchored_end || s == end;
}

bool matches(const Pattern &p, const char *line, const char *end) {
  if (p.anchored_start) return match_here(p, 0, line, end);
  for (const char *s = line;; s++) {
    if (match_here(p, 0, s, end)) return true;
    if (s == end) return false;
  }
}

char *find_newline(char *from, char *end) {
  for (; from < end; from++) {
    if (*from == '\n') return from;
  }
  return nullptr;
}

// Prints the matching lines of one open file.
void grep(const Pattern &p, int fd, const char *name) {
  char buf[1024];
  int have = 0;  // bytes in buf not yet examined
  for (;;) {
    int n = read(fd, buf + have, sizeof(buf) - have);
    if (n < 0) {
      fprintf(2, "grep: read error in %s\n", name);
      return;
    }
    if (n == 0) break;
    have += n;

    char *line = buf;
    char *nl;
    while ((nl = find_newline(line, buf + have)) != nullptr) {
      if (matches(p, line, nl)) write(1, line, nl - line + 1);
      line = nl + 1;
    }
    have -= line - buf;
    memmove(buf, line, have);
    // A line that fills the whole buffer is cut: judge the piece as a line of its own.
    if (have == static_cast<int>(sizeof(buf))) {
      if (matches(p, buf, buf + have)) {
        write(1, buf, have);
        write(1, "\n", 1);
      }
      have = 0;
    }
  }
  // The last line may lack its newline.
  if (have > 0 && matches(p, buf, buf + have)) {
    write(1, buf, have);
    write(1, "\n", 1);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage_exit("grep PATTERN [FILE...]\n");
  static Pattern pattern;
  if (!compile(argv[1], pattern)) {
    fprintf(2, "grep: pattern too long\n");
    return 1;
  }
  if (argc == 2) {
    grep(pattern, 0, "standard input");
    return 0;
  }
  int status = 0;
  for (int i = 2; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    if (fd < 0) {
      fprintf(2, "grep: cannot open %s\n", argv[i]);
      status = 1;
      continue;
    }
    grep(pattern, fd, argv[i]);
    close(fd);
  }
  return status;
}
