"""Text that is true: every path that a README or a file-top essay names exists in the tree,
and the README's folder map lists what `ls` shows at each level it describes.

The texts read are every README.md (and any other Markdown file) of the tree, whole, and the
essay at the top of every other text file: the leading comment block of C++, assembly, .def,
linker-script, JavaScript and CSS files; the leading # comments and the module docstring of
Python files (tools/ scripts without .py included); the leading # block of shell scripts,
Makefiles, pytest.ini, lab.toml and the dotfiles; the description above the diff of a
mutant's patch. "The tree" is what git tracks plus new files it does not ignore (`git
ls-files -co --exclude-standard`), so a file about to be committed counts and a build output
does not.

A word of a text (letters, digits and `_ . - / ~ + < >`, and `* { } ,` of a glob) is a path
when it
  - starts with a folder of the top of the tree and a `/` (`kern/fs/fs.cc`, `labs/profile/`,
    `.ci/run`), the folders taken from the tree itself;
  - or is a file at the top of the tree (`Makefile`, `pytest.ini`);
  - or ends in the extension of a source file (SOURCE_EXTENSIONS below), with folders before
    it or not (`fs/buf.h`, `walk.h`);
  - or starts with a folder found beside the text or above it and ends in `/` or in any
    extension (`data/sample.nm` in tests/host, `prof/` in tools/tern);
  - or is a dotted module name of a package on pytest.ini's `pythonpath` (`tern.machine`):
    it names a module file, or a package folder, followed by nothing or by attributes.
A path is looked up against the folder of the text that names it, then each folder above
that one, up to the top, then the folders on pytest.ini's `pythonpath`: in kern/trap/trap.cc,
fs/buf.h is kern/fs/buf.h (the kernel's include root); in labs/profile/README.md,
user/labread.cc is labs/profile/user/labread.cc; anywhere, tern/labs.py is
tools/tern/labs.py, the file of the module that every test imports as tern.labs. A bare file
name that none of those folders holds is accepted when a file of that name exists anywhere in
the tree: an essay may name another folder's file by its name alone (`walk.h`,
`test_boot.py`), and which folder it means is past what a check can know; a name that no file
has is reported.

Not checked, on purpose:
  - absolute paths (/proc/profile, /dev/export, /usr/bin/python3) and URLs: they are paths
    of the guest or of the host, not of the tree;
  - what .gitignore ignores, the path read from the top (build/..., fs.img, mkfs/mkfs,
    compile_commands.json, .gdbport): build outputs, which exist only after a build, so
    they are not in a fresh clone;
  - placeholders: a path with a component in capitals that the tree does not have
    (labs/NAME/, labs/LAB/user, tern.NAME), or with `<` `>` in it;
  - a folder named alone with a trailing `/` that is found neither beside the text nor above
    it (`logs/` of build/grade/): a folder name means too many things to check;
  - this file's own docstring, whose examples are relative to other folders;
  - a student's starter tree (made by tools/mkstarter): it lacks, by design, files that
    the project's texts name, such as the lab's mutants.
A trailing `:LINE` or `:LINE:COL`, the punctuation that ends a sentence and Markdown's
`*emphasis*` are not part of a path. A glob (labs/*/README.md, user/{bin,tests}) must match a
file or folder of the tree, each choice of a brace on its own.

Each failure names the text, the line and the missing path. The check is tried on itself:
texts with planted wrong paths among right ones (seeded; the seed and the number of cases
are printed, TERN_TEST_SEED repeats a run) must be reported at their lines, and only they.

The folder map is the table under "## Where things are" in README.md. Every folder or file in
its first column must exist; and at each level the map describes (each folder that holds a
listed one: the top, kern/, user/, tests/, tools/ ...) every folder of the tree must be listed
itself or have a listed folder below it (kern/ is covered by kern/fs and the rest).
"""

from __future__ import annotations

import configparser
import fnmatch
import functools
import io
import os
import random
import re
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

import pytest

from tern import labs

ROOT = Path(__file__).resolve().parents[2]
THIS = "tests/host/test_text_paths.py"

