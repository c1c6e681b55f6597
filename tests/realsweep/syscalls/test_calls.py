"""Reading a call's arguments: socket addresses, the kernel's socket tables, descriptors, and which calls are points."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

from crashsweep.realsweep.syscalls import calls, seccomp
from crashsweep.realsweep.syscalls.calls import Effect


def test_sockaddr_reads_ipv4_ipv6_and_unix_addresses() -> None:
    ipv4 = struct.pack("<H", socket.AF_INET) + struct.pack(">H", 8765) + socket.inet_aton("127.0.0.1") + bytes(8)
    assert calls.sockaddr(ipv4) == "127.0.0.1:8765"
    mapped = b"\0" * 10 + b"\xff\xff" + socket.inet_aton("10.0.0.2")
    ipv6 = struct.pack("<H", socket.AF_INET6) + struct.pack(">H", 443) + bytes(4) + mapped + bytes(4)
    assert calls.sockaddr(ipv6) == "10.0.0.2:443"
    unix = struct.pack("<H", socket.AF_UNIX) + b"/run/x.sock\0"
    assert calls.sockaddr(unix) == "/run/x.sock"
    assert calls.sockaddr(b"") == ""


def test_the_remote_address_of_a_connected_socket_from_procfs() -> None:
    """socket_peer finds a socket by its inode in /proc/<pid>/net/tcp: this process's own connection."""
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        path, sort = calls.fd_file(os.getpid(), client.fileno())
        assert sort == "socket"
        assert calls.socket_peer(os.getpid(), path) == f"127.0.0.1:{server.getsockname()[1]}"


def test_fd_file_tells_files_folders_and_pipes_apart(tmp_path: Path) -> None:
    read, write = os.pipe()
    folder = os.open(tmp_path, os.O_RDONLY)
    with open(tmp_path / "f", "wb") as file:
        try:
            assert calls.fd_file(os.getpid(), file.fileno()) == (str((tmp_path / "f").resolve()), "file")
            assert calls.fd_file(os.getpid(), folder) == (str(tmp_path.resolve()), "dir")
            assert calls.fd_file(os.getpid(), write)[1] == "other"
            assert calls.fd_file(os.getpid(), 9999) == ("", "other")
        finally:
            for fd in (read, write, folder):
                os.close(fd)


def test_which_effects_are_points() -> None:
    """Writes to regular files and sockets, fsyncs of files and folders, the namespace calls; not opens."""
    assert Effect("write", "write", ("/f",), "file").point
    assert not Effect("write", "write", ("pipe:[1]",), "other").point
    assert Effect("write", "send", sort="socket").point
    assert Effect("fsync", "fsync", ("/d",), "dir").point
    assert not Effect("fsync", "fsync", ("",), "other").point
    assert not Effect("openat", "open", ("/f",), flags=calls.O_CREAT).point
    assert Effect("rename", "rename", ("/a", "/b")).point


def test_the_tables_name_the_same_calls_on_both_architectures() -> None:
    """aarch64 has only the *at calls; every point call it has is in x86_64's table too."""
    assert set(calls.NUMBERS[seccomp.AARCH64].values()) <= set(calls.NUMBERS[seccomp.X86_64].values())
    assert set(calls.NUMBERS[seccomp.X86_64].values()) >= calls.POINT_CALLS
