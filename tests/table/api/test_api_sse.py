"""The live stream on a real server: a screen that loses its connection and comes back with
Last-Event-ID gets every event it missed, once, in order; status only when asked for; a display
token (a public screen) is streamed no bet."""

import http.client
import json
import socket
import time

from apikit import served  # noqa: F401  (fixture)


class Stream:
    """One SSE connection, read event by event."""

    def __init__(self, t, last_id=None, kinds=None, role="croupier"):
        self.c = http.client.HTTPConnection("127.0.0.1", t.port, timeout=10)
        headers = {"Authorization": "Bearer " + t.tokens[role]}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        self.c.request("GET", "/events" + (f"?kinds={kinds}" if kinds else ""), headers=headers)
        self.r = self.c.getresponse()
        assert self.r.status == 200 and self.r.getheader("content-type").startswith("text/event-stream")

    def next(self):
        eid, kind, data = None, None, None
        while True:
            line = self.r.fp.readline().decode().rstrip("\n")
            if line.startswith("id: "):
                eid = int(line[4:])
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif line == "" and kind:
                return eid, kind, data

    def drop(self):
        self.c.sock.shutdown(socket.SHUT_RDWR)
        self.c.close()


def _bet(t, n):
    r = t.call("croupier", "POST", "/bets", json={"player": f"p{n}", "type": "rouge", "stake": 100 + n})
    assert r.status_code == 201


def test_resume_after_a_dropped_connection_loses_no_event(served):
    t = served
    s = Stream(t)
    time.sleep(0.2)                                  # subscribed before the first bet
    _bet(t, 0)
    _bet(t, 1)
    seen = [s.next(), s.next()]
    s.drop()
    for n in range(2, 30):                           # the display is away: 28 bets and a spin
        _bet(t, n)
    t.event(1, {"ev": "launch", "t": 1, "spin": 1})
    last = seen[-1][0]
    s = Stream(t, last_id=last)
    got = [s.next() for _ in range(29)]
    _bet(t, 30)                                      # and live ones carry on after the replay
    got.append(s.next())
    s.drop()
    ids = [e[0] for e in seen + got]
    assert ids == list(range(ids[0], ids[0] + 32))           # 31 bets and the launch, each once, in order
    stakes = [d["stake"] for _, k, d in seen + got if k == "bet"]
    assert stakes == [100 + n for n in range(31)]
    assert ("wheel", {"ev": "launch", "t": 1, "spin": 1}) in [(k, d) for _, k, d in got]


def test_status_only_when_asked_and_without_an_id(served):
    t = served
    plain, both = Stream(t), Stream(t, kinds="status,bet")
    time.sleep(0.2)
    t.host.events.publish("status", {"state": "idle"})
    _bet(t, 0)
    assert plain.next()[1] == "bet"
    s_id, s_kind, _ = both.next()
    assert (s_id, s_kind) == (None, "status") and both.next()[1] == "bet"
    plain.drop()
    both.drop()
    assert t.host.events.since(0, ["status"]) == []


def test_a_filter_resumes_only_its_kinds(served):
    t = served
    _bet(t, 0)
    t.event(1, {"ev": "launch", "t": 1, "spin": 1})
    _bet(t, 1)
    s = Stream(t, last_id=0, kinds="wheel")
    eid, kind, data = s.next()
    s.drop()
    assert (kind, data["ev"]) == ("wheel", "launch")


def test_a_display_token_is_streamed_the_game_but_no_bet(served):
    t = served
    s, c = Stream(t, role="display"), Stream(t)
    time.sleep(0.2)
    _bet(t, 0)
    t.event(1, {"ev": "launch", "t": 1, "spin": 1})
    assert c.next()[1] == "bet"                          # a croupier is streamed the bet
    for stream in (s, Stream(t, last_id=0, role="display")):                   # live, and in the replay
        kinds = []
        while "wheel" not in kinds:
            kinds.append(stream.next()[1])
        assert "bet" not in kinds, kinds                # (before: the bet first, with its player and stake)
        stream.drop()
    c.drop()
