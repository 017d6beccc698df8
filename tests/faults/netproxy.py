#!/usr/bin/python3
"""A TCP proxy on 127.0.0.1 that stands for a bad network between redlockrun and Redis.

    netproxy.py READY_FILE UPSTREAM_PORT MODE [ARG...]

    delay MEAN_MS JITTER_MS   every chunk, each way, reaches the other side MEAN ± JITTER ms late
                              (uniformly), in order: a chunk never overtakes the one before it
    reset SCRIPT WHEN [N]     the Nth time (default: first) a client calls the lock's SCRIPT
                              (acquire, renew or release, as EVALSHA or EVAL), reset its
                              connection: WHEN "before" the call reaches Redis (the request is
                              lost) or "after" Redis ran it (its reply is lost); every other byte
                              passes unchanged
    silent                    accept connections and never answer (UPSTREAM_PORT is not used)

Once listening it writes its port to READY_FILE, and a line per reset it made to READY_FILE.resets.
READY_FILE.stats holds what it did so far, as JSON: "connections" accepted, and for delay the
"chunks" it delayed each way ("requests", "replies") and their "delay_ms" in all.
The scripts are recognised by their SHA1, computed from src/lock/scripts as the build does.
"""
import asyncio
import hashlib
import json
import os
import random
import socket
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPTS = os.path.join(ROOT, "src", "lock", "scripts")


def script_sources():
    """Each lock script as Redis sees it: the prelude (common.lua, holders.lua, then waiters.lua) followed by the
    script, as CMakeLists.txt embeds it."""
    prelude = b""
    for part in ("common.lua", "holders.lua", "waiters.lua"):
        with open(os.path.join(SCRIPTS, part), "rb") as f:
            prelude += f.read()
    sources = {}
    for name in ("acquire", "renew", "release"):
        with open(os.path.join(SCRIPTS, f"{name}.lua"), "rb") as f:
            sources[name] = prelude + f.read()
    return sources


def script_shas():
    return {hashlib.sha1(source).hexdigest(): name for name, source in script_sources().items()}


async def load_scripts(port):
    """SCRIPT LOADs the lock scripts, so that the EVALSHA a reset follows did run: on a server
    without them it would only have been answered NOSCRIPT."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for source in script_sources().values():
        writer.write(b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$%d\r\n%s\r\n"
                     % (len(source), source))
        await writer.drain()
        reply = await reader.readline()
        if not reply.startswith(b"$"):
            raise SystemExit(f"netproxy: SCRIPT LOAD failed: {reply.decode(errors='replace')}")
        await reader.readline()
    writer.close()


class Commands:
    """Reads the client's RESP arrays of bulk strings as they stream past; yields the name of each
    lock script called."""

    def __init__(self, shas):
        self.shas, self.buffer = shas, b""

    def feed(self, data):
        self.buffer += data
        found = []
        while True:
            command, used = self.parse(self.buffer)
            if command is None:
                return found
            self.buffer = self.buffer[used:]
            verb = command[0].upper() if command else b""
            if verb == b"EVALSHA" and len(command) > 1:
                name = self.shas.get(command[1].decode(errors="replace").lower())
            elif verb == b"EVAL" and len(command) > 1:
                name = self.shas.get(hashlib.sha1(command[1]).hexdigest())
            else:
                name = None
            if name:
                found.append(name)

    @staticmethod
    def parse(buffer):
        """One command from the start of BUFFER: (arguments, bytes used), or (None, 0) if it is not
        all there yet."""
        if not buffer.startswith(b"*"):
            end = buffer.find(b"\r\n")  # an inline command: not one of ours
            return (None, 0) if end < 0 else ([buffer[:end]], end + 2)
        end = buffer.find(b"\r\n")
        if end < 0:
            return None, 0
        count, at, args = int(buffer[1:end]), end + 2, []
        for _ in range(count):
            end = buffer.find(b"\r\n", at)
            if end < 0:
                return None, 0
            size = int(buffer[at + 1:end])
            if len(buffer) < end + 2 + size + 2:
                return None, 0
            args.append(buffer[end + 2:end + 2 + size])
            at = end + 2 + size + 2
        return args, at


def reset(writer):
    """Closes with a reset (SO_LINGER 0), as a middlebox that drops the connection does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


