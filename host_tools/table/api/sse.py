"""`GET /events` as Server-Sent Events: the journaled events after the client's last one, then the
live ones, never one twice, none lost."""

from __future__ import annotations

import asyncio
import json

from starlette.concurrency import run_in_threadpool


async def stream(host, kinds, after):
    """SSE: journaled events after `after` (if given), then live ones; never one twice, none lost."""
    loop = asyncio.get_running_loop()
    q = host.events.subscribe(kinds=kinds, loop=loop)      # first: nothing published from now is missed
    try:
        yield b": cylindre live events\n\n"
        last = after
        if after is not None:
            oldest, _ = await run_in_threadpool(host.events.bounds)
            if oldest and after < oldest - 1:
                yield _sse(None, "resync", json.dumps({"oldest": oldest, "asked": after}))
            while True:
                rows = await run_in_threadpool(host.events.since, last, kinds, 1000)
                for eid, kind, data in rows:
                    yield _sse(eid, kind, data)
                    last = eid
                if len(rows) < 1000:
                    break
        while not host.stopping():
            try:
                msg = await asyncio.wait_for(q.get(), 15)
            except asyncio.TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if msg is None:
                break
            eid, kind, data = msg
            if eid is not None and last is not None and eid <= last:
                continue                                     # already sent from the journal
            yield _sse(eid, kind, data)
            if eid is not None:
                last = eid
    finally:
        host.events.unsubscribe(q)


def _sse(eid, kind, data) -> bytes:
    head = f"id: {eid}\n" if eid is not None else ""
    return f"{head}event: {kind}\ndata: {data}\n\n".encode("utf-8")