SOURCE_EXTENSIONS = {".cc", ".h", ".S", ".def", ".ld", ".py", ".md", ".toml", ".sh", ".js",
                     ".mjs", ".css", ".patch", ".ini"}

# How each kind of file writes the comment that holds its essay.
SLASH_COMMENTS = {".cc", ".h", ".def", ".js", ".mjs"}
BLOCK_COMMENTS = {".ld", ".css"}
HASH_COMMENTS = {".S", ".sh", ".toml", ".ini"}

MAP_HEADING = "## Where things are"


# --- The tree --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tree:
    root: Path
    files: frozenset[str]      # relative to the root, '/'-separated
    folders: frozenset[str]    # every folder that holds a file ('' is the root)
    ignored: tuple[str, ...]   # the patterns of .gitignore
    modules: tuple[str, ...]   # the folders on pytest.ini's pythonpath

    def exists(self, path: str) -> bool:
        path = path.rstrip("/")
        return path in self.files or path in self.folders

    @functools.cached_property
    def top_folders(self) -> set[str]:
        return {f.split("/")[0] for f in self.files if "/" in f}

    @functools.cached_property
    def top_files(self) -> set[str]:
        return {f for f in self.files if "/" not in f}

    @functools.cached_property
    def file_names(self) -> set[str]:
        return {f.rsplit("/", 1)[-1] for f in self.files}

    def children(self, folder: str) -> set[str]:
        """The folders directly inside `folder`."""
        prefix = f"{folder}/" if folder else ""
        return {f for f in self.folders
                if f.startswith(prefix) and f != folder and "/" not in f[len(prefix):]}

    def is_ignored(self, path: str) -> bool:
        """Whether .gitignore leaves `path` out: as git reads it, a pattern with no '/' but a
        trailing one matches a name at any depth, any other one a path from the top."""
        parts = path.rstrip("/").split("/")
        for pattern in self.ignored:
            bare = pattern.strip("/")
            for i in range(len(parts)):
                if "/" not in bare and fnmatch.fnmatchcase(parts[i], bare):
                    return True
                if fnmatch.fnmatchcase("/".join(parts[:i + 1]), bare):
                    return True
        return False

    def glob(self, pattern: str) -> bool:
        pattern = pattern.rstrip("/")
        return any(fnmatch.fnmatchcase(p, pattern) for p in self.files | self.folders)


def tree_of(root: Path) -> Tree:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                         capture_output=True, check=True).stdout.decode()
    files = frozenset(p for p in out.split("\0") if p and (root / p).is_file())
    folders = {""}
    for f in files:
        parts = f.split("/")
        folders |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    ignored: tuple[str, ...] = ()
    if (root / ".gitignore").is_file():
        ignored = tuple(s.strip() for s in (root / ".gitignore").read_text().splitlines()
                        if s.strip() and not s.startswith("#"))
    ini = configparser.ConfigParser()
    ini.read(root / "pytest.ini")
    modules = tuple(ini.get("pytest", "pythonpath", fallback="").split())
    return Tree(root, files, frozenset(folders), ignored, modules)


# --- The texts -------------------------------------------------------------------------------

Lines = list[tuple[int, str]]  # (line number from 1, its text)


def is_python(path: str, text: str) -> bool:
    head = text.split("\n", 2)[:2]
    return path.endswith(".py") or any("python" in h or h.startswith("''''exec") for h in head)


def python_essay(text: str) -> Lines:
    """The leading # comments and the docstring of a Python file. The `''''exec` line with
    which a tools/ script starts itself with the right interpreter is not part of it."""
    found: Lines = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
                continue
            if tok.type == tokenize.COMMENT:
                if not tok.string.startswith("#!"):
                    found.append((tok.start[0], tok.string))
                continue
            if tok.type == tokenize.STRING and tok.string.startswith("''''exec"):
                continue
            if tok.type == tokenize.STRING:
                found += [(tok.start[0] + i, s) for i, s in enumerate(tok.string.split("\n"))]
            break
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def comment_essay(lines: list[str], style: str) -> Lines:
    """The leading comment block: comment and blank lines from the top (after a #! line or
    `#pragma once`) up to the first line of code."""
    found: Lines = []
    in_block = False
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if n == 1 and s.startswith("#!"):
            continue
        comment = (in_block or s.startswith("/*") if style == "block" else
                   s.startswith("//") if style == "slash" else
                   re.match(r"#(\s|#|$)", s) is not None)
        if comment:
            found.append((n, line))
            if style == "block":
                in_block = "*/" not in s
        elif s and s != "#pragma once":
            break
    return found


