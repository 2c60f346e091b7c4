#!/bin/sh
# Gradescope runs this once, as root, when it builds the autograder's image: install what
# building and booting the system needs. The same Debian packages as `make deps`, less the
# ones only developers use (gdb, chromium, googletest).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
  make g++ git ca-certificates \
  g++-riscv64-linux-gnu qemu-system-misc opensbi \
  python3 python3-pytest python3-pexpect python3-pytest-xdist python3-pyelftools
# Fail now, not at the first submission, if something is missing.
riscv64-linux-gnu-g++ --version >/dev/null
qemu-system-riscv64 --version
/usr/bin/python3 -c 'import pytest, pexpect, xdist'
# The QEMU and OpenSBI the image has, and a warning if they are older than the project
# tests (the README's "Platforms"); fails if QEMU cannot start OpenSBI at all.
/usr/bin/python3 "$(dirname "$0")/starter/tools/check-platform"
