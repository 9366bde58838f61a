"""Where the client's CPU goes per judgment at 64 in flight: rubriclib vs a bare openai SDK loop.

Not part of `make bench` (its output is long): run `python benchmarks/cpu_profile.py`. Against a
judge in another process that answers at once, after a warm-up:

1. Layers, unprofiled: client CPU per judgment for the same request body sent by a minimal
   asyncio HTTP/1.1 client (rubriclib's protocol work and the wire, nothing else), by aiohttp
   (what rubriclib uses), by httpx2.AsyncClient, by the openai SDK's raw `post`, by rubriclib's
   `grade_many`, and by the SDK's `chat.completions.create`.
2. cProfile of rubriclib and of the bare SDK loop: CPU by package, the functions with the most
   own time, and the stages worth watching (cumulative).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
import httpx2
import openai
from bench_server import served
from throughput import bare_sdk, gathered, items, rubriclib_grade_many

from rubriclib import Item, load_rubric, render
from rubriclib.judging.asking.reply import read_reply
from rubriclib.judging.asking.request import request_body
from rubriclib.rubrics.rubric import Rubric

STAGES = (
    "render.py:render",
    "request.py:request_body",
    "reply.py:read_reply",
    "judge.py:_parse_json",
    "result.py:make_result",
    "result.py:judge_details",
    "pacer.py:acquire",
    "pacer.py:release",
    "transport.py:post",
    "client.py:_request",
    "item.py:as_item",
    "_base_client.py:post",
    "_base_client.py:request",
    "_base_client.py:_build_request",
    "_base_client.py:_process_response",
    "_models.py:construct",
    "_models.py:validate_type",
    "_transform.py:transform",
    "_transform.py:async_transform",
    "__init__.py:dumps",
    "__init__.py:loads",
)
"""file:function names whose cumulative time is worth seeing on either side."""


Layer = Callable[[str, Sequence[Item], int], int]


def body_of(rubric: Rubric, item: Item) -> dict[str, Any]:
    """The request body rubriclib sends for `item` (first turn, `required` mode)."""
    messages = render(rubric, item.output, context=item.context)
    return request_body(rubric, messages, "required", "m", {"temperature": 0.0, "max_tokens": 1024})


def layer(post: Callable[[str], Any]) -> Callable[..., Any]:
    """A layer from `post(url) -> (send(bytes) -> awaitable reply bytes, close)`: each judgment
    renders, builds and encodes the body, sends it, decodes the reply and reads the verdict."""

    def run(url: str, batch: Sequence[Item], concurrency: int) -> int:
        async def main() -> int:
            rubric = load_rubric("groundedness")
            send, close = await post(url)

            async def judge_one(item: Item) -> bool:
                reply = json.loads(await send(json.dumps(body_of(rubric, item)).encode()))
                return not isinstance(read_reply(reply, rubric, "required"), str)

            try:
                return await gathered(batch, concurrency, judge_one)
            finally:
                await close()

        return asyncio.run(main())

    return run


async def minimal_client(url: str) -> tuple[Callable[[bytes], Awaitable[bytes]], Any]:
    """A keep-alive HTTP/1.1 client on asyncio streams: one connection per request in flight,
    one write per request, Content-Length replies only. A reference, not a product."""
    address = urllib.parse.urlsplit(url)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    head = (
        f"POST {address.path}/chat/completions HTTP/1.1\r\nHost: {address.netloc}\r\n"
        "Content-Type: application/json\r\nAuthorization: Bearer bench\r\n"
    ).encode()

    async def send(data: bytes) -> bytes:
        if idle:
            reader, writer = idle.pop()
        else:
            reader, writer = await asyncio.open_connection(address.hostname, address.port)
        writer.write(head + b"Content-Length: %d\r\n\r\n" % len(data) + data)
        headers = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in headers.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        reply = await reader.readexactly(length)
        idle.append((reader, writer))
        return reply

    async def close() -> None:
        for _, writer in idle:
            writer.close()

    return send, close


async def httpx_client(url: str) -> tuple[Callable[[bytes], Awaitable[bytes]], Any]:
    client = httpx2.AsyncClient(base_url=url, headers={"Authorization": "Bearer bench"})

    async def send(data: bytes) -> bytes:
        headers = {"Content-Type": "application/json"}
        return (await client.post("/chat/completions", content=data, headers=headers)).content

    return send, client.aclose


async def aiohttp_client(url: str) -> tuple[Callable[[bytes], Awaitable[bytes]], Any]:
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    headers = {"Content-Type": "application/json", "Authorization": "Bearer bench"}

    async def send(data: bytes) -> bytes:
        async with session.post(f"{url}/chat/completions", data=data, headers=headers) as reply:
            return await reply.read()

    return send, session.close


async def sdk_raw_post(url: str) -> tuple[Callable[[bytes], Awaitable[bytes]], Any]:
    client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)

    async def send(data: bytes) -> bytes:
        body = json.loads(data)  # the SDK takes the body as a dict and encodes it itself
        reply: bytes = await client.post("/chat/completions", body=body, cast_to=bytes)
        return reply

    return send, client.close


LAYERS: dict[str, Layer] = {
    "minimal asyncio HTTP/1.1 client": layer(minimal_client),
    "aiohttp.ClientSession.post": layer(aiohttp_client),
    "httpx2.AsyncClient.post": layer(httpx_client),
    "openai SDK raw post": layer(sdk_raw_post),
    "rubriclib grade_many": rubriclib_grade_many,
    "openai SDK chat.completions.create": bare_sdk,
}


def layers(url: str, batch: Sequence[Item], concurrencies: Sequence[int]) -> None:
    print(f"== Client CPU per judgment by layer ({len(batch)} judgments, unprofiled, ms)")
    print(f"  {'':40}" + "".join(f"{f'{c} in flight':>14}" for c in concurrencies))
    for name, run in LAYERS.items():
        run(url, batch[:256], max(concurrencies))  # warm up
        cells = []
        for concurrency in concurrencies:
            started = time.process_time()
            valid = run(url, batch, concurrency)
            assert valid == len(batch), f"{name}: {valid} verdicts of {len(batch)}"
            cells.append((time.process_time() - started) * 1000 / len(batch))
        print(f"  {name:40}" + "".join(f"{cell:14.3f}" for cell in cells))


def package_of(filename: str) -> str:
    """A short label for where a function lives: the package under site-packages, or stdlib."""
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0].removesuffix(".py")
    if "/rubriclib/" in filename:
        return "rubriclib"
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"
    return "stdlib:" + filename.rsplit("/", 1)[-1].removesuffix(".py")


def report(name: str, profile: cProfile.Profile, count: int, wall: float, top: int) -> None:
    stats = pstats.Stats(profile)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in entries.values())
    print(f"\n== {name}: {count} judgments, {wall:.2f} s wall under the profiler")
    print(f"  profiled CPU: {total * 1000 / count:.3f} ms/judgment")
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _, _), entry in entries.items():
        by_package[package_of(filename)] += entry[2]
    print("  own time by package (ms/judgment):")
    for package, seconds in sorted(by_package.items(), key=lambda pair: -pair[1])[:top]:
        print(f"    {seconds * 1000 / count:7.3f}  {package}")
    print("  functions with the most own time (ms/judgment, calls/judgment):")
    ranked = sorted(entries.items(), key=lambda pair: -pair[1][2])[:top]
    for (filename, line, function), entry in ranked:
        where = f"{filename.rsplit('/', 1)[-1]}:{line}({function})"
        print(f"    {entry[2] * 1000 / count:7.3f}  {entry[1] / count:6.1f}  {where}")
    print("  stages (cumulative ms/judgment, calls/judgment):")
    for (filename, _, function), entry in sorted(entries.items(), key=lambda pair: -pair[1][3]):
        label = f"{filename.rsplit('/', 1)[-1]}:{function}"
        if label in STAGES:
            print(f"    {entry[3] * 1000 / count:7.3f}  {entry[1] / count:6.1f}  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--top", type=int, default=15, help="rows per table")
    options = parser.parse_args()
    batch: Sequence[Item] = items(options.judgments)
    with served(0.0) as server:
        layers(server.url, batch, (16, options.concurrency))
        for name, run in (("rubriclib grade_many", rubriclib_grade_many), ("bare SDK", bare_sdk)):
            run(server.url, batch[:256], options.concurrency)  # warm up unprofiled
            profile = cProfile.Profile()
            started = time.perf_counter()
            profile.enable()
            run(server.url, batch, options.concurrency)
            profile.disable()
            wall = time.perf_counter() - started
            report(name, profile, options.judgments, wall, options.top)


if __name__ == "__main__":
    main()
