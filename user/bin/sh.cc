// sh: the shell.
//
// It reads a line, splits it into tokens, parses the tokens into a small tree, and runs
// the tree. The language:
//
//   list      := pipeline { (';' | '&') pipeline } [';' | '&']
//   pipeline  := command { '|' command }
//   command   := simple | '(' list ')' { redirect }
//   simple    := { WORD | redirect }            (at least one word)
//   redirect  := '<' WORD | '>' WORD
//
// so `ls > out; cat < out | wc &` and `(echo a; echo b) | grep b` both work. Words may be
// quoted with '...' or "..." to include spaces or special characters. `cd DIR` and `exit`
// are built in.
//
// How commands run: the shell itself walks the list. Every command of a pipeline is a child
// of the shell, forked once: a simple command execs its program in that child directly,
// and a parenthesised list runs in that child, which is then a subshell. So after `spin &`
// the process announced as [N] is spin itself. For a foreground pipeline the shell waits
// until each of its processes has exited; any other child that wait() reports on the way is
// a finished background job, and reaping it there is all the shell does for it.
//
// Everything a line needs lives in fixed tables that are reset for each line, so a
// malformed or overlong line gets a message, never a crash.
#include "lib/user.h"

namespace {

// ---- Limits ---------------------------------------------------------------------------------

constexpr int LINE_MAX = 512;       // longest input line
constexpr int MAX_TOKENS = 128;     // tokens in one line
constexpr int MAX_STAGES = 16;      // commands in one pipeline
constexpr int MAX_LIST_ITEMS = 16;  // pipelines in one list
constexpr int MAX_COMMANDS = 64;    // commands in one line, all nesting levels together
constexpr int MAX_PIPELINES = 64;
constexpr int MAX_LISTS = 16;  // parenthesis depth, roughly

// ---- Tokens ---------------------------------------------------------------------------------

enum class Tok { Word, Pipe, Semi, Amp, Less, Great, LParen, RParen, End };

struct Token {
  Tok kind;
  char *word;  // Tok::Word only: a NUL-terminated copy in word_storage
};

// Words are copied out of the line, each followed by a NUL. Quotes are dropped, so the
// copy is never longer than the line plus one NUL per word.
char word_storage[2 * LINE_MAX];
Token tokens[MAX_TOKENS];

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v'; }

// The characters that are a token by themselves.
struct Special {
  char c;
  Tok kind;
};
constexpr Special SPECIALS[] = {{'|', Tok::Pipe},  {';', Tok::Semi},  {'&', Tok::Amp},
                                {'<', Tok::Less},  {'>', Tok::Great}, {'(', Tok::LParen},
                                {')', Tok::RParen}};

// The token c is by itself, or Tok::Word if it belongs in a word.
Tok special_kind(char c) {
  for (const Special &s : SPECIALS)
    if (s.c == c) return s.kind;
  return Tok::Word;
}

// Splits the line into tokens, ending with Tok::End. Returns false (after a message) on an
// unterminated quote or too many tokens.
bool tokenize(const char *s) {
  char *out = word_storage;
  int n = 0;
  for (;;) {
    while (is_blank(*s)) s++;
    if (n == MAX_TOKENS - 1) {
      fprintf(2, "sh: too many words\n");
      return false;
    }
    Token &t = tokens[n++];
    t.word = nullptr;
    if (*s == '\0') {
      t.kind = Tok::End;
      return true;
    }
    t.kind = special_kind(*s);
    if (t.kind != Tok::Word) {
      s++;
      continue;
    }
    t.word = out;
    while (*s != '\0' && !is_blank(*s) && special_kind(*s) == Tok::Word) {
      if (*s == '\'' || *s == '"') {
        char quote = *s++;
        while (*s != '\0' && *s != quote) *out++ = *s++;
        if (*s == '\0') {
          fprintf(2, "sh: missing closing %c\n", quote);
          return false;
        }
        s++;  // the closing quote
      } else {
        *out++ = *s++;
      }
    }
    *out++ = '\0';
  }
}

// ---- The tree -------------------------------------------------------------------------------

struct List;

struct Command {
  char *argv[MAXARG + 1];  // simple command: the words, null-terminated
  int argc;
  List *group;  // parenthesised list instead of a program, or null
  char *in;     // '<' file, or null
  char *out;    // '>' file, or null
};

struct Pipeline {
  Command *stages[MAX_STAGES];
  int count;
};

struct List {
  Pipeline *items[MAX_LIST_ITEMS];
  bool background[MAX_LIST_ITEMS];
  int count;
};

// The node tables for one line. Allocation hands out the next entry; reset() frees all.
struct Nodes {
  Command commands[MAX_COMMANDS];
  Pipeline pipelines[MAX_PIPELINES];
  List lists[MAX_LISTS];
  int ncommands, npipelines, nlists;

