"""The deadline of one exchange (vlm.api.connection._Deadline): a call that outlives its timeout fails with Timeout;
a call that ends in time leaves nothing behind that could cancel its task later; a call cancelled by its owner stays
cancelled (never turned into a Timeout)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.servers import FaultServer, Reply, chat_reply
from vlm.api.connection import Client, Timeout

HEADERS = {"Content-Type": "application/json"}


def test_a_call_past_its_timeout_is_a_timeout_and_the_task_goes_on() -> None:
    with FaultServer(lambda r: Reply(200, chat_reply("late").body, delay=1.5)) as server:
        client = Client()

        async def main() -> str:
            try:
                await client.arequest("POST", server.base_url + "/chat/completions", b"{}", HEADERS, 0.3)
            except Timeout as exc:
                await asyncio.sleep(0.05)  # the task was not left cancelled: it can await again
                return exc.reason
            finally:
                await client.aclose_here()
            return "answered"

        reason = asyncio.run(main())
        client.close()
    assert reason == "no complete answer within 0.3 s"


def test_a_call_that_ends_in_time_leaves_no_deadline_behind() -> None:
    with FaultServer(lambda r: chat_reply("soon")) as server:
        client = Client()

        async def main() -> int:
            reply = await client.arequest("POST", server.base_url + "/chat/completions", b"{}", HEADERS, 0.2)
            await asyncio.sleep(0.5)  # past the call's deadline: a timer left running would cancel this sleep
            await client.aclose_here()
            return reply.status_code

        assert asyncio.run(main()) == 200
        client.close()


def test_a_call_cancelled_by_its_owner_stays_cancelled() -> None:
    with FaultServer(lambda r: Reply(200, chat_reply("late").body, delay=1.5)) as server:
        client = Client()

        async def main() -> None:
            call = asyncio.ensure_future(
                client.arequest("POST", server.base_url + "/chat/completions", b"{}", HEADERS, 30.0))
            await asyncio.sleep(0.3)
            call.cancel()
            try:
                with pytest.raises(asyncio.CancelledError):
                    await call
            finally:
                await client.aclose_here()

        asyncio.run(main())
        client.close()
