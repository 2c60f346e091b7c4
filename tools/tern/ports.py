"""A TCP port on 127.0.0.1 that is free right now (for QEMU's gdb stub).

The port is free when chosen; another program may take it before QEMU binds it, so callers
that can retry do (tests/qemu/test_gdb.py). `python -m tern.ports` prints one (make qemu-gdb).
"""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print(free_port())
