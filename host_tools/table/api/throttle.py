"""Throttling of failed authentication (limitation des essais): a token bucket per client address.

A guessed token costs one from its address's bucket (BURST, refilled one every REFILL_S); an
address whose bucket is empty is answered 429 with Retry-After, its token not even read, until
one has come back. A request without a token is no guess and costs nothing. IPv6 addresses count
by their /64 (one host holds a whole /64). The table of addresses is bounded (MAX_CLIENTS, least
recently seen dropped first), so a flood of addresses costs memory for at most that many.

Pure: every method takes the instant from `clock` (monotonic seconds, injected by the tests) and
says what the shell should log or audit; api/app.py does the logging and the audit row. What it says
is rate-limited by itself: an address's first failure, the moment it is throttled, and then at
most one line every LOG_EVERY_S with the count of what was refused meanwhile — never the token.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict

BURST = 10              # failed tokens an address may present at once
REFILL_S = 6.0          # then one more every REFILL_S (10 a minute)
LOG_EVERY_S = 60.0      # at most one line an address this often while it is throttled
MAX_CLIENTS = 10_000


class _Bucket:
    __slots__ = ("level", "at", "failures", "refused", "logged_at", "throttled")

    def __init__(self, burst, now):
        self.level, self.at = float(burst), now
        self.failures = self.refused = 0        # since the last line said about this address
        self.logged_at = None
        self.throttled = False


class Throttle:
    def __init__(self, burst=BURST, refill_s=REFILL_S, log_every_s=LOG_EVERY_S, max_clients=MAX_CLIENTS,
                 clock=time.monotonic):
        self.burst, self.refill_s, self.log_every_s = burst, refill_s, log_every_s
        self.max_clients = max_clients
        self.clock = clock
        self._b: OrderedDict[str, _Bucket] = OrderedDict()

    def _bucket(self, client, now):
        b = self._b.get(client)
        if b is None:
            b = self._b[client] = _Bucket(self.burst, now)
            while len(self._b) > self.max_clients:
                self._b.popitem(last=False)
        else:
            self._b.move_to_end(client)
            b.level = min(float(self.burst), b.level + (now - b.at) / self.refill_s)
            b.at = now
            if b.level >= self.burst:
                b.throttled = False             # refilled: the episode is over (a new one is audited)
        return b

    def check(self, client) -> tuple[float | None, str | None]:
        """Before a token is read: (seconds to wait, None or a line to log) when `client` must
        wait, (None, None) when its token may be read."""
        b = self._b.get(client)
        if b is None:
            return None, None
        now = self.clock()
        b = self._bucket(client, now)
        if b.level >= 1:
            return None, None
        b.refused += 1
        wait = math.ceil((1 - b.level) * self.refill_s)
        return max(1, wait), self._line(client, b, now)

    def failed(self, client) -> tuple[str | None, dict | None]:
        """A token from `client` was not a live one: (a line to log or None, the audit row's
        `after` when this failure throttles the address, else None)."""
        now = self.clock()
        b = self._bucket(client, now)
        b.level = max(0.0, b.level - 1)
        b.failures += 1
        first = b.logged_at is None
        if b.level < 1 and not b.throttled:
            b.throttled = True
            event = {"failures": b.failures, "burst": self.burst, "refill_s": self.refill_s,
                     "retry_after_s": math.ceil((1 - b.level) * self.refill_s)}
            line = (f"authentication: {b.failures} unknown tokens from {client}: its requests are refused "
                    f"(429) for {event['retry_after_s']} s, then one guess every {self.refill_s:g} s")
            b.failures = b.refused = 0
            b.logged_at = now
            return line, event
        if first:
            b.logged_at = now
            return f"authentication: an unknown token from {client}", None
        return self._line(client, b, now), None

    def _line(self, client, b, now):
        if now - b.logged_at < self.log_every_s:
            return None
        line = (f"authentication: from {client} since {now - b.logged_at:.0f} s: {b.failures} unknown tokens, "
                f"{b.refused} requests refused (429)")
        b.failures = b.refused = 0
        b.logged_at = now
        return line


def client_of(host: str | None) -> str:
    """The address a bucket is kept for: an IPv6 address by its /64, anything else as given."""
    if not host:
        return "?"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)