class Proxy:
    def __init__(self, ready, upstream, mode, args):
        self.ready, self.upstream, self.mode, self.args = ready, upstream, mode, args
        self.shas = script_shas()
        self.calls_left = int(args[2]) if mode == "reset" and len(args) > 2 else 1
        self.frozen = set()  # connections whose replies are no longer passed on
        self.stats = {"connections": 0, "chunks": {"requests": 0, "replies": 0}, "delay_ms": 0.0}

    def count(self, connections=0, way=None, delay_ms=0.0):
        """Adds to the statistics and rewrites READY_FILE.stats (whole, so a reader never sees a
        half-written file)."""
        self.stats["connections"] += connections
        if way is not None:
            self.stats["chunks"][way] += 1
            self.stats["delay_ms"] += delay_ms
        with open(self.ready + ".stats.tmp", "w", encoding="utf-8") as out:
            json.dump(self.stats, out)
        os.replace(self.ready + ".stats.tmp", self.ready + ".stats")

    def note(self, line):
        with open(self.ready + ".resets", "a", encoding="utf-8") as out:
            out.write(line + "\n")

    async def serve(self, client_reader, client_writer):
        self.count(connections=1)
        if self.mode == "silent":
            await asyncio.sleep(3600)
            return
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1",
                                                                         self.upstream)
        except OSError:
            reset(client_writer)
            return
        pair = (client_writer, server_writer)
        if self.mode == "delay":
            mean, jitter = int(self.args[0]) / 1000, int(self.args[1]) / 1000
            await asyncio.gather(
                self.delayed(client_reader, server_writer, mean, jitter, pair, "requests"),
                self.delayed(server_reader, client_writer, mean, jitter, pair, "replies"))
        else:
            await asyncio.gather(self.watched(client_reader, server_writer, pair),
                                 self.replies(server_reader, client_writer, pair))

    async def replies(self, reader, writer, pair):
        try:
            while data := await reader.read(65536):
                if pair in self.frozen:
                    continue
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        self.close(pair)

    async def watched(self, reader, writer, pair):
        """Client to server, resetting both at the chosen call."""
        script, when = self.args[:2]
        commands = Commands(self.shas)
        try:
            while data := await reader.read(65536):
                if self.calls_left > 0:
                    self.calls_left -= commands.feed(data).count(script)
                    hit = self.calls_left <= 0
                else:
                    hit = False
                if hit:
                    self.calls_left = -1 << 30  # once per proxy
                    self.frozen.add(pair)
                    if when == "after":
                        writer.write(data)
                        await writer.drain()
                        # Long enough for Redis to have run the script; its reply is never read.
                        await asyncio.sleep(0.3)
                    self.note(f"{script} {when}")
                    self.frozen.discard(pair)
                    reset(pair[0])
                    reset(pair[1])
                    return
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        self.close(pair)

    async def delayed(self, reader, writer, mean, jitter, pair, way):
        """Forwards each chunk MEAN ± JITTER late, never before the chunk ahead of it; counts it
        as WAY ("requests" or "replies") with the delay it had."""
        queue = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def send():
            while (item := await queue.get()) is not None:
                received, due, data = item
                await asyncio.sleep(max(0.0, due - loop.time()))
                try:
                    writer.write(data)
                    await writer.drain()
                except OSError:
                    break
                self.count(way=way, delay_ms=(loop.time() - received) * 1000)
            self.close(pair)

        sender = asyncio.create_task(send())
        last = 0.0
        try:
            while data := await reader.read(65536):
                last = max(last, loop.time() + random.uniform(mean - jitter, mean + jitter))
                queue.put_nowait((loop.time(), last, data))
        except OSError:
            pass
        queue.put_nowait(None)
        await sender

    @staticmethod
    def close(pair):
        for writer in pair:
            if not writer.is_closing():
                writer.close()

    async def main(self):
        if self.mode == "reset":
            await load_scripts(self.upstream)
        server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        with open(self.ready + ".tmp", "w", encoding="utf-8") as out:
            out.write(f"{port}\n")
        os.rename(self.ready + ".tmp", self.ready)
        async with server:
            await server.serve_forever()


if __name__ == "__main__":
    ready_file, upstream_port, proxy_mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    asyncio.run(Proxy(ready_file, upstream_port, proxy_mode, sys.argv[4:]).main())
