"""Several servers of one model (`--api-base URL1,URL2,...`): which replica takes the next request, and what each did.

A call picks the replica with the fewest requests in flight (ties go round the list, so equal replicas share the load
evenly). A connection failure on one replica (refused, reset, closed before the answer, a reply that breaks HTTP's
framing) is asked again at once on another replica not yet tried for this attempt: that failover spends none of the
row's retries. Only when every replica has failed the attempt is it a failed attempt (retried with backoff as with
one server). A timeout or an HTTP error is the row's failed attempt as with one server (the server was reached; asking
another would not tell a slow row from a slow replica).

A replica that fails `SET_ASIDE_AFTER` times running (connection failures and timeouts) is set aside for
`SET_ASIDE_S` seconds: no call picks it while another is usable. After that one call tries it again; a success takes it
back, another failure sets it aside again. When every replica is set aside, the one set aside longest ago is tried:
a call never waits for lack of a server.

`counts()` gives, per server (its base URL): requests sent, errors (failed attempts of any kind), failovers (failed
attempts moved to another replica) and how often it was set aside. Thread-safe: the run's threads and its event loop
share one set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

SET_ASIDE_AFTER = 3  # failures in a row that set a replica aside
SET_ASIDE_S = 30.0  # for this long


class Replica:
    """One server: its base URL and chat-completions URL, with its counters."""

    __slots__ = ("base_url", "url", "in_flight", "requests", "errors", "failovers", "set_aside", "failing",
                 "aside_until")

    def __init__(self, base_url: str, url: str) -> None:
        self.base_url = base_url
        self.url = url
        self.in_flight = 0
        self.requests = 0
        self.errors = 0
        self.failovers = 0
        self.set_aside = 0  # times set aside
        self.failing = 0  # failures in a row
        self.aside_until = 0.0  # time.monotonic() until which no call picks it while another is usable


class ReplicaSet:
    """The replicas of one model and the choice among them (see the module docstring)."""

    def __init__(self, urls: Sequence[tuple[str, str]], *, clock: Callable[[], float] = time.monotonic) -> None:
        """urls: (base URL, chat-completions URL) of each replica, in the order given; clock: seconds, monotonic."""
        if not urls:
            raise ValueError("a replica set needs at least one server")
        self.replicas = [Replica(base, url) for base, url in urls]
        self._lock = threading.Lock()
        self._turn = 0
        self._clock = clock

    def __len__(self) -> int:
        return len(self.replicas)

    def pick(self, tried: Sequence[Replica] = ()) -> Replica | None:
        """The replica for the next request (its in-flight count raised), or None when every one is in `tried`."""
        with self._lock:
            if len(self.replicas) == 1:  # one server: nothing to choose (and no clock to read)
                chosen = self.replicas[0]
                if chosen in tried:
                    return None
                chosen.in_flight += 1
                chosen.requests += 1
                return chosen
            now = self._clock()
            untried = [r for r in self.replicas if r not in tried]
            if not untried:
                return None
            usable = [r for r in untried if r.aside_until <= now] or [min(untried, key=lambda r: r.aside_until)]
            if len(usable) > 1:
                start = self._turn % len(self.replicas)
                self._turn += 1
                ordered = sorted(usable, key=lambda r: (self.replicas.index(r) - start) % len(self.replicas))
                chosen = min(ordered, key=lambda r: r.in_flight)
            else:
                chosen = usable[0]
            chosen.in_flight += 1
            chosen.requests += 1
            return chosen

    def succeeded(self, replica: Replica) -> None:
        with self._lock:
            replica.in_flight -= 1
            replica.failing = 0
            replica.aside_until = 0.0

    def failed(self, replica: Replica, *, unreachable: bool, moved: bool) -> None:
        """One failed request. unreachable: a connection failure or timeout (counts towards setting it aside); moved:
        the request goes on to another replica (a failover)."""
        with self._lock:
            replica.in_flight -= 1
            replica.errors += 1
            replica.failovers += moved
            if not unreachable:
                replica.failing = 0
                return
            replica.failing += 1
            if replica.failing < SET_ASIDE_AFTER:
                return
            newly = replica.aside_until <= self._clock()
            replica.aside_until = self._clock() + SET_ASIDE_S
            replica.set_aside += newly
        if newly and len(self.replicas) > 1:
            log.warning("%s: %d failures in a row; set aside for %g s, the other servers take its requests",
                        replica.base_url, replica.failing, SET_ASIDE_S)

    def set_down(self, replica: Replica) -> None:
        """Set a replica aside now (the probe found it down)."""
        with self._lock:
            replica.failing = max(replica.failing, SET_ASIDE_AFTER)
            replica.aside_until = self._clock() + SET_ASIDE_S
            replica.set_aside += 1

    def counts(self) -> dict[str, dict[str, int]]:
        """Per server (base URL): requests, errors, failovers, set_aside."""
        with self._lock:
            return {r.base_url: {"requests": r.requests, "errors": r.errors, "failovers": r.failovers,
                                 "set_aside": r.set_aside} for r in self.replicas}
