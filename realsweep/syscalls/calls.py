"""The system calls the tracer looks at, and what one call does, read off its arguments at its entry.

An `Effect` is one call decoded: its name, what it does (`op`), the files it touches (absolute
paths, as the calling thread sees them: a relative path joined to its cwd or its dirfd's
folder) or the socket's peer, and where its data lies in the caller's memory. Two sets of calls:

- the calls that make an effect visible, each a crash point (spec/POINTS.md section 3): write,
  pwrite64, writev, pwritev, pwritev2 (to a regular file; on a socket: a send), fsync,
  fdatasync, rename, renameat, renameat2, unlink, unlinkat, rmdir, mkdir, mkdirat, connect,
  sendto, sendmsg, sendmmsg;
- the calls the power-cut model needs besides (never points): open, openat, openat2 and creat
  with O_CREAT or O_TRUNC (a file created or emptied), truncate and ftruncate.

Numbers per architecture (x86_64, aarch64's generic table); a call of another architecture (a
32-bit program on x86_64) is not looked at.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
from dataclasses import dataclass

from crashsweep.realsweep.syscalls.ptrace import read_memory, read_string
from crashsweep.realsweep.syscalls.seccomp import AARCH64, X86_64, Watch

NUMBERS = {
    X86_64: {
        1: "write", 18: "pwrite64", 20: "writev", 296: "pwritev", 328: "pwritev2", 74: "fsync", 75: "fdatasync",
        82: "rename", 264: "renameat", 316: "renameat2", 87: "unlink", 263: "unlinkat", 84: "rmdir", 83: "mkdir",
        258: "mkdirat", 42: "connect", 44: "sendto", 46: "sendmsg", 307: "sendmmsg", 2: "open", 257: "openat",
        437: "openat2", 85: "creat", 76: "truncate", 77: "ftruncate",
    },
    AARCH64: {
        64: "write", 68: "pwrite64", 66: "writev", 70: "pwritev", 287: "pwritev2", 82: "fsync", 83: "fdatasync",
        38: "renameat", 276: "renameat2", 35: "unlinkat", 34: "mkdirat", 203: "connect", 206: "sendto",
        211: "sendmsg", 269: "sendmmsg", 56: "openat", 437: "openat2", 45: "truncate", 46: "ftruncate",
    },
}  # fmt: skip
POINT_CALLS = frozenset({
    "write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync", "fdatasync", "rename", "renameat", "renameat2",
    "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat", "connect", "sendto", "sendmsg", "sendmmsg",
})  # fmt: skip
"""The calls that are crash points (the others are read for the power-cut model only)."""
AT_FDCWD = -100
O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, O_DSYNC = 0o1, 0o2, 0o100, 0o1000, 0o2000, 0o10000
AT_REMOVEDIR, RENAME_EXCHANGE = 0x200, 0x2
_FLAGS_ARGUMENT = {"open": 1, "openat": 2}
"""The argument holding an open's flags, where it is a register (openat2's lie in memory: always looked at)."""
WATCH = Watch(
    {arch: frozenset(table) for arch, table in NUMBERS.items()},
    {
        arch: {nr: (_FLAGS_ARGUMENT[name], O_CREAT | O_TRUNC) for nr, name in table.items() if name in _FLAGS_ARGUMENT}
        for arch, table in NUMBERS.items()
    },
)
"""The calls `decode` may find an effect in, for the tracer's filter: an open only with O_CREAT or O_TRUNC."""


@dataclass(frozen=True)
class Effect:
    """One system call decoded at its entry.

    op: write, send, connect, fsync, rename, exchange, unlink, rmdir, mkdir, open, truncate.
    paths: the files it touches, absolute (rename: old, new); "" where the descriptor is no
    file. sort: of the descriptor's file ("file", "dir", "socket", "other"; "" for a path call).
    """

    call: str
    op: str
    paths: tuple[str, ...] = ()
    sort: str = ""
    peer: str = ""
    fd: int = -1
    offset: int = -1
    """write: where the data goes in the file (the descriptor's position, or the end under O_APPEND)."""
    chunks: tuple[tuple[int, int], ...] = ()
    """write: (address, length) of the data in the caller's memory, in order."""
    flags: int = 0
    """open: its flags; truncate: the new length; write: O_DSYNC when its descriptor was opened
    O_DSYNC or O_SYNC (the call returns once its data is durable)."""

    @property
    def point(self) -> bool:
        """Is it a crash point's call? (a write to a pipe or a tty is no effect: not a point)."""
        if self.call not in POINT_CALLS:
            return False
        if self.op == "write":
            return self.sort == "file"
        if self.op == "send":
            return self.sort == "socket"
        return self.op != "fsync" or self.sort in ("file", "dir")