def patch_essay(lines: list[str]) -> Lines:
    """A mutant's description: the lines above its diff."""
    found: Lines = []
    for n, line in enumerate(lines, 1):
        if line.startswith(("diff --git", "--- ")):
            break
        found.append((n, line))
    return found


def essay(path: str, text: str) -> Lines:
    """The lines of a file that the check reads: all of a README (any .md), the essay of a
    source file, nothing of a data file."""
    name = PurePosixPath(path).name
    ext = PurePosixPath(path).suffix
    lines = text.split("\n")
    if ext == ".md":
        return list(enumerate(lines, 1))
    if ext == ".patch":
        return patch_essay(lines)
    if is_python(path, text):
        return python_essay(text)
    if ext in SLASH_COMMENTS:
        return comment_essay(lines, "slash")
    if ext in BLOCK_COMMENTS:
        return comment_essay(lines, "block")
    if ext in HASH_COMMENTS or name == "Makefile" or (not ext and text.startswith("#")):
        return comment_essay(lines, "hash")
    return []


def texts(tree: Tree) -> Iterator[tuple[str, Lines]]:
    """(path, lines) of every text the check reads."""
    for path in sorted(tree.files - {THIS}):
        try:
            text = (tree.root / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        lines = essay(path, text)
        if lines:
            yield path, lines


# --- The paths in a line ---------------------------------------------------------------------

# A word made of path characters; a comma only inside braces.
WORD = re.compile(r"(?:[\w.*/~+<>-]|\{[\w.,/*-]*\})+")
LINE_SUFFIX = re.compile(r"(:\d+)+$")
EMPHASIS = re.compile(r"(\*+)([^*].*?)(\*+)")
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*")
MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def bases(text_path: str) -> list[str]:
    """The folder of a text and each folder above it, nearest first ('' is the top)."""
    parts = text_path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def join(base: str, path: str) -> str:
    full = f"{base}/{path}" if base else path
    return os.path.normpath(full) + ("/" if path.endswith("/") else "") if ".." in full else full


def clean(word: str) -> str:
    """The word without what ends a sentence, what follows a path (`:LINE`) and Markdown's
    emphasis around it (`*word*`)."""
    while True:
        stripped = LINE_SUFFIX.sub("", word.rstrip(".,;:"))
        emphasis = EMPHASIS.fullmatch(stripped)
        if emphasis and len(emphasis.group(1)) == len(emphasis.group(3)):
            stripped = emphasis.group(2)
        if stripped == word:
            return word
        word = stripped


def module_root(word: str, tree: Tree) -> str | None:
    """The folder of a dotted name's package, if its first name is a package on pythonpath."""
    if not MODULE.fullmatch(word) or PurePosixPath(word).suffix in SOURCE_EXTENSIONS:
        return None
    first = word.split(".")[0]
    for folder in tree.modules:
        if f"{folder}/{first}/__init__.py" in tree.files:
            return folder
    return None


def is_path(word: str, text_path: str, tree: Tree) -> bool:
    if not word or word.startswith(("/", "~", "-")) or "<" in word or ">" in word:
        return False
    if module_root(word, tree) is not None:
        return True
    ext = PurePosixPath(word.rstrip("/*")).suffix
    if "/" not in word:
        return word in tree.top_files or ext in SOURCE_EXTENSIONS
    first = word.split("/")[0]
    if first in tree.top_folders or ext in SOURCE_EXTENSIONS:
        return True
    beside = any(f"{base}/{first}" in tree.folders for base in bases(text_path) if base)
    return beside and (word.endswith("/") or bool(ext))


def words(line: str, text_path: str, tree: Tree) -> Iterator[str]:
    """The words of a line that name paths of the tree."""
    for m in WORD.finditer(line):
        if line[m.end():m.end() + 3] == "://":
            continue  # a URL's scheme; the rest starts with '/'
        word = clean(m.group(0))
        if is_path(word, text_path, tree):
            yield word


def is_placeholder(path: str, tree: Tree) -> bool:
    """Whether a component of the path (or of a dotted name) is in capitals and not in the
    tree: labs/NAME/, tern.NAME."""
    sep = "." if module_root(path, tree) is not None else "/"
    parts = path.rstrip("/").split(sep)
    return any(PLACEHOLDER.fullmatch(p) and not tree.exists("/".join(parts[:i + 1]))
               for i, p in enumerate(parts))


def module_exists(word: str, folder: str, tree: Tree) -> bool:
    names = word.split(".")
    here = f"{folder}/{names[0]}"
    for name in names[1:]:
        if f"{here}/{name}.py" in tree.files:
            return True  # a module; what follows is its attributes
        if f"{here}/{name}" not in tree.folders:
            return False
        here = f"{here}/{name}"
    return True  # a package


def expand_braces(word: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    return [w for choice in m.group(1).split(",")
            for w in expand_braces(word[:m.start()] + choice + word[m.end():])]


def resolves(word: str, text_path: str, tree: Tree) -> bool:
    folder = module_root(word, tree)
    if folder is not None:
        return is_placeholder(word, tree) or module_exists(word, folder, tree)
    return all(resolves_one(p, text_path, tree) for p in expand_braces(word))


def resolves_one(path: str, text_path: str, tree: Tree) -> bool:
    if is_placeholder(path, tree):
        return True
    if tree.is_ignored(path):
        return True  # a build output, named from the top
    for base in bases(text_path) + list(tree.modules):
        full = join(base, path)
        if tree.glob(full) if "*" in full else tree.exists(full):
            return True
    return "/" not in path and path in tree.file_names


@dataclass(frozen=True)
class Missing:
    text: str
    line: int
    path: str

    def __str__(self) -> str:
        return f"{self.text}:{self.line}: names {self.path}, which is not in the tree"


def missing_in(text_path: str, lines: Lines, tree: Tree) -> list[Missing]:
    return [Missing(text_path, n, word) for n, line in lines
            for word in words(line, text_path, tree) if not resolves(word, text_path, tree)]


# --- The folder map --------------------------------------------------------------------------

def map_heading(readme: str) -> int:
    """The line of the folder map's heading, from 1."""
    return readme.split("\n").index(MAP_HEADING) + 1


def folder_map(readme: str) -> list[tuple[int, str]]:
    """(line, name) of each folder or file named in the first column of the map's table."""
    lines = readme.split("\n")
    start = map_heading(readme) - 1
    found = []
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("#"):
            break
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2 and not set(cells[1].strip()) <= set("-: "):
            found += [(n, name.rstrip("/")) for name in re.findall(r"`([^`]+)`", cells[1])]
    return found


def map_problems(readme: str, tree: Tree) -> list[str]:
    listed = folder_map(readme)
    problems = [f"README.md:{n}: the folder map lists {name}, which is not in the tree"
                for n, name in listed if not tree.exists(name)]
    names = {name for _, name in listed}
    levels = {name.rsplit("/", 1)[0] if "/" in name else "" for name in names}
    for level in sorted(levels):
        for folder in sorted(tree.children(level)):
            if not any(n == folder or n.startswith(folder + "/") for n in names):
                where = f"{level}/" if level else "the top of the tree"
                problems.append(f"README.md:{map_heading(readme)}: the folder map describes "
                                f"{where} but does not list {folder}/")
    return problems


# --- Tests -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tree() -> Tree:
    return tree_of(ROOT)


def is_starter(tree: Tree) -> bool:
    """A student's starter tree lacks, by design, files that the project's texts name."""
    return any(not tree.exists(w) for name in labs.names(tree.root)
               for w in labs.load(name, tree.root).withheld)


def test_every_path_named_in_a_readme_or_an_essay_exists(tree: Tree) -> None:
    if is_starter(tree):
        pytest.skip("a starter tree: its texts name the files withheld from it")
    read = list(texts(tree))
    named = [w for path, lines in read for _, line in lines for w in words(line, path, tree)]
    print(f"{len(read)} texts read, {len(named)} paths named in them")
    assert len(read) > 100 and len(named) > 500, "the check found too little to read"
    missing = [m for path, lines in read for m in missing_in(path, lines, tree)]
    assert not missing, "\n".join(map(str, missing))


def test_the_folder_map_matches_the_tree(tree: Tree) -> None:
    readme = (tree.root / "README.md").read_text()
    listed = folder_map(readme)
    print(f"the folder map lists {len(listed)} folders and files")
    assert len(listed) > 10, "the folder map was not found"
    problems = map_problems(readme, tree)
    assert not problems, "\n".join(problems)


# --- The check, tried on texts with planted paths ---------------------------------------------

FILLER = ["the", "kernel", "reads", "each", "sample", "and", "on/off", "copyin/copyout",
          "/proc/profile", "/dev/export", "/usr/bin/python3", "https://www.speedscope.app/x.js",
          "labs/NAME/", "labs/LAB/user", "build/kernel.elf", "build/demo/hot/report.html",
          "fs.img", "mkfs/mkfs", "compile_commands.json", "7.2.22", "1.5", "e.g.", "a0..a5",
          "tern.NAME", "sstatus.SIE", "user/{bin,tests}", "labs/*/README.md", "N/M", "I/O",
          "build/grade-logs/<test>.log", "--only", "~/.config/gdb/gdbinit", "answers"]
BEFORE = ["", "`", "(", '"', "'", "*"]
AFTER = ["", "`", ")", ".", ",", ";", ":", "`.", "),"]
LINE_AFTER = [":12", ":7:3", ":12."]


def seed() -> int:
    value = int(os.environ.get("TERN_TEST_SEED") or random.randrange(1 << 32))
    print(f"seed {value} (TERN_TEST_SEED={value} repeats this run)")
    return value


def unused_name(rng: random.Random, tree: Tree) -> str:
    """A lowercase name that no path of the tree contains."""
    everything = "\n".join(tree.files)
    while True:
        name = "zq" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5))
        if name not in everything:
            return name


