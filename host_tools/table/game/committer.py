"""Group commit (validation groupée): concurrent placements recorded in one transaction.

Each bet is one transaction with its own fsync when placed alone; at 32 clients that fsync is
the cost. Here `place` stamps the bet at its receipt (`Table.receive`: the host instant and the
betting window's verdict then) and queues it; one committer thread takes every bet waiting,
records them in one journal transaction and commits once; only then is each caller answered.
A bet that fails (an error that is not a refusal: a failing disk sector) rolls back alone: the
group is first recorded without a savepoint a bet (they were over a quarter of a single
bet's recording), and if one of its bets fails, the whole transaction rolls back and the group is
recorded again, each bet in its own savepoint (`_Again`). So:

- a bet is acknowledged (201) only after the COMMIT that holds it; a kill at any instant leaves
  the whole group in the journal or none of it, and if the COMMIT fails no bet of the group is
  acknowledged (each caller gets the error);
- the window is judged at each bet's own receipt: a bet the window refused when it arrived is
  refused, and one it took is still refused if the wheel's call was taken before its group
  (poussette), judged with its receipt instant; waiting for a group never widens the window;
- the Idempotency-Key, the table's rules and refusals are `Table.place`'s, bet by bet, in order
  of receipt (a key used twice in one group answers the first);
- a terminal's slip (slips.py) is one job: all its bets recorded, or none (a failure in it rolls
  the group back, and the group is recorded again, the slip in its own savepoint).

`place` blocks its thread until then; `place_async` awaits it on the HTTP server's event loop
(the committer wakes the loop once the group has committed, once for the whole group), so a bet over HTTP costs no
worker thread and no hop between threads besides the committer's own.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque

from host_tools.table.game import slips
from host_tools.table.game.gate import Invalid, Refused

log = logging.getLogger("cylindre.committer")

MAX_GROUP = 256         # bets in one transaction at most (the rest wait for the next); a slip's bets
                        # count one by one, so a group holds the table (and the wheel's statuses and
                        # call, which wait for it) for a bounded time however large the slips


class Unvouched(Exception):
    """The token that vouched for a placement changed (revoked) after it was read: nothing is
    recorded; the caller reads the token again (api/fastpath.py: the app's own guard answers)."""


class _Again(Exception):
    """A bet of a group recorded without savepoints failed: the group is recorded again, each bet
    in its own savepoint, so that bet alone rolls back."""


class _Job:
    __slots__ = ("body", "key", "by", "receipt", "out", "error", "done", "slip", "voucher", "fut")

    def __init__(self, body, key, by, receipt, done=None, slip=False, voucher=None, fut=None):
        self.body, self.key, self.by, self.receipt, self.slip = body, key, by, receipt, slip
        self.voucher = voucher
        self.fut = fut                  # an event loop's future, woken with the group's others at once
        self.out = self.error = None
        self.done = done or _nobody     # called by the committer thread once the job's group is over


def _nobody():
    pass


def _wake(futs):
    for fut in futs:
        if not fut.done():          # the request may have been cancelled (server stopping)
            fut.set_result(None)


class Committer:
    """`unvouched(db, vouchers)`: the vouchers (a cached token's, api/auth.py `Tokens.vouch`) no
    longer good, read in the group's transaction; their placements are refused (`Unvouched`)."""

    def __init__(self, table, max_group=MAX_GROUP, unvouched=None):
        self.table = table
        self.unvouched = unvouched
        self.j = table.j
        self.max_group = max_group
        self._waiting = deque()
        self._cv = threading.Condition()
        self._thread = None
        self._stop = False
        self.received = 0        # bets queued
        self.groups = 0          # transactions committed
        self.grouped = 0         # bets in them

    def place(self, body, idempotency_key=None, by=None) -> dict:
        """Like `Table.place`, answered once the bet's group has committed."""
        receipt = self.table.receive(body, idempotency_key)        # Invalid: 400 now
        done = threading.Event()
        job = _Job(body, idempotency_key, by, receipt, done.set)
        self._queue(job)
        done.wait()
        return _answer(job)

    async def place_async(self, body, idempotency_key=None, by=None, slip=False, voucher=None) -> dict:
        """`place` for an event loop: awaits the group's commit without holding a thread.
        `slip`: the body is a terminal's slip (slips.py), recorded whole in the group; `voucher`:
        the cached token's (checked in the group's transaction, `Unvouched` if it no longer holds)."""
        fut, job = self.begin(body, idempotency_key, by, slip, voucher)
        await fut
        return _answer(job)

    def begin(self, body, idempotency_key=None, by=None, slip=False, voucher=None, decoded=False):
        """`place_async` without a coroutine (the fronts' bridge, api/bridge.py): (the event loop's
        future, done when the group is over; the job, whose `answer(job)` then is the answer).
        `decoded`: the body is as a JSON decoder made it (slips.receive)."""
        receipt = (slips.receive(self.table, body, idempotency_key, decoded) if slip
                   else self.table.receive(body, idempotency_key))         # Invalid: 400 now
        fut = asyncio.get_running_loop().create_future()
        job = _Job(body, idempotency_key, by, receipt, None, slip, voucher, fut)
        self._queue(job)
        return fut, job

    def place_slip(self, body, idempotency_key=None, by=None) -> dict:
        """A slip (slips.py), answered once its group has committed."""
        receipt = slips.receive(self.table, body, idempotency_key)
        done = threading.Event()
        job = _Job(body, idempotency_key, by, receipt, done.set, True)
        self._queue(job)
        done.wait()
        return _answer(job)

    def _queue(self, job):
        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="committer", daemon=True)
                self._thread.start()
            self._waiting.append(job)
            self.received += 1
            self._cv.notify()

    def stop(self):
        with self._cv:
            self._stop = True
            self._cv.notify()

    def _run(self):
        while True:
            with self._cv:
                while not self._waiting and not self._stop:
                    self._cv.wait()
                if self._stop and not self._waiting:
                    return
                jobs, bets = [], 0
                while self._waiting and (not jobs or bets + _size(self._waiting[0]) <= self.max_group):
                    jobs.append(self._waiting.popleft())
                    bets += _size(jobs[-1])
            self.commit(jobs)

    def commit(self, jobs):
        """Record `jobs` in one transaction, then answer each (see the module docstring)."""
        table = self.table
        try:
            try:
                self._group(jobs, careful=False)
            except _Again as again:     # a bet failed: rolled back with the group; again, a savepoint a bet
                log.warning("a bet of a group of %d failed (%r): the group is recorded again, a savepoint a bet",
                            len(jobs), again.__cause__)
                table.reload()
                for job in jobs:
                    job.out = job.error = None
                self._group(jobs, careful=True)
        except BaseException as e:      # the COMMIT (or the journal) failed: nothing of the group is kept
            log.error("a group of %d bets did not commit: %s", len(jobs), e)
            table.reload()
            for job in jobs:
                job.out, job.error = None, e
        else:
            self.groups += 1
            self.grouped += len(jobs)
            if log.isEnabledFor(logging.DEBUG):     # hundreds of groups a second in a stadium's rush
                placed = sum(1 for job in jobs if job.error is None)
                log.debug("%d placements committed together (%d refused or invalid)", placed, len(jobs) - placed)
        woken = {}                      # loop -> its futures: one wake-up a loop a group, not one a bet
        for job in jobs:
            if job.fut is not None:
                woken.setdefault(job.fut.get_loop(), []).append(job.fut)
            else:
                job.done()
        for loop, futs in woken.items():
            try:
                loop.call_soon_threadsafe(_wake, futs)
            except RuntimeError:        # its event loop is closed (the server stopped): nobody waits
                pass

    def _group(self, jobs, careful):
        """The group's transaction; `careful`: each job in its savepoint (else a job's failure
        raises `_Again`, and the transaction rolls back whole)."""
        table = self.table
        with table.lock, self.j.tx():
            table.deferred = True           # the state saved once, with the group
            try:
                vouchers = [job.voucher for job in jobs if job.voucher is not None]
                bad = self.unvouched(self.j.db, vouchers) if vouchers and self.unvouched else ()
                one = self._careful if careful else self._one
                for job in jobs:
                    if bad and job.voucher in bad:
                        job.error = Unvouched("the token was revoked")
                        continue
                    one(job)
            finally:
                table.deferred = False
            self.j.save_state(table.wheel, table.st)

    def _one(self, job):
        """A job, no savepoint: a refusal is its answer; any other error, the group again."""
        try:
            job.out = self._place(job)
        except (Invalid, Refused) as e:
            job.error = e               # an answer (a refusal is recorded and kept)
        except Exception as e:
            raise _Again() from e

    def _careful(self, job):
        before = dict(self.table.st)    # (its counters: the journal's copy waits for the group's end)
        try:
            with self.j.savepoint():
                try:
                    job.out = self._place(job)
                except (Invalid, Refused) as e:
                    job.error = e       # an answer (a refusal is recorded and kept)
        except Exception as e:          # this bet alone rolls back; the table's memory with it
            log.exception("bet not recorded")
            job.error = e
            self.table.reload()
            self.table.st = before      # the group's placements before it, not yet saved, stand

    def _place(self, job):
        if job.slip:
            return slips.place(self.table, job.body, job.key, job.by, received=job.receipt)
        return self.table.place(job.body, job.key, job.by, received=job.receipt)


def _size(job):
    """How many bets a job may place: a slip's, or one."""
    parsed = job.receipt.parsed if job.slip and job.receipt is not None else None
    return len(parsed[1]) if parsed else 1


def _answer(job):
    if job.error is not None:
        raise job.error
    return job.out


answer = _answer            # a job's answer once its group is over (Committer.begin)
