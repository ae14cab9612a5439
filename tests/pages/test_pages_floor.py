"""The floor page in a real browser (Debian's Chromium through playwright, tests/browserkit.py):
three tables in two pits fed through a real nats-server, their tiles with the last numbers in
their colours, the alerts list, an alert acknowledged with a comment from the page (audited at the
floor, told to the table), a table closed from its tile, the day's report refused while a table's
own totals disagree, then signed and downloaded, and what a surveillance user is not offered; the
page's own token form (no browser prompt), a wall of 1920 px filled. Screenshots in
build/screenshots/floor*.png. About 20 s."""

import socket
import threading
import time

import pytest

from host_tools.floor import natsrv
from host_tools.table.wheel.keys import new_key
from host_tools.table.api.server import server
from host_tools.floor.service import FloorService
from host_tools.floor.web import create_app
from host_tools.floor.link import command as C

from browserkit import browser, overflows, shot
from host_tools.floor.harness import LoopThread

from floorkit import FloorTable as Table, wait

playwright = pytest.importorskip("playwright.sync_api")


def svc_day():
    from host_tools.floor.link.gamingday import GamingDay
    return GamingDay()


def told(gday, settlements, turnover, paid):
    """A table's own totals of the day in progress, as its heartbeat carries them."""
    now = time.time()
    day = gday.of(now)
    a, b = gday.bounds(day)
    return [{"day": day.isoformat(), "from": a, "to": b, "as_of": now + 1, "ledger": "", "journals": [""],
             "settlements": settlements, "turnover": turnover, "paid": paid}]