def decode(pid: int, arch: int, nr: int, args: tuple[int, ...]) -> Effect | None:
    """The effect of call `nr` with `args` in thread `pid`; None for a call not looked at."""
    call = NUMBERS.get(arch, {}).get(nr)
    if call is None:
        return None
    a = args
    if call in ("write", "pwrite64", "writev", "pwritev", "pwritev2"):
        return _write(pid, call, a)
    if call in ("sendto", "sendmsg", "sendmmsg"):
        path, sort = fd_file(pid, _int(a[0]))
        peer = sockaddr(read_memory(pid, a[4], a[5])) if call == "sendto" and a[4] else ""
        return Effect(call, "send", sort=sort, peer=peer or socket_peer(pid, path), fd=_int(a[0]))
    if call == "connect":
        return Effect(call, "connect", sort="socket", peer=sockaddr(read_memory(pid, a[1], a[2])), fd=_int(a[0]))
    if call in ("fsync", "fdatasync", "ftruncate"):
        path, sort = fd_file(pid, _int(a[0]))
        op = "truncate" if call == "ftruncate" else "fsync"
        return Effect(call, op, (path,), sort, fd=_int(a[0]), flags=a[1] if op == "truncate" else 0)
    return _path_call(pid, call, a)


def _path_call(pid: int, call: str, a: tuple[int, ...]) -> Effect | None:
    """A call that names its files by path."""
    if call == "rename":
        return Effect(call, "rename", (path_at(pid, AT_FDCWD, a[0]), path_at(pid, AT_FDCWD, a[1])))
    if call in ("renameat", "renameat2"):
        op = "exchange" if call == "renameat2" and a[4] & RENAME_EXCHANGE else "rename"
        return Effect(call, op, (path_at(pid, _int(a[0]), a[1]), path_at(pid, _int(a[2]), a[3])))
    if call in ("unlink", "rmdir", "mkdir", "creat", "open", "truncate"):
        op = {"creat": "open", "truncate": "truncate"}.get(call, call)
        flags = {"creat": O_CREAT | O_WRONLY | O_TRUNC, "open": a[1], "truncate": a[1]}.get(call, 0)
        return _opened(Effect(call, op, (path_at(pid, AT_FDCWD, a[0]),), flags=flags))
    if call == "unlinkat":
        return Effect(call, "rmdir" if a[2] & AT_REMOVEDIR else "unlink", (path_at(pid, _int(a[0]), a[1]),))
    if call == "mkdirat":
        return Effect(call, "mkdir", (path_at(pid, _int(a[0]), a[1]),))
    if call in ("openat", "openat2"):
        flags = a[2] if call == "openat" else int.from_bytes(read_memory(pid, a[2], 8) or b"\0", "little")
        return _opened(Effect(call, "open", (path_at(pid, _int(a[0]), a[1]),), flags=flags))
    return None


def _opened(effect: Effect) -> Effect | None:
    """An open is looked at only when it may create or empty its file."""
    if effect.op == "open" and not effect.flags & (O_CREAT | O_TRUNC):
        return None
    return effect


