"""The machine's limit for process_rate.py: forks from a lean interpreter, one child at a time.

    python -S benchmarks/fork_limit.py COUNT [HOST PORT]

Run by process_rate.py (which imports `cpu` from it, nothing more): it imports only os, sys, socket, resource and time,
so the process it forks from is as small as a Python process can be (about 3 MB of
anonymous memory). That matters: fork copies the forking process's page tables and exit
tears the child's down, so the cost of a fork grows with the forker's memory. Forked from
a process that has imported the sweep (about 26 MB), a fork + exit costs several times the
CPU it costs here, and a limit measured there would flatter anything set beside it.

It prints "ready" once started, waits for a line on stdin (so that several forkers start
their clocks together), then forks COUNT children one after the other: each exits at once,
or with HOST and PORT first sends `GET /health` to the tracker service there over a new
connection and reads the answer to its end (the service closes a connection it was not
asked to keep). Its last line is its own CPU seconds over the loop, its children's
included, and the loop's wall seconds.
"""

import os
import resource
import socket
import sys
import time

REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def ask(host: str, port: int) -> bool:
    """One request over a new connection; whether the answer was a 200."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as conn:
        conn.connect((host, port))  # a numeric address: no name lookup, no codec import
        conn.sendall(REQUEST)
        answer = b""
        while True:
            chunk = conn.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.startswith(b"HTTP/1.1 200 ")


def cpu() -> tuple[float, float]:
    """CPU seconds (user and system) of this process, and of the children it has reaped so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    """Fork COUNT children on the go line; print the loop's CPU and wall seconds."""
    count = int(argv[0])
    target = (argv[1], int(argv[2])) if len(argv) > 2 else None
    print("ready", flush=True)
    sys.stdin.readline()
    started, spent = time.monotonic(), sum(cpu())
    for _ in range(count):
        pid = os.fork()
        if pid == 0:  # the child: nothing of the parent's cleanup runs, whatever happens
            try:
                answered = target is None or ask(*target)
            except OSError:
                answered = False
            os._exit(0 if answered else 1)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            print("a child failed", file=sys.stderr)
            return 1
    print(f"{sum(cpu()) - spent} {time.monotonic() - started}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
