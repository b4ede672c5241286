"""Several servers behind one perf run (`--api-base URL1,URL2,...`): least-in-flight balancing, a back-off for a
server that stopped answering, and each server's own counts and figures.

A request goes to the server with the fewest requests in flight (ties: the one sent fewest so far, then the first
given). A server whose last `DOWN_AFTER` requests could not connect or were dropped is left out for a back-off
(`BACKOFF_S`, doubling up to `BACKOFF_MAX_S`), then given requests again; one success ends its back-off. When every
server is backing off, the one whose back-off ends first still gets the request (the run goes on; its requests
are that server's errors). A failed request is never sent again elsewhere: a load test measures what each server
did, and the failure is counted against the server it went to.
"""

from __future__ import annotations

from time import monotonic_ns
from typing import Any

from vlmkit.perf.client import Record
from vlmkit.perf.metrics import LevelTally

DOWN_AFTER = 3
BACKOFF_S = 1.0
BACKOFF_MAX_S = 30.0
DEAD_KINDS = ("connection", "dropped")  # a server that answers (even with an HTTP error) is up


class Server:
    """One server: where it is, what it has in flight, and its tally of the level's measured requests."""

    __slots__ = ("url", "in_flight", "sent", "failures", "down_until", "backoff_ns", "tally")

    def __init__(self, url: str, slo: dict[str, float] | None) -> None:
        self.url = url
        self.in_flight = 0
        self.sent = 0
        self.failures = 0  # consecutive connection failures
        self.down_until = 0
        self.backoff_ns = int(BACKOFF_S * 1e9)
        self.tally = LevelTally(slo) if slo is not None else None  # kept only when there are several servers


class Balancer:
    """Chooses the server of each request and keeps per-server counts (one per measuring process and level)."""

    def __init__(self, urls: list[str], slo: dict[str, float]) -> None:
        self.servers = [Server(url, slo if len(urls) > 1 else None) for url in urls]

    def pick(self) -> int:
        servers = self.servers
        if len(servers) == 1:
            return 0
        now = monotonic_ns()
        up = [i for i, s in enumerate(servers) if s.down_until <= now]
        if not up:
            return min(range(len(servers)), key=lambda i: servers[i].down_until)
        return min(up, key=lambda i: (servers[i].in_flight, servers[i].sent, i))

    def started(self, i: int) -> None:
        server = self.servers[i]
        server.in_flight += 1
        server.sent += 1

    def ended(self, i: int, rec: Record, measured: bool, figures: dict[str, Any] | None = None) -> None:
        server = self.servers[i]
        server.in_flight -= 1
        if measured and server.tally is not None:
            server.tally.add(rec, figures)
        if rec.error in DEAD_KINDS:
            server.failures += 1
            if server.failures >= DOWN_AFTER:
                server.down_until = monotonic_ns() + server.backoff_ns
                server.backoff_ns = min(server.backoff_ns * 2, int(BACKOFF_MAX_S * 1e9))
        elif rec.error != "cancelled":
            server.failures = 0
            server.down_until = 0
            server.backoff_ns = int(BACKOFF_S * 1e9)

    def tallies(self) -> list[LevelTally]:
        """Each server's tally; empty with one server (the level's own tally is its)."""
        return [s.tally for s in self.servers if s.tally is not None]


def server_figures(urls: list[str], tallies: list[LevelTally]) -> list[dict[str, Any]]:
    """The per-server block of a level: each server's counts and its own figures."""
    out = []
    for i, (url, tally) in enumerate(zip(urls, tallies)):
        figures = tally.summary()
        out.append({
            "server": i,
            "url": url,
            "requests": figures["requests"],
            "request_throughput": figures["request_throughput"],
            "output_token_throughput": figures["output_token_throughput"],
            **{name: figures[name] for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")},
        })
    return out