def _write(pid: int, call: str, a: tuple[int, ...]) -> Effect:
    """A write: to a regular file (where, and the data's place in memory) or to a socket (a send)."""
    fd = _int(a[0])
    path, sort = fd_file(pid, fd)
    if sort == "socket":
        return Effect(call, "send", sort=sort, peer=socket_peer(pid, path), fd=fd)
    if call in ("write", "pwrite64"):
        chunks: tuple[tuple[int, int], ...] = ((a[1], a[2]),)
    else:
        count = min(a[2], 1024)
        raw = read_memory(pid, a[1], 16 * count)
        chunks = tuple(struct.iter_unpack("QQ", raw[: len(raw) // 16 * 16]))
    explicit = call == "pwrite64" or (call in ("pwritev", "pwritev2") and _long(a[3]) != -1)
    opened, position = _descriptor(pid, fd) if sort == "file" else (0, -1)
    offset = a[3] if explicit else position
    return Effect(call, "write", (path,), sort, fd=fd, offset=offset, chunks=chunks, flags=opened & O_DSYNC)


def _int(value: int) -> int:
    """A descriptor argument (a C int: the register's low 32 bits, signed): 3, AT_FDCWD."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _long(value: int) -> int:
    """A 64-bit register as the signed long it holds (an offset of -1)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def fd_file(pid: int, fd: int) -> tuple[str, str]:
    """(what descriptor `fd` of `pid` refers to, its sort): a path and "file"/"dir", "socket:[inode]" and "socket"."""
    link = f"/proc/{pid}/fd/{fd}"
    try:
        target = os.readlink(link)
        mode = os.stat(link).st_mode
    except OSError:
        return "", "other"
    if stat.S_ISSOCK(mode):
        return target, "socket"
    if not target.startswith("/") or target.endswith(" (deleted)"):
        return target, "other"
    return target, "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"


def _descriptor(pid: int, fd: int) -> tuple[int, int]:
    """Descriptor `fd`'s flags, and where a write on it lands: its position, or the file's end under O_APPEND.

    One read of /proc/PID/fdinfo/FD a write; (0, -1) when it cannot be read.
    """
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as info:
            fields = dict(line.split(":", 1) for line in info if ":" in line)
        flags = int(fields["flags"].strip(), 8)
        if flags & O_APPEND:
            return flags, os.stat(f"/proc/{pid}/fd/{fd}").st_size
        return flags, int(fields["pos"].strip())
    except (OSError, KeyError, ValueError):
        return 0, -1


def path_at(pid: int, dirfd: int, address: int) -> str:
    """The absolute path a path argument names, as thread `pid` sees it (not resolving symbolic links)."""
    path = read_string(pid, address)
    if not path.startswith("/"):
        try:
            base = os.readlink(f"/proc/{pid}/cwd" if dirfd == AT_FDCWD else f"/proc/{pid}/fd/{dirfd}")
        except OSError:
            base = "/"
        path = os.path.join(base, path)
    return os.path.normpath(path)


def sockaddr(data: bytes) -> str:
    """A socket address as text: "host:port" (IPv6 "[host]:port"), a unix socket's path, or "" when unknown."""
    if len(data) < 2:
        return ""
    family = int.from_bytes(data[:2], "little")
    if family == socket.AF_INET and len(data) >= 8:
        return f"{socket.inet_ntop(socket.AF_INET, data[4:8])}:{int.from_bytes(data[2:4], 'big')}"
    if family == socket.AF_INET6 and len(data) >= 24:
        return _ipv6(data[8:24], int.from_bytes(data[2:4], "big"))
    if family == socket.AF_UNIX:
        return os.fsdecode(data[2:].split(b"\0", 1)[0]) or "unix"
    return ""


def _ipv6(address: bytes, port: int) -> str:
    if address[:12] == b"\0" * 10 + b"\xff\xff":  # an IPv4 address mapped into IPv6
        return f"{socket.inet_ntop(socket.AF_INET, address[12:])}:{port}"
    return f"[{socket.inet_ntop(socket.AF_INET6, address)}]:{port}"


def socket_peer(pid: int, link: str) -> str:
    """The remote "host:port" of the TCP socket `link` ("socket:[inode]") of `pid`; "tcp"/"unix" when unknown."""
    inode = link.removeprefix("socket:[").rstrip("]")
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}", encoding="ascii") as rows:
                for row in rows:
                    cells = row.split()
                    if len(cells) > 9 and cells[9] == inode:
                        return _remote(cells[2])
        except OSError:
            continue
    return "unix" if _in_unix_table(pid, inode) else "tcp"


def _remote(cell: str) -> str:
    """/proc/net/tcp's rem_address ("0100007F:1F90", the address in the kernel's byte order) as host:port."""
    address, _, port = cell.partition(":")
    raw = bytes.fromhex(address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word in host order
    if len(words) == 4:
        return f"{socket.inet_ntop(socket.AF_INET, words)}:{int(port, 16)}"
    return _ipv6(words, int(port, 16))


def _in_unix_table(pid: int, inode: str) -> bool:
    try:
        with open(f"/proc/{pid}/net/unix", encoding="utf-8", errors="replace") as rows:
            return any(len(cells) > 6 and cells[6] == inode for cells in (row.split() for row in rows))
    except OSError:
        return False
