"""Just enough of the protocol-buffers wire format to write a message, by hand.

A protobuf message is a sequence of fields. Each field starts with a key, the varint
(field number << 3) | wire type, and the wire type says how to find the field's end:

    wire type 0, varint            an integer in 7-bit groups, least significant first;
                                   the top bit of each byte says "more bytes follow"
    wire type 2, length-delimited  a varint byte count, then that many bytes: strings,
                                   embedded messages, and packed lists of numbers

That is all pprof's profile.proto needs. Negative int64 values are written as their 64-bit
two's complement, which always takes ten bytes; a repeated number field is "packed", all
its values in one length-delimited field, which is what proto3 writes by default. Fields
equal to zero or empty are left out, as proto3 does, since a reader takes a missing field
to be zero.
"""

from __future__ import annotations

from typing import Iterable

VARINT = 0
LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    """The varint encoding of an int64 or uint64 value."""
    if value < 0:
        value += 1 << 64  # two's complement, as int64 fields are encoded
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{value} does not fit in 64 bits")
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


class Message:
    """A message being written: add fields in order, then take encode()."""

    def __init__(self) -> None:
        self._out = bytearray()

    def uint(self, field: int, value: int) -> "Message":
        """An int64, uint64 or bool field (bools are 0 or 1)."""
        if value:
            self._out += key(field, VARINT) + varint(int(value))
        return self

    def bytes_field(self, field: int, data: bytes, *, keep_empty: bool = False) -> "Message":
        """A length-delimited field: raw bytes, a string, or an embedded message.

        keep_empty writes the field even when empty: an element of a repeated field must be
        written, since leaving it out would shift every element after it.
        """
        if data or keep_empty:
            self._out += key(field, LENGTH_DELIMITED) + varint(len(data)) + data
        return self

    def string(self, field: int, text: str, *, keep_empty: bool = False) -> "Message":
        return self.bytes_field(field, text.encode("utf-8"), keep_empty=keep_empty)

    def message(self, field: int, sub: "Message") -> "Message":
        """An embedded message; written even when empty (it is an element or a presence)."""
        return self.bytes_field(field, sub.encode(), keep_empty=True)

    def packed(self, field: int, values: Iterable[int]) -> "Message":
        """A repeated number field, packed into one length-delimited field."""
        body = b"".join(varint(v) for v in values)
        return self.bytes_field(field, body)

    def encode(self) -> bytes:
        return bytes(self._out)
