"""The pit page in a real browser against the running daemon that serves it: bets by player, a bet
held by the daemon's own recovery (the wheel's link went silent after "rien ne va plus", the wheel
played on, then lost its power: its flash no longer reaches back to the called spin) refunded from
the page, the link-down alert that outage raised acknowledged with a comment, the croupier set, the
last games with their evidence."""

import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, overflows, shot

PANELS = "main > section, #top"


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path, alerts={"link_down_s": 2, "every_s": 0.5}, silence_ms=2500).start()
    yield t
    t.close()


def cut_the_link_after_rnvp_then_the_power(table, spin, more):
    """From `spin`'s result on, nothing leaves the wheel (a cut cable); the croupier plays `more`
    spins; then the wheel loses its power and boots: its outbox is gone, its flash holds 10 games."""
    board = table.board
    link, emit = board.link, board.link.emit        # this boot's link: the power cut replaces it

    def cut(ev):
        if ev.get("ev") == "result" and ev.get("spin") == spin:
            board._mute = True
        return emit(ev)
    link.emit = cut
    table.play(1 + more)
    table.wait(lambda: board.spins >= spin + more, "the wheel did not play on", 120)
    board._cut_at = time.monotonic()                   # the board's own loop cuts the power


def test_pit_refunds_a_held_bet_and_acknowledges_the_alert_of_the_outage(table):
    table.play(1)
    table.wait_results(1)
    st, held = table.bet({"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    assert st == 201
    cut_the_link_after_rnvp_then_the_power(table, 2, 10)
    table.wait(lambda: table.api("GET", f"/bets/{held['id']}")[1]["status"] == "held", "the bet was never held", 30)
    table.wait(lambda: any(a["code"] == "link_down" for a in table.pit.store.list()), "no link_down alert", 10)
    [alert] = [a for a in table.pit.store.list() if a["code"] == "link_down"]
    table.wait(lambda: table.api("GET", "/state")[1]["table"]["accepting_bets"], "betting never reopened after the boot")
    for player, kind, stake in (("bo", "rouge", 2000), ("bo", "pair", 500), ("cy", "noir", 1500)):
        assert table.bet({"player": player, "type": kind, "stake": stake})[0] == 201

    with pw.sync_playwright() as p:
        b = browser(p)
        page = b.new_page(viewport={"width": 1024, "height": 768}, bypass_csp=True)     # a tablet; the test evaluates its probes
        t0 = time.time()
        page.goto(table.base + "/pit#token=" + table.tokens["chef"])
        page.wait_for_selector("body[data-loaded]")
        load_ms = (time.time() - t0) * 1000
        assert page.locator("#t-link").inner_text() == "liaison établie"
        assert page.locator("#n-held").inner_text() == "1"
        assert page.locator(f"[data-alert='{alert['id']}']").get_attribute("class") == "critical"
        assert "liaison avec le cylindre coupée" in page.locator(f"[data-alert='{alert['id']}']").inner_text()
        rows = {r.locator("td").nth(0).inner_text(): r.locator("td").nth(2).inner_text()
                for r in page.locator("#bets tr").all()}
        assert rows == {"bo": "25,00\u202f€", "cy": "15,00\u202f€"}           # a narrow no-break space before €
        games = page.locator("#games tr")
        assert games.count() == 1
        shot(page, "pit_before", full=True)
        assert overflows(page, PANELS, scroll_y=True) == []         # the held bet's buttons, the alert's form: in their panels
        lines = page.locator("#bets td.n, #held td.n, #money td.n").evaluate_all("""es => es.map((e) => {
            const r = document.createRange(); r.selectNodeContents(e);
            return [e.textContent, new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size]; })""")
        assert lines and all(n == 1 for _, n in lines), lines          # "116,00 €" on one line

        page.locator(f"[data-alert='{alert['id']}'] button").click()           # no comment: refused here
        assert "commentaire est obligatoire" in page.locator("#error").inner_text()
        page.locator(f"[data-alert='{alert['id']}'] input").fill("câble du cylindre rebranché; coupure de courant notée")
        page.locator(f"[data-alert='{alert['id']}'] button").click()
        page.wait_for_selector(f"[data-alert='{alert['id']}'].done")
        acked = table.pit.store.get(alert["id"])
        assert (acked["acked_by"], acked["comment"]) == ("chef-1", "câble du cylindre rebranché; coupure de courant notée")
        assert table.api("GET", "/audit?action=alert_ack", role="chef")[1][0]["who"] == "chef-1"

        page.locator(f"[data-bet='{held['id']}'] button.stop").click()         # Rembourser
        page.wait_for_function("() => document.getElementById('n-held').textContent === ''")
        assert table.api("GET", f"/bets/{held['id']}")[1]["status"] == "refunded"
        assert table.api("GET", "/audit?action=bet_resolve", role="chef")[1][0]["after"]["action"] == "refund"

        page.locator("#croupier").fill("Marie")
        page.locator("#f-croupier button").click()
        page.wait_for_function("() => document.getElementById('t-croupier').textContent.includes('Marie')")
        assert table.api("GET", "/state")[1]["table"]["croupier"] == "Marie"

        spin = int(games.nth(0).locator("td").nth(0).inner_text())
        games.nth(0).locator("button").click()
        page.wait_for_selector("#s-evidence:not([hidden])")
        assert page.locator("#ev-title").inner_text().startswith(f"Coup {spin} — ")
        said = page.locator("#evidence .timeline").inner_text()
        assert "Lancer : cylindre sens" in said and "Rien ne va plus après" in said and "Numéro" in said
        assert not page.locator("pre.raw").is_visible()                     # the frames: behind the toggle
        page.locator("details.technical summary").click()
        raw = page.locator("pre.raw").inner_text()
        assert '"ev":"launch"' in raw and "trame " in raw
        assert overflows(page, PANELS, scroll_y=True) == []                  # the hex wrapped, not cut off

        page.evaluate("""() => { const g = document.getElementById('games'); new MutationObserver(() => {
            if (g.querySelectorAll('tr').length === 2 && !window.__row) window.__row = Date.now(); })
            .observe(g, {childList: true}); }""")
        n = len(table.settled())
        table.play(1)
        settled_at = table.wait_results(n + 1)[-1][2]
        page.wait_for_function("() => document.querySelectorAll('#games tr').length === 2")
        update_ms = page.evaluate("window.__row") - settled_at * 1000

        # that game's recall: bo's and cy's bets with their outcome, the winners in the paying order
        new = table.settled()[-1][0]
        recall = table.api("GET", f"/spins/{new}", role="chef")[1]
        games.nth(0).locator("button").click()
        page.wait_for_function("n => document.getElementById('ev-title').textContent.startsWith('Coup ' + n + ' ')", arg=new)
        order = [p["id"] for p in recall["settlement"]["payment_order"]]
        assert page.locator("#ev-payments tbody tr").evaluate_all("rs => rs.map((r) => r.dataset.bet)") == order
        rows = {r.get_attribute("data-bet"): r.inner_text() for r in page.locator("#ev-bets tbody tr").all()}
        assert len(rows) == len(recall["bets"]) >= 3
        for bet in recall["bets"]:
            want = {"won": "gagne", "lost": "perd", "imprisoned": "en prison"}.get(bet["result"]["outcome"], "")
            assert bet["result"]["label"] in rows[bet["id"]] and want in rows[bet["id"]], rows
        shot(page, "pit_after", full=True)
        assert overflows(page, PANELS, scroll_y=True) == []

        page.once("dialog", lambda d: d.accept())                                # "Fermer la table ?"
        page.locator("#b-close").click()
        page.wait_for_function("() => document.getElementById('t-open').textContent === 'fermée'")
        assert table.api("GET", "/state")[1]["table"]["phase"] == "closed"
        page.locator("#b-open").click()
        page.wait_for_function("() => document.getElementById('t-open').textContent.startsWith('ouverte')")
        # the croupier's rien ne va plus (issue 33): no bet from then, whatever the wheel says
        page.wait_for_selector("#b-call", state="visible")
        page.locator("#b-call").click()
        page.wait_for_selector("#b-call", state="hidden")
        assert table.api("GET", "/state")[1]["table"]["phase"] == "no_more_bets"
        print(f"\npit: load {load_ms:.0f} ms; settlement to the new game's row on the page {update_ms:.0f} ms")
        b.close()


def test_each_token_sees_what_its_role_may_and_void_spins_have_their_place(tmp_path):
    """A display token on the pit: the table and its last games, no bet, no alert, no control, and
    not one request refused; a croupier: the bets and the recall, no control. The last games list a
    void spin in its place with its reason. Numbers sit right-aligned under right-aligned headers."""
    t = Table(tmp_path, pause=0.2, speed=60.0).start()
    try:
        t.board.void_rate = 0.5
        t.play(8)
        t.wait(lambda: t.board.spins >= 8, "8 spins", 120)
        voids = [r["spin"] for r in t.daemon.j.query("SELECT spin FROM events WHERE wheel='T1' AND ev='void'")]
        assert voids, "no void in 8 spins at a rate of one in two"
        with pw.sync_playwright() as p:
            b = browser(p)
            for role, shown, hidden in (("display", ["#s-money", "#s-games"], ["#s-bets", "#s-alerts", "#s-held", "#b-close",
                                                                               "#f-croupier", "#games button"]),
                                        ("croupier", ["#s-bets", "#s-held", "#games button"], ["#s-alerts", "#b-close",
                                                                                               "#f-croupier"])):
                page = b.new_page(viewport={"width": 1024, "height": 768}, bypass_csp=True)
                refused = []
                page.on("response", lambda r: refused.append(r.url) if r.status in (401, 403) else None)
                page.goto(t.base + f"/pit#token={t.tokens[role]}")
                page.wait_for_selector("body[data-loaded]")
                page.wait_for_timeout(1500)                         # the stream and a refresh or two
                for sel in shown:
                    assert page.locator(sel).first.is_visible(), (role, sel)
                for sel in hidden:
                    assert not page.locator(sel).first.is_visible(), (role, sel)
                assert refused == [], (role, refused)
                assert page.locator("#error").inner_text() == ""
                assert f"({'afficheur' if role == 'display' else 'croupier'})" in page.locator("#role-note").inner_text()
                shot(page, f"pit_{role}", full=True)
                assert overflows(page, PANELS, scroll_y=True) == []
                page.close()
            page = b.new_page(viewport={"width": 1024, "height": 768}, bypass_csp=True)
            page.goto(t.base + f"/pit#token={t.tokens['chef']}")
            page.wait_for_selector("body[data-loaded]")
            row = page.locator(f"#games tr[data-spin='{voids[-1]}']")
            assert "coup nul : " in row.inner_text(), row.inner_text()
            spins = [int(x) for x in page.locator("#games tr td:first-child").all_inner_texts()]
            assert spins == sorted(spins, reverse=True) and spins == list(range(spins[0], spins[0] - len(spins), -1))
            # a number's right edge on its header's right edge, in every table of figures
            for table in ("#s-money", "#s-games"):
                edges = page.locator(f"{table} th.n").evaluate_all("es => es.map((e) => [e.cellIndex, Math.round(e.getBoundingClientRect().right)])")
                for col, right in edges:
                    cells = page.locator(f"{table} tbody tr:not(.void) td.n").evaluate_all(
                        "(es, c) => es.filter((e) => e.cellIndex === c).map((e) => Math.round(e.getBoundingClientRect().right))", col)
                    assert cells and all(abs(c - right) <= 1 for c in cells), (table, col, right, cells)
            b.close()
    finally:
        t.close()