def right_word(rng: random.Random, text_path: str, tree: Tree) -> str:
    """A word that names a path of the tree, in one of the forms a text uses."""
    folders = sorted(tree.folders - {""})
    kind = rng.randrange(4)
    if kind == 0:                                   # from the top: a file
        return rng.choice(sorted(tree.files))
    if kind == 1:                                   # from the top: a folder
        folder = rng.choice(folders)
        return folder + ("/" if "/" not in folder else rng.choice(["/", ""]))
    if kind == 2:                                   # a bare file name, of any folder
        names = sorted(n for n in tree.file_names if PurePosixPath(n).suffix
                       in SOURCE_EXTENSIONS)
        return rng.choice(names)
    base = rng.choice([b for b in bases(text_path) if b] or [""])  # relative to a folder
    under = sorted(r for f in tree.files if f.startswith(base + "/")
                   for r in [f[len(base) + 1:]]
                   if PurePosixPath(r).suffix in SOURCE_EXTENSIONS or "/" in r
                   and PurePosixPath(r).suffix)
    return rng.choice(under) if under else rng.choice(sorted(tree.files))


def wrong_word(rng: random.Random, text_path: str, tree: Tree) -> str:
    """A word that looks like a path of the tree but names none."""
    bad = unused_name(rng, tree)
    kind = rng.randrange(4)
    if kind == 0:                                   # a bare name that no file has
        return bad + rng.choice(sorted(SOURCE_EXTENSIONS))
    if kind == 1:                                   # a glob or brace that matches nothing
        return rng.choice([f"labs/*/{bad}.md", f"user/{{bin,{bad}}}", f"kern/*/{bad}.h"])
    # A real path from the top with one of its components, after the first, misspelt.
    deep = sorted(f for f in tree.files | tree.folders if f.count("/") >= 1)
    parts = rng.choice(deep).split("/")
    i = rng.randrange(1, len(parts))
    stem, dot, ext = parts[i].partition(".")
    parts[i] = rng.choice([stem + bad, bad + stem]) + dot + ext
    return "/".join(parts) + ("/" if kind == 2 and i == len(parts) - 1 and not dot else "")


