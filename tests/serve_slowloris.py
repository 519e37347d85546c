#!/usr/bin/env python3
"""Slowloris against retrystorm serve, for serve_test.sh.

From 127.0.0.2 (all of 127/8 is this machine), opens 64 connections to
127.0.0.1:PORT, each asking a check of nothing (POST /api/check, answered
at once: the connection is kept alive; libmicrohttpd 0.9.75 closes it
after a GET) and then sending the next request's headers a byte every
2 s, for at most 14 s. Prints "ready" once they are open, then one line:
  at-once A kept K last-close T fewest-bytes B open O
A: closed by the server within 1 s (over its per-address limit); K: the
others; T: the latest time (s after opening) one of those was closed; B:
the fewest bytes one of those had trickled by then; O: still open at 14 s.
Usage: serve_slowloris.py PORT
"""
import select
import socket
import sys
import time

port = int(sys.argv[1])
conns = []
for _ in range(64):
    s = socket.socket()
    s.bind(('127.0.0.2', 0))
    s.connect(('127.0.0.1', port))
    s.sendall(b'POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n'
              b'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\n\r\ntext='
              b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    conns.append({'s': s, 'at': time.monotonic(), 'closed': None, 'sent': 0})
print('ready', flush=True)
start = time.monotonic()
next_byte = start + 2


def close(c):
    c['closed'] = time.monotonic() - c['at']
    c['s'].close()


while time.monotonic() - start < 14:
    live = [c for c in conns if c['closed'] is None]
    if not live:
        break
    wait = min(max(0, next_byte - time.monotonic()), 14 - (time.monotonic() - start))
    readable, _, _ = select.select([c['s'] for c in live], [], [], max(0, wait))
    for c in live:
        if c['s'] in readable:
            try:
                data = c['s'].recv(4096)
            except OSError:
                data = b''
            if not data:  # the server closed it (data: the check's answer)
                close(c)
    if time.monotonic() >= next_byte:
        next_byte += 2
        for c in live:
            if c['closed'] is None:
                try:
                    c['s'].sendall(b'a')
                    c['sent'] += 1
                except OSError:
                    close(c)
at_once = [c for c in conns if c['closed'] is not None and c['closed'] < 1]
kept = [c for c in conns if c not in at_once]
closed = [c for c in kept if c['closed'] is not None]
print('at-once %d kept %d last-close %.2f fewest-bytes %d open %d' % (
    len(at_once), len(kept), max([c['closed'] for c in closed] or [0]),
    min([c['sent'] for c in closed] or [0]), len(kept) - len(closed)), flush=True)