  void reset() { ncommands = npipelines = nlists = 0; }
};
Nodes nodes;

// ---- Parser ---------------------------------------------------------------------------------

// A recursive-descent parser over `tokens`. Each parse_* function returns null after
// printing a message when the input does not fit the grammar.
class Parser {
 public:
  List *parse_line() {
    List *list = parse_list();
    if (list == nullptr) return nullptr;
    if (peek() != Tok::End) return error("unexpected ')'");
    return list;
  }

 private:
  int m_pos = 0;

  Tok peek() const { return tokens[m_pos].kind; }
  Token &next() { return tokens[m_pos++]; }

  // Converts to a null pointer of whatever type the caller returns.
  struct Failure {
    template <typename T>
    operator T *() const {
      return nullptr;
    }
  };

  Failure error(const char *what) {
    fprintf(2, "sh: syntax error: %s\n", what);
    return {};
  }

  List *parse_list() {
    if (nodes.nlists == MAX_LISTS) return error("too deeply nested");
    List *list = &nodes.lists[nodes.nlists++];
    list->count = 0;
    while (peek() != Tok::End && peek() != Tok::RParen) {
      if (list->count == MAX_LIST_ITEMS) return error("too many commands");
      Pipeline *p = parse_pipeline();
      if (p == nullptr) return nullptr;
      bool background = false;
      if (peek() == Tok::Amp) {
        background = true;
        next();
      } else if (peek() == Tok::Semi) {
        next();
      } else if (peek() != Tok::End && peek() != Tok::RParen) {
        return error("unexpected token");
      }
      list->items[list->count] = p;
      list->background[list->count] = background;
      list->count++;
    }
    return list;
  }

  Pipeline *parse_pipeline() {
    if (nodes.npipelines == MAX_PIPELINES) return error("line too complex");
    Pipeline *p = &nodes.pipelines[nodes.npipelines++];
    p->count = 0;
    for (;;) {
      if (p->count == MAX_STAGES) return error("pipeline too long");
      Command *c = parse_command();
      if (c == nullptr) return nullptr;
      p->stages[p->count++] = c;
      if (peek() != Tok::Pipe) return p;
      next();
    }
  }