def decorate(rng: random.Random, word: str) -> tuple[str, str]:
    """The word as a text might write it, and the path the check should name."""
    before, after = rng.choice(BEFORE), rng.choice(AFTER)
    if not word.endswith("/") and "*" not in word and "{" not in word and rng.random() < 0.3:
        after = rng.choice(LINE_AFTER) + rng.choice(["", "`", ")"])
    if before == "*":
        after = "*" + after  # emphasis, in Markdown
    return before + word + after, word


def test_the_check_reports_planted_wrong_paths_and_only_them(tree: Tree) -> None:
    rng = random.Random(seed())
    texts_at = sorted(p for p in tree.files if p.endswith((".md", ".cc", ".py", ".h")))
    cases = right_total = wrong_total = 0
    for _ in range(300):
        text_path = rng.choice(texts_at)
        lines: Lines = []
        planted: list[tuple[int, str, bool]] = []
        for n in range(1, rng.randrange(2, 12)):
            line = [rng.choice(FILLER) for _ in range(rng.randrange(1, 8))]
            for _ in range(rng.randrange(0, 4)):
                wrong = rng.random() < 0.3
                word = (wrong_word if wrong else right_word)(rng, text_path, tree)
                written, path = decorate(rng, word)
                line.insert(rng.randrange(len(line) + 1), written)
                planted.append((n, path, wrong))
            lines.append((n, " ".join(line)))
        shown = f"in {text_path}:\n" + "\n".join(f"{n}: {t}" for n, t in lines)
        # Every planted path is seen as one, right or wrong ...
        seen = {(n, w) for n, t in lines for w in words(t, text_path, tree)}
        assert {(n, p) for n, p, _ in planted} - seen == set(), shown
        # ... and the wrong ones, only they, are reported.
        found = {(m.line, m.path) for m in missing_in(text_path, lines, tree)}
        wrong = {(n, p) for n, p, w in planted if w}
        assert found ^ wrong == set(), shown
        cases += 1
        right_total += len(planted) - len(wrong)
        wrong_total += len(wrong)
    print(f"{cases} texts, {right_total} right paths accepted, {wrong_total} wrong ones "
          f"reported")
    assert wrong_total > 50 and right_total > 200


