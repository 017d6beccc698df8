#!/usr/bin/python3
"""A byte-level proxy with an idle timeout, for tests: it stands for a load balancer or a firewall
that forgets a connection left quiet for a while and answers the next packet with a reset, so
that the client learns of the loss only once it has sent a request.

    idle_proxy.py LISTEN UPSTREAM IDLE MODE READY_FILE

LISTEN and UPSTREAM are a TCP port on 127.0.0.1 (0 for LISTEN: pick a free one) or the path of a
unix socket. A client connection that has been quiet (no bytes either way) for IDLE seconds or more
when its next bytes arrive is reset, according to MODE:

    drop      before its bytes reach the server (the request is lost on the way there)
    swallow   after the server got them and answered (the reply is lost on the way back)

Every other byte is passed on unchanged, so TLS works through it. Once listening, it writes its
address (the port, or the path) to READY_FILE, and a line per connection it resets to
READY_FILE.resets.
"""
import os
import selectors
import socket
import struct
import sys
import time


def make_listener(address):
    if address.isdigit():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", int(address)))
        name = str(sock.getsockname()[1])
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(address)
        name = address
    sock.listen(16)
    sock.setblocking(False)
    return sock, name


def connect_upstream(address):
    if address.isdigit():
        return socket.create_connection(("127.0.0.1", int(address)))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(address)
    return sock


def reset(sock):
    """Closes with a reset rather than an orderly end of stream, as a middlebox that forgot the
    connection does (a unix socket has no reset: there the client sees the end of the stream)."""
    if sock.family != socket.AF_UNIX:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Pair:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.last_activity = time.monotonic()
        self.closing = False  # swallow: waiting for the server's answer, to drop it


def main():
    listen, upstream, idle, mode, ready_file = sys.argv[1:6]
    idle = float(idle)
    if mode not in ("drop", "swallow"):
        sys.exit(f"unknown mode {mode}")
    listener, name = make_listener(listen)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    with open(ready_file + ".tmp", "w") as ready:
        ready.write(name + "\n")
    os.rename(ready_file + ".tmp", ready_file)

    def log_reset(what):
        with open(ready_file + ".resets", "a") as log:
            log.write(what + "\n")

    def close_pair(pair):
        for sock in (pair.client, pair.server):
            try:
                selector.unregister(sock)
            except (KeyError, ValueError):
                pass
        pair.server.close()

    while True:
        for key, _ in selector.select():
            if key.data is None:
                client, _ = listener.accept()
                server = connect_upstream(upstream)
                pair = Pair(client, server)
                selector.register(client, selectors.EVENT_READ, (pair, "client"))
                selector.register(server, selectors.EVENT_READ, (pair, "server"))
                continue
            pair, side = key.data
            sock = pair.client if side == "client" else pair.server
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                close_pair(pair)
                pair.client.close()
                continue
            if side == "client":
                quiet = time.monotonic() - pair.last_activity
                if quiet >= idle and not pair.closing:
                    if mode == "drop":
                        log_reset("drop")
                        close_pair(pair)
                        reset(pair.client)
                        continue
                    pair.closing = True
                pair.server.sendall(data)
            elif pair.closing:
                log_reset("swallow")
                close_pair(pair)
                reset(pair.client)
                continue
            else:
                pair.client.sendall(data)
            pair.last_activity = time.monotonic()


if __name__ == "__main__":
    main()