@pytest.fixture
def floor(tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    key = new_key(tmp_path / "floor.key")
    bg = LoopThread()
    tables = [bg.submit(Table(srv.url, key, table=t, ops=C.OPS).start()).result(10)
              for t in ("T1", "T2", "T3")]
    layout = {"T1": {"pit": "Pit A", "url": "http://10.0.0.11:8080", "target": 40},
              "T2": {"pit": "Pit A", "url": "http://10.0.0.12:8080"}, "T3": {"pit": "Pit B", "target": 30}}
    svc = FloorService.build(str(tmp_path / "floor.sqlite"), srv.url, key, layout=layout)
    svc.start()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    from host_tools.floor import signing
    signing.new_key(tmp_path / "report.key")
    app = create_app(svc, tmp_path / "reports", signing.load_private(tmp_path / "report.key"))
    http = server(app)
    threading.Thread(target=http.run, kwargs={"sockets": [sock]}, daemon=True).start()
    wait(lambda: http.started and svc.link.connected, "the floor's server and link", 20)
    tokens = {r: svc.access.add(f"{r}-1", r) for r in ("surveillance", "pit_boss", "director")}
    now = time.time()
    for t, nums in zip(tables, ([17, 0, 32, 15, 19, 4], [26, 3, 35], [])):
        for i, n in enumerate(nums):
            bg.submit(t.publish(2 * i + 1, "result", {"spin": i + 1, "number": n, "croupier": "ana", "rotor_dir": "cw",
                                                      "ball_dir": "ccw"})).result(5)
            bg.submit(t.publish(2 * i + 2, "settlement", {"spin": i + 1, "number": n, "staked": 20000, "turnover": 20000,
                                                          "paid": 7200 * (n == 17), "result": 0, "bets": 5,
                                                          "settled_at": time.time()})).result(5)
        link = "up" if t.table != "T3" else "port /dev/ttyACM0 absent ([Errno 2] No such file or directory)"
        bg.submit(t.publish(100, "heartbeat", {"link": link, "phase": "betting", "open": t.table != "T3",
                                               "backlog": 0, "clock": now, "last_event_id": 12,
                                               "days": told(svc_day(), len(nums), 20000 * len(nums),
                                                            7200 * nums.count(17) + (2000 if t.table == "T2" else 0))}
                            )).result(5)
    bg.submit(tables[1].publish(50, "alert", {"id": "a7", "code": "misspin_streak", "message": "trois annulations de suite",
                                              "level": "warning", "raised_at": now, "acked_at": None, "acked_by": None,
                                              "comment": None})).result(5)
    wait(lambda: svc.store.count("alert") == 1 and len(svc.tiles.tiles) == 3, "the floor fed")
    svc.refresh_stats()                                  # the statistics thread computes them again now
    wait(lambda: (svc.wheel_stats() or {}).get("wheels"), "the per-wheel statistics")
    global bg_publish
    bg_publish = lambda t, eid, kind, body: bg.submit(t.publish(eid, kind, body)).result(5)   # noqa: E731
    yield svc, "http://127.0.0.1:%d" % sock.getsockname()[1], tokens, tables, tmp_path
    http.should_exit = True
    svc.stop()
    for t in tables:
        bg.submit(t.nc.close()).result(5)
    bg.close()
    srv.close()


def test_the_floor_page(floor):
    svc, base, tokens, tables, tmp = floor
    with playwright.sync_playwright() as p:
        b = browser(p)
        page = b.new_page(viewport={"width": 1500, "height": 950})
        page.on("dialog", lambda d: d.accept())
        page.goto(base + "/floor#token=" + tokens["pit_boss"])
        page.wait_for_selector(".tile[data-table='T3']")
        assert page.locator(".pit h2").all_inner_texts()[0].startswith("Pit A")
        t1 = page.locator(".tile[data-table='T1']")
        assert t1.locator(".num").first.inner_text() == "4"
        colours = t1.locator(".num").evaluate_all("els => els.map(e => e.dataset.colour)")
        assert colours == ["noir", "rouge", "noir", "rouge", "zero", "noir"]       # 4 19 15 32 0 17
        text = t1.inner_text().replace("\u202f", " ").replace("\xa0", " ")
        assert "résultat 1 128,00 €" in text and "mises 1 200,00 €" in text    # 6 x 200 € staked, 72 € paid
        assert t1.locator("h3 a").get_attribute("href") == "http://10.0.0.11:8080/pit"
        t3 = page.locator(".tile[data-table='T3']").inner_text()
        assert "fermée" in t3 and "17" in t3                       # no event yet: the bucket's last numbers
        # the wheel's link lost: said in French and short on the tile, the table's reason on hover
        assert "liaison coupée" in t3 and "Errno" not in t3, t3
        assert "Errno 2" in page.locator(".tile[data-table='T3'] .tag.bad").first.get_attribute("title")
        assert page.locator("#alert-count").inner_text() == "1"
        assert "1 alerte" in page.locator(".tile[data-table='T2']").inner_text()
        page.wait_for_function("() => document.querySelector('#wheels').textContent.includes('W-17')")
        assert "aucune alarme" in page.locator("#wheels").inner_text()
        shot(page, "floor", full=True)
        page.fill("#alerts input[name=comment]", "croupier remplacé, cylindre vérifié")
        page.click("#alerts button[type=submit]")
        page.wait_for_function("() => document.querySelector('#alert-count').textContent === ''")
        assert "acquittée en salle par pit_boss-1" in page.locator("#alerts").inner_text()
        assert tables[1].taken[-1]["op"] == "ack_alert"
        page.locator(".tile[data-table='T1'] button.stop").click()
        wait(lambda: [a["action"] for a in svc.access.rows()][:3] == ["cmd.close", "cmd.ack_alert", "alert.ack"],
             "the close command and the acknowledgement audited at the floor")
        assert tables[0].taken[-1]["op"] == "close" and tables[0].taken[-1]["who"] == "pit_boss-1"
        # T2 says it paid 20 € more than the floor saw: the day is not signed, the page says who and why
        page.click("#report-form button")
        page.wait_for_function("() => document.querySelector('#error').textContent.includes('ne se réconcilie pas')")
        assert "T2" in page.locator("#error").inner_text() and not (tmp / "reports").exists()
        bg_publish(tables[1], 101, "heartbeat", {"link": "up", "phase": "betting", "open": True, "clock": time.time() + 2,
                                                 "days": told(svc_day(), 3, 60000, 0)})
        wait(lambda: not svc.store.query("SELECT 1 FROM table_days WHERE table_id='T2' AND paid <> 0"), "T2's totals")
        page.click("#report-form button")
        page.wait_for_function("() => document.querySelector('#error').textContent.startsWith('rapport signé')")
        day = next((tmp / "reports").iterdir())
        assert sorted(f.name for f in day.iterdir() if f.suffix == ".pdf") == \
            ["permanence-T1.pdf", "permanence-T2.pdf"]
        page.wait_for_selector(f"#reports li[data-day='{day.name}'] a[data-file='permanence-T1.pdf']")
        with page.expect_download() as got:
            page.click(f"#reports li[data-day='{day.name}'] a[data-file='permanence-T1.pdf']")
        assert got.value.suggested_filename == "permanence-T1.pdf"
        assert open(got.value.path(), "rb").read() == (day / "permanence-T1.pdf").read_bytes()
        shot(page, "floor-acked", full=True)
        watcher = b.new_page(viewport={"width": 1200, "height": 800})
        watcher.goto(base + "/floor#token=" + tokens["surveillance"])
        watcher.wait_for_selector(".tile[data-table='T1']")
        assert watcher.locator("button.stop").count() == 0 and not watcher.locator("#setting-form").is_visible()
        assert not watcher.locator("#report-form").is_visible()         # surveillance reads the reports, signs none
        watcher.wait_for_selector("#reports a[data-file='rapport.json']")
        # a 0,00 € result is no gain: not green
        assert watcher.locator(".tile[data-table='T3'] b.nil").inner_text().startswith("0,00")
        # no token, then a wrong one: the page's own form, never a browser prompt
        stranger = b.new_page(viewport={"width": 1200, "height": 800})
        stranger.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError("a browser dialog: " + d.message)))
        stranger.goto(base + "/floor")
        stranger.wait_for_selector("#login:not([hidden])")
        stranger.fill("#login input[name=token]", "cyl_not-a-token")
        stranger.click("#login button")
        stranger.wait_for_function("() => document.querySelector('#login-why').textContent.includes('jeton refusé')")
        stranger.fill("#login input[name=token]", tokens["surveillance"])
        stranger.click("#login button")
        stranger.wait_for_selector(".tile[data-table='T1']")
        stranger.wait_for_function("() => document.querySelector('#wheels').textContent.includes('W-17')")
        assert "corrigés ensemble" in stranger.locator("#wheels").inner_text()
        # a wall of 1920 px: the pits side by side, the tiles across most of the width
        wall = b.new_page(viewport={"width": 1920, "height": 1080})
        wall.goto(base + "/floor#token=" + tokens["surveillance"])
        wall.wait_for_selector(".tile[data-table='T3']")
        boxes = [wall.locator(f".tile[data-table='{t}']").bounding_box() for t in ("T1", "T2", "T3")]
        pits = wall.locator("#pits").bounding_box()
        assert len({round(bx["y"]) for bx in boxes}) == 1                       # one row
        assert max(bx["x"] + bx["width"] for bx in boxes) - min(bx["x"] for bx in boxes) >= 0.6 * pits["width"]
        shot(wall, "floor-1920", full=True)
        # a director on a 1024x768 tablet: the settings form (its long select spilled 3 px out of its
        # box), the tiles and the amounts fit; the role in French, not the code
        director = b.new_page(viewport={"width": 1024, "height": 768})
        director.goto(base + "/floor#token=" + tokens["director"])
        director.wait_for_selector(".tile[data-table='T1']")
        director.wait_for_function("() => document.querySelector('#wheels').textContent.includes('W-17')")
        assert director.locator("#setting-form").is_visible()
        assert director.locator("#me").inner_text().endswith("(directeur des jeux)")
        assert overflows(director, "#pits > *, main > aside > section, header", scroll_y=True) == []
        shot(director, "floor-1024", full=True)
        b.close()
