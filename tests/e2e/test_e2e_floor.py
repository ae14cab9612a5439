"""End to end: `cylindre daemon --nats ...` in its own process, a simulated wheel on a real pty, a
real nats-server. The coups reach the stream with the wheel's evidence, the daemon killed and
started again resumes from its cursor, and the floor closes the table with a signed command."""

import asyncio
import json
import subprocess
import time

import nats
import pytest

from host_tools.floor import natsrv
from host_tools.table.wheel.keys import new_key
from host_tools.floor.link import command as C
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

from e2ekit import Rig, check_settled_exactly_once

pytestmark = pytest.mark.slow
SITE = "PARIS"


class FloorRig(Rig):
    """The rig's daemon, publishing to a floor."""

    def __init__(self, tmp, url, **kw):
        super().__init__(tmp, **kw)
        self.url = url
        self.floor_key_path = tmp / "floor.key"
        self.floor_key = new_key(self.floor_key_path)

    def start_daemon(self):
        self.daemon = subprocess.Popen(
            [self.python, "-m", "host_tools.table", "--port", self.line.path, "--key", str(self.key_path),
             "--journal", str(self.journal), "--http", f"127.0.0.1:{self.http}", "--open",
             "--log", str(self.tmp / "daemon.log"), "--nats", self.url, "--site", SITE,
             "--wheel-serial", "SIM-0001", "--floor-key", str(self.floor_key_path)],
            cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.daemons += 1


async def floor_view(url):
    """The journaled events of T1 in the stream, by event id, and the bucket's state."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    out = {}
    try:
        info = await js.stream_info(S.STREAM)
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            env = E.parse((await js.get_msg(S.STREAM, seq)).data)
            if env["kind"] != "heartbeat":
                assert env["event_id"] not in out, "an event doubled"
                out[env["event_id"]] = env
        state = json.loads((await (await js.key_value(S.BUCKET)).get(S.kv_key(SITE, "T1"))).value)
    except Exception:
        state = None
    finally:
        await nc.close()
    return out, state


def test_a_daemon_publishes_its_coups_to_the_floor(tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    rig = FloorRig(tmp_path, srv.url, seed=7, speed=80.0, pause=0.2)
    try:
        rig.start_daemon()
        rig.play(6)
        rig.wait_link()
        while rig.playing() and len(rig.board_results()) < 3:
            time.sleep(0.05)
        rig.kill_daemon()                       # killed mid-game: its cursor is in its journal
        rig.start_daemon()
        rig.finish()
        check_settled_exactly_once(rig)
        want = rig.board_results()
        end = time.monotonic() + 30
        while True:
            events, state = asyncio.run(floor_view(srv.url))
            results = sorted((e["body"]["spin"], e["body"]["number"]) for e in events.values() if e["kind"] == "result")
            if results == want and state and state["last_numbers"][:1] == [want[-1][1]]:
                break
            assert time.monotonic() < end, (results, want, state)
            time.sleep(0.1)
        c = rig.db()
        settled = {r[0] for r in c.execute("SELECT spin FROM settlements")}
        assert {e["body"]["spin"] for e in events.values() if e["kind"] == "settlement"} == settled
        for e in events.values():
            # the serial the wheel reports (its board's) wins over --wheel-serial, from the first
            # event on, also those published after the restart before the wheel spoke again
            assert (e["site"], e["table"], e["serial"]) == (SITE, "T1", "sim-T1")
            if e["kind"] == "result":           # the wheel's evidence, as it measured it
                b = e["body"]
                assert b["rotor_dir"] in ("cw", "ccw") and b["ball_dir"] in ("cw", "ccw")
                assert isinstance(b["epoch"], str) and b["epoch"]           # the wheel's counter epoch
                assert b["rotor_dir"] != b["ball_dir"]
                assert isinstance(b["rotor_rpm_x10"], int) and b["rotor_rpm_x10"] > 0
                assert isinstance(b["laps"], int) and b["laps"] >= 1
                assert isinstance(b["drop_angle_x10"], int) and 0 <= b["drop_angle_x10"] < 3600
        # the floor closes the table
        req = C.request("close", {}, "marie", "pit_boss", rig.floor_key)

        async def ask():
            nc = await nats.connect(srv.url)
            try:
                return json.loads((await nc.request(E.cmd_subject(SITE, "T1"), json.dumps(req).encode(),
                                                    timeout=10)).data)
            finally:
                await nc.close()
        reply = asyncio.run(ask())
        assert reply["ok"] and reply["result"]["phase"] == "closed", reply
        st, s = rig.api("GET", "/state")
        assert s["table"]["phase"] == "closed"
        st, audit = rig.api("GET", "/audit?action=table_close")
        assert audit[0]["who"] == "floor:marie" and audit[0]["role"] == "chef"
    finally:
        rig.stop_daemon()
        srv.close()
