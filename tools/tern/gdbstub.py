"""A small client for QEMU's gdb stub, for measurements that must stop the guest exactly.

QEMU started with `-gdb tcp:127.0.0.1:PORT` (and `-S`, to wait before the first
instruction) speaks the GDB remote serial protocol: packets `$payload#checksum`, each
acknowledged with `+`. A handful of requests is enough here: set or clear a breakpoint
(`Z0`/`z0`) or a write watchpoint (`Z2`/`z2`), continue (`c`) until the guest stops,
continue one hart alone (`vCont;c:THREAD`: QEMU leaves the others stopped), stop the guest
(a bare 0x03 byte), and run a QEMU monitor command (`qRcmd`, whose output comes back
hex-encoded in `O` packets).

gdb-multiarch itself could do the same, but its batch mode and QEMU's icount mode do not
get along well, and a direct client lets the harness keep reading the console while it
waits for a breakpoint.
"""

from __future__ import annotations

import socket
import time
from typing import Callable


class GdbStubError(Exception):
    pass


class GdbStub:
    def __init__(self, port: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                # A refused connection leaves no trace in QEMU, so retrying until the stub
                # listens is safe; the first connection that succeeds is the session.
                self._sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise GdbStubError(f"no gdb stub on port {port}") from None
                time.sleep(0.05)
        self._buf = b""

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "GdbStub":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- packets --

    def _send(self, payload: str) -> None:
        checksum = sum(payload.encode()) & 0xFF
        self._sock.sendall(f"${payload}#{checksum:02x}".encode())

    def _packet(self, timeout: float, idle: Callable[[], None] | None = None) -> str:
        """The next packet from the stub. `idle` is called while nothing arrives."""
        deadline = time.monotonic() + timeout
        while True:
            start = self._buf.find(b"$")
            end = self._buf.find(b"#", start) if start >= 0 else -1
            if end >= 0 and len(self._buf) >= end + 3:
                payload = self._buf[start + 1:end].decode("latin-1")
                self._buf = self._buf[end + 3:]
                self._sock.sendall(b"+")
                return payload
            if time.monotonic() > deadline:
                raise GdbStubError("the gdb stub did not answer in time")
            self._sock.settimeout(0.1)
            try:
                data = self._sock.recv(65536)
            except socket.timeout:
                if idle is not None:
                    idle()
                continue
            if not data:
                raise GdbStubError("the gdb stub closed the connection")
            self._buf += data

    def request(self, payload: str, timeout: float = 10) -> str:
        self._send(payload)
        return self._packet(timeout)

    # -- operations --

    def set_breakpoint(self, addr: int) -> None:
        if self.request(f"Z0,{addr:x},2") != "OK":
            raise GdbStubError(f"cannot set a breakpoint at {addr:#x}")

    def clear_breakpoint(self, addr: int) -> None:
        self.request(f"z0,{addr:x},2")

    def cont(self, timeout: float, idle: Callable[[], None] | None = None) -> str:
        """Let the guest run until it stops; returns the stop reply (`T05...` for a trap)."""
        self._send("c")
        return self._packet(timeout, idle)

    def drain(self, quiet: float = 0.5) -> list[str]:
        """Every packet that arrives until none has for `quiet` seconds (QEMU announces that
        a new connection stopped the guest with a stop reply of its own)."""
        out = []
        while True:
            try:
                out.append(self._packet(quiet))
            except GdbStubError:
                return out

    def set_watchpoint(self, addr: int, length: int) -> None:
        """Stop the guest when any hart writes to [addr, addr + length)."""
        if self.request(f"Z2,{addr:x},{length:x}") != "OK":
            raise GdbStubError(f"cannot set a write watchpoint at {addr:#x}")

    def clear_watchpoint(self, addr: int, length: int) -> None:
        self.request(f"z2,{addr:x},{length:x}")

    def resume(self, thread: int | None = None) -> None:
        """Let the guest run, without waiting for it to stop: every hart, or only `thread`
        (a hart's gdb thread id, its number + 1), the others staying stopped."""
        self._send("c" if thread is None else f"vCont;c:{thread:x}")

    def wait_stop(self, timeout: float, idle: Callable[[], None] | None = None) -> str:
        """The stop reply of a guest that was resumed: `T05thread:NN;watch:ADDR;` for a
        watchpoint, `T02...` after interrupt()."""
        return self._packet(timeout, idle)

    def interrupt(self, timeout: float = 10, idle: Callable[[], None] | None = None) -> str:
        """Stop every hart (a running guest, or one partly resumed); returns the stop reply."""
        self._sock.sendall(b"\x03")
        return self._packet(timeout, idle)

    def monitor(self, command: str, timeout: float = 10) -> str:
        """Run a QEMU monitor command and return its output."""
        self._send("qRcmd," + command.encode().hex())
        out = ""
        while True:
            packet = self._packet(timeout)
            if packet.startswith("O") and packet != "OK":
                out += bytes.fromhex(packet[1:]).decode(errors="replace")
                continue
            if packet.startswith("E"):
                raise GdbStubError(f"monitor command {command!r} failed: {packet}")
            return out
