#!/usr/bin/python3
"""A TCP proxy for the benchmark: it delays traffic, and counts the Redis commands clients send.

    delay_proxy.py --upstream HOST:PORT [--delay-ms 20] [--resp]

It listens on a free loopback port and prints one line, "PORT CONTROL_PORT", once it is ready.

- Delay: every chunk of bytes, in either direction, is forwarded --delay-ms after it arrived, in
  order. A request and its reply thus take 2 x delay longer: a client that waits for N round trips
  takes N x 2 x delay longer, which is how figure 2 tells the round trips a run really waits for.
  The TCP handshake itself is not delayed (the client's connect() completes against the proxy).
- Counting (--resp): the client-to-server stream is parsed as RESP, and each complete command is
  counted, per connection. Unlike INFO commandstats, this sees only what clients send, not the
  commands a Lua script runs inside Redis.

The control port answers one line per request: "stats" gives a JSON object {"connections": N,
"commands": N, "per_connection": [...]}, "reset" zeroes the counters, "delay MS" sets the delay
for the chunks that arrive from then on, on open connections too (figure 9 measures servers that
announce this proxy's port to clients, so it cannot swap in a second proxy with another delay).
"""
import argparse
import asyncio
import json
import sys
import time


class RespCommandCounter:
    """Counts complete RESP commands in a byte stream fed in arbitrary chunks.

    A command is an array of bulk strings ("*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nk\\r\\n") or an inline
    line ("PING\\r\\n"). Bulk bodies are skipped by length, never scanned, so a "*" inside a value
    cannot be mistaken for a new command.
    """

    def __init__(self):
        self.commands = 0
        self._line = bytearray()  # a header line still missing its "\r\n"
        self._arguments_left = 0  # bulk strings still expected in the current array
        self._body_left = 0  # bytes of the current bulk string (with its "\r\n") still expected

    def feed(self, data: bytes) -> None:
        position = 0
        while position < len(data):
            if self._body_left:
                taken = min(self._body_left, len(data) - position)
                self._body_left -= taken
                position += taken
                if not self._body_left:
                    self._argument_done()
                continue
            end = data.find(b"\n", position)
            if end < 0:
                self._line += data[position:]
                return
            self._line += data[position:end + 1]
            position = end + 1
            self._header(bytes(self._line).rstrip(b"\r\n"))
            self._line.clear()

    def _header(self, line: bytes) -> None:
        if self._arguments_left:
            # Inside an array: "$LENGTH" announces the next bulk string.
            if line.startswith(b"$"):
                self._body_left = int(line[1:]) + 2
                if self._body_left < 2:  # "$-1": a null bulk string, no body
                    self._body_left = 0
                    self._argument_done()
            return
        if line.startswith(b"*"):
            self._arguments_left = int(line[1:])
            if self._arguments_left <= 0:
                self._arguments_left = 0
                self.commands += 1
        elif line.strip():
            self.commands += 1  # an inline command

    def _argument_done(self) -> None:
        self._arguments_left -= 1
        if not self._arguments_left:
            self.commands += 1


class DelayedPipe:
    """Writes chunks to a transport the proxy's delay after they arrived, keeping their order (a
    chunk never overtakes an earlier one, even when the delay was just shortened)."""

    def __init__(self, proxy: "Proxy"):
        self._proxy = proxy
        self._queue: asyncio.Queue = asyncio.Queue()
        self._transport = None
        self._pump_task = None

    def attach(self, transport) -> None:
        self._transport = transport
        self._pump_task = asyncio.get_running_loop().create_task(self._pump())

    def send(self, data: bytes) -> None:
        self._queue.put_nowait((time.monotonic() + self._proxy.delay, data))

    def close_after_pending(self) -> None:
        self._queue.put_nowait((time.monotonic() + self._proxy.delay, None))

    async def _pump(self) -> None:
        while True:
            due, data = await self._queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                self._transport.close()
                return
            self._transport.write(data)


class Link:
    """One proxied connection: the client's side, the server's side, a delayed pipe each way."""

    def __init__(self, proxy: "Proxy"):
        self.proxy = proxy
        self.to_server = DelayedPipe(proxy)
        self.to_client = DelayedPipe(proxy)
        self.counter = RespCommandCounter()
        proxy.connections.append(self.counter)


class ServerSide(asyncio.Protocol):
    def __init__(self, link: Link):
        self.link = link

    def data_received(self, data: bytes) -> None:
        self.link.to_client.send(data)

    def connection_lost(self, exc) -> None:
        self.link.to_client.close_after_pending()


class ClientSide(asyncio.Protocol):
    """Accepted from a client; connects to the server at once and queues data until it is there."""

    def __init__(self, proxy: "Proxy"):
        self.link = Link(proxy)

    def connection_made(self, transport) -> None:
        self.link.to_client.attach(transport)
        asyncio.get_running_loop().create_task(self._connect_upstream(transport))

    async def _connect_upstream(self, client_transport) -> None:
        loop = asyncio.get_running_loop()
        try:
            server_transport, _ = await loop.create_connection(
                lambda: ServerSide(self.link), *self.link.proxy.upstream)
        except OSError:
            client_transport.close()
            return
        self.link.to_server.attach(server_transport)

    def data_received(self, data: bytes) -> None:
        if self.link.proxy.count_resp:
            self.link.counter.feed(data)
        self.link.to_server.send(data)

    def connection_lost(self, exc) -> None:
        self.link.to_server.close_after_pending()


class Proxy:
    def __init__(self, upstream_host: str, upstream_port: int, delay: float, count_resp: bool):
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay
        self.count_resp = count_resp
        self.connections: list[RespCommandCounter] = []

    def stats(self) -> dict:
        per_connection = [counter.commands for counter in self.connections]
        return {"connections": len(per_connection), "commands": sum(per_connection),
                "per_connection": per_connection}

    async def control(self, reader, writer) -> None:
        while line := await reader.readline():
            request = line.split()
            if request == [b"reset"]:
                self.connections = []
                writer.write(b"ok\n")
            elif len(request) == 2 and request[0] == b"delay":
                self.delay = float(request[1]) / 1000.0
                writer.write(b"ok\n")
            else:
                writer.write(json.dumps(self.stats()).encode() + b"\n")
            await writer.drain()
        writer.close()


async def serve(arguments) -> None:
    host, port = arguments.upstream.rsplit(":", 1)
    proxy = Proxy(host, int(port), arguments.delay_ms / 1000.0, arguments.resp)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ClientSide(proxy), "127.0.0.1", 0, backlog=1024)
    control = await asyncio.start_server(proxy.control, "127.0.0.1", 0)
    listen_port = server.sockets[0].getsockname()[1]
    control_port = control.sockets[0].getsockname()[1]
    print(f"{listen_port} {control_port}", flush=True)
    await asyncio.gather(server.serve_forever(), control.serve_forever())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the real server")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="delay each way")
    parser.add_argument("--resp", action="store_true", help="count RESP commands from clients")
    try:
        asyncio.run(serve(parser.parse_args()))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
