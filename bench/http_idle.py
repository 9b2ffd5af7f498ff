#!/usr/bin/env python3
"""Memory per idle keep-alive HTTP connection of a server (make bench).

Usage: bench/http_idle.py PID PORT N
Opens N connections to 127.0.0.1:PORT, makes one GET / on each (so the
server has set each up whole, keep-alive), then reads the VmRSS of process
PID; prints bench=http_idle rate=N bytes_per_conn=(after - before) / N.
The connections are held while the server's RSS is read, then closed.
"""
import socket
import sys
import time


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"http_idle.py: no VmRSS for pid {pid}")


def main():
    pid, port, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    req = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
    time.sleep(0.2)
    before = rss(pid)
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(req)
        socks.append(s)
    for s in socks:  # each answer's head and its 13-byte body
        got = b""
        while b"hello, world\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                raise SystemExit("http_idle.py: a connection was closed")
            got += chunk
    time.sleep(0.5)
    after = rss(pid)
    print(f"bench=http_idle rate={n} bytes_per_conn={(after - before) // n}")
    for s in socks:
        s.close()


main()