@pytest.mark.parametrize("text_path, word, reported", [
    ("README.md", "kern/no/such.cc", "kern/no/such.cc"),
    ("README.md", "`kern/fs/nosuch.cc:42`.", "kern/fs/nosuch.cc"),
    ("README.md", "kern/fs/fs.cc:42", None),
    ("README.md", "/proc/profile", None),
    ("README.md", "labs/NAME/", None),
    ("README.md", "build/kernel.elf", None),
    ("README.md", "mkfs/mkfs", None),
    ("README.md", "labs/*/README.md", None),
    ("README.md", "labs/*/NOSUCH.md", "labs/*/NOSUCH.md"),
    ("README.md", "user/{bin,tests}", None),
    ("README.md", "user/{bin,nosuch}", "user/{bin,nosuch}"),
    ("kern/trap/trap.cc", "fs/buf.h", None),
    ("README.md", "fs/buf.h", "fs/buf.h"),
    ("labs/profile/README.md", "user/labread.cc", None),
    ("README.md", "user/labread.cc", "user/labread.cc"),
    ("labs/profile/test_lab_profile.py", "tern/fixtures.py", None),
    ("labs/profile/test_lab_profile.py", "tern/nosuch.py", "tern/nosuch.py"),
    ("README.md", "walk.h", None),
    ("README.md", "sched.cc", "sched.cc"),
    ("README.md", "tern.machine", None),
    ("README.md", "tern.grade.plugin", None),
    ("README.md", "tern.nosuch", "tern.nosuch"),
    ("tests/host/Makefile", "data/sample.nm", None),
    ("tests/host/Makefile", "data/nosuch.nm", "data/nosuch.nm"),
    ("README.md", "https://example.com/kern/nosuch.cc", None),
    ("README.md", "Makefile", None),
])
def test_the_check_on_examples(tree: Tree, text_path: str, word: str, reported: str | None
                               ) -> None:
    line = f"see {word} for that"
    found = missing_in(text_path, [(7, line)], tree)
    assert [m.path for m in found] == ([reported] if reported else [])
    for m in found:
        assert str(m).startswith(f"{text_path}:7: ") and reported in str(m)