  Command *parse_command() {
    if (nodes.ncommands == MAX_COMMANDS) return error("line too complex");
    Command *c = &nodes.commands[nodes.ncommands++];
    c->argc = 0;
    c->group = nullptr;
    c->in = c->out = nullptr;

    if (peek() == Tok::LParen) {
      next();
      c->group = parse_list();
      if (c->group == nullptr) return nullptr;
      if (c->group->count == 0) return error("empty ( )");
      if (peek() != Tok::RParen) return error("missing ')'");
      next();
    }
    for (;;) {
      Tok t = peek();
      if (t == Tok::Less || t == Tok::Great) {
        next();
        if (peek() != Tok::Word) return error("missing file name after < or >");
        (t == Tok::Less ? c->in : c->out) = next().word;
      } else if (t == Tok::Word && c->group == nullptr) {
        if (c->argc == MAXARG) return error("too many arguments");
        c->argv[c->argc++] = next().word;
      } else if (t == Tok::Word) {
        return error("unexpected word after ( )");
      } else if (t == Tok::LParen) {
        return error("unexpected '('");
      } else {
        break;
      }
    }
    c->argv[c->argc] = nullptr;
    if (c->group == nullptr && c->argc == 0) return error("missing command");
    return c;
  }
};

// ---- Running --------------------------------------------------------------------------------

void run_list(const List &list);

// Makes `fd` available as descriptor `target` and closes the original. dup() returns the
// lowest free descriptor, so closing `target` first makes it land there.
void move_fd(int fd, int target) {
  if (fd == target) return;
  close(target);
  if (dup(fd) != target) {
    fprintf(2, "sh: cannot set up descriptor %d\n", target);
    exit(1);
  }
  close(fd);
}

void redirect(const char *path, int flags, int target) {
  int fd = open(path, flags);
  if (fd < 0) {
    fprintf(2, "sh: cannot open %s\n", path);
    exit(1);
  }
  move_fd(fd, target);
}

// exec, and if a bare name isn't in the current directory, try the root, where all the
// programs are: after `cd dir`, `ls` still works.
void exec_program(char **argv) {
  exec(argv[0], argv);
  if (strchr(argv[0], '/') == nullptr && strlen(argv[0]) + 2 <= MAXPATH) {
    char path[MAXPATH];
    path[0] = '/';
    strcpy(path + 1, argv[0]);
    exec(path, argv);
  }
  fprintf(2, "exec %s failed\n", argv[0]);
}

// Runs one command in a freshly forked child, with its pipe ends already in place. Never
// returns.
[[noreturn]] void run_in_child(const Command &c) {
  if (c.in != nullptr) redirect(c.in, O_RDONLY, 0);
  if (c.out != nullptr) redirect(c.out, O_WRONLY | O_CREATE | O_TRUNC, 1);
  if (c.group != nullptr) {
    run_list(*c.group);
    exit(0);
  }
  if (strcmp(c.argv[0], "cd") == 0 || strcmp(c.argv[0], "exit") == 0) {
    // A built-in in a pipeline or in the background runs in this child and affects only
    // the child, as in other shells.
    exit(0);
  }
  exec_program(const_cast<char **>(c.argv));
  exit(1);
}

int fork_or_complain() {
  int pid = fork();
  if (pid < 0) fprintf(2, "sh: fork failed\n");
  return pid;
}

// Starts every command of the pipeline, each in its own child, connected by pipes. Stores
// their pids and returns how many were started.
int start_pipeline(const Pipeline &p, int *pids) {
  int started = 0;
  int prev_read = -1;  // read end of the pipe from the previous command
  for (int i = 0; i < p.count; i++) {
    int fds[2] = {-1, -1};
    bool last = i == p.count - 1;
    if (!last && pipe(fds) < 0) {
      fprintf(2, "sh: pipe failed\n");
      break;
    }
    int pid = fork_or_complain();
    if (pid == 0) {
      if (prev_read >= 0) move_fd(prev_read, 0);
      if (!last) {
        close(fds[0]);
        move_fd(fds[1], 1);
      }
      run_in_child(*p.stages[i]);
    }
    // The parent keeps no pipe ends: a reader sees end-of-file only once every copy of the
    // write end is closed, the shell's included.
    if (prev_read >= 0) close(prev_read);
    if (!last) close(fds[1]);
    prev_read = last ? -1 : fds[0];
    if (pid < 0) break;
    pids[started++] = pid;
  }
  if (prev_read >= 0) close(prev_read);
  return started;
}

// Waits until each of the given children has exited. Other children reported meanwhile are
// finished background jobs: they are simply reaped.
void wait_for(int *pids, int count) {
  int remaining = count;
  while (remaining > 0) {
    int pid = wait(nullptr);
    if (pid < 0) return;  // no children left at all
    for (int i = 0; i < count; i++) {
      if (pids[i] == pid) {
        pids[i] = -1;
        remaining--;
      }
    }
  }
}

// Built-ins that must run in the shell process itself to have any effect. Returns true if
// the pipeline was one of them.
bool run_builtin(const Pipeline &p) {
  if (p.count != 1) return false;
  const Command &c = *p.stages[0];
  if (c.group != nullptr) return false;
  if (strcmp(c.argv[0], "cd") == 0) {
    const char *dir = c.argc > 1 ? c.argv[1] : "/";
    if (c.argc > 2) {
      fprintf(2, "usage: cd [DIR]\n");
    } else if (chdir(dir) < 0) {
      fprintf(2, "cd: cannot cd to %s\n", dir);
    }
    return true;
  }
  if (strcmp(c.argv[0], "exit") == 0) exit(c.argc > 1 ? atoi(c.argv[1]) : 0);
  return false;
}

void run_list(const List &list) {
  for (int i = 0; i < list.count; i++) {
    const Pipeline &p = *list.items[i];
    if (list.background[i]) {
      int pids[MAX_STAGES];
      int n = start_pipeline(p, pids);
      // The job is announced by its last command, whose output the user sees.
      if (n > 0) fprintf(2, "[%d]\n", pids[n - 1]);
      continue;
    }
    if (run_builtin(p)) continue;
    int pids[MAX_STAGES];
    int n = start_pipeline(p, pids);
    wait_for(pids, n);
  }
}

// Reads one line into buf. Returns false at end of input. A line longer than the buffer
// is read to its end and rejected, so that its tail is not taken for the next command.
bool read_line(char *buf, int size) {
  fprintf(2, "$ ");
  gets(buf, size);
  if (buf[0] == '\0') return false;
  int len = strlen(buf);
  if (len == size - 1 && buf[len - 1] != '\n' && buf[len - 1] != '\r') {
    char c;
    while (read(0, &c, 1) == 1 && c != '\n' && c != '\r') {
    }
    fprintf(2, "sh: line too long (limit %d characters)\n", size - 2);
    buf[0] = '\n';
    buf[1] = '\0';
  }
  return true;
}

}  // namespace

int main() {
  // Make sure descriptors 0, 1 and 2 are open, so that the files this shell opens never
  // take their places and get mixed up with standard input or output.
  for (;;) {
    int fd = open("/console", O_RDWR);
    if (fd < 0) break;
    if (fd > 2) {
      close(fd);
      break;
    }
  }

  static char line[LINE_MAX];
  while (read_line(line, sizeof(line))) {
    nodes.reset();
    if (!tokenize(line)) continue;
    Parser parser;
    List *list = parser.parse_line();
    if (list != nullptr) run_list(*list);
  }
  return 0;
}