ESSAYS = {
    # name: (text, the line of the planted path, or 0 when the check must not read it)
    "kern/x/a.cc": ("// A.\n//\n// See kern/no/such.cc.\n\n#include \"a.h\"\n", 3),
    "kern/x/b.cc": ("// B.\n\n#include \"b.h\"\n// kern/no/such.cc\n", 0),
    "kern/x/c.h": ("#pragma once\n\n// C, beside\n// kern/no/such.cc\nint c();\n", 4),
    "kern/x/d.ld": ("/*\n * D\n * kern/no/such.cc\n */\nSECTIONS {}\n", 3),
    "kern/x/e.S": ("# E\n# kern/no/such.cc\n#include \"e.h\"\n# kern/no/such.cc\n", 2),
    "tools/x.py": ('"""X.\n\nkern/no/such.cc\n"""\nimport os\n"""kern/no/such.cc"""\n', 3),
    "tools/y.py": ("#!/usr/bin/env python3\n# Y: kern/no/such.cc\n\"\"\"Y.\"\"\"\n", 2),
    "tools/z": ("#!/bin/sh\n''''exec python3 \"$0\" # '''\n\"\"\"Z, kern/no/such.cc\"\"\"\n", 3),
    "tools/w": ("#!/bin/sh\n# W\n#   kern/no/such.cc\nset -eu\n# kern/no/such.cc\n", 3),
    "tests/x/Makefile": ("# M\n# kern/no/such.cc\nall:\n# kern/no/such.cc\n", 2),
    "labs/x/mutants/m.patch": ("Mutant m: kern/no/such.cc\n---\n diff\n", 1),
    "labs/x/README.md": ("# X\n\ntext\n\nkern/no/such.cc\n", 5),
    "labs/x/notes.md": ("# X\n\nkern/no/such.cc\n", 3),
    "labs/x/data.json": ('["kern/no/such.cc"]\n', 0),
}


@pytest.mark.parametrize("name", sorted(ESSAYS))
def test_the_essay_is_read_and_only_it(tree: Tree, name: str) -> None:
    text, line = ESSAYS[name]
    found = missing_in(name, essay(name, text), tree)
    assert [(m.line, m.path) for m in found] == ([(line, "kern/no/such.cc")] if line else [])


def with_rows(names: list[str]) -> str:
    rows = "".join(f"| `{name}` | what it holds |\n" for name in names)
    return f"# x\n\n{MAP_HEADING}\n\n| folder | what it holds |\n| --- | --- |\n{rows}\n## Next\n"


def test_the_folder_map_check_finds_what_is_wrong(tree: Tree) -> None:
    """Maps made from the tree (the top and the folders of some top folders) pass; without
    one of their rows, or with a row that names nothing, they fail and say why."""
    rng = random.Random(seed())
    cases = 0
    for _ in range(50):
        tops = sorted(tree.children(""))
        names = tops + [f for t in rng.sample(tops, rng.randrange(len(tops) + 1))
                        for f in sorted(tree.children(t))]
        assert map_problems(with_rows(names), tree) == []
        bad = f"{rng.choice(tops)}/{unused_name(rng, tree)}"
        problems = map_problems(with_rows(names + [bad]), tree)
        assert sum(f"lists {bad}," in p for p in problems) == 1, problems
        gone = rng.choice(names)
        rest = [n for n in names if n != gone]
        parent = gone.rsplit("/", 1)[0] if "/" in gone else ""
        described = any((n.rsplit("/", 1)[0] if "/" in n else "") == parent for n in rest)
        covered = any(n.startswith(gone + "/") for n in rest)
        problems = map_problems(with_rows(rest), tree)
        if described and not covered:
            assert len(problems) == 1 and f"not list {gone}/" in problems[0], (gone, problems)
        else:
            assert problems == [], (gone, problems)
        cases += 1
    print(f"{cases} maps tried")
