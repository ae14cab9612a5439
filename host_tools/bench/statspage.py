"""The statistics page for a day of play: `make bench ARGS="statspage [--games 1000] [--runs 3]"`.

Writes a journal of GAMES games (host_tools/stats/synth.py: one every 48 s, three croupiers, the
daemon's own tables), serves it with the table app (the daemon's HTTP app on uvicorn, no wheel),
and measures what a chef waits for at /stats:

- the analysis (`GET /stats/analysis`): the first after a new game (the journal read and every test
  computed), then again unchanged (kept);
- in Chromium (playwright on /usr/bin/chromium): the page reloaded after a new game (the analysis
  computed again) until its charts are drawn (from that one analysis, in the browser), and the
  page's own time from its request to the last chart;
- for comparison, the same charts drawn as PNG on the table host by matplotlib (what the page
  fetched before, one request a chart), and the PDF report of that analysis (made when asked).

Each figure is the median of RUNS. On a machine shared with other work the absolute times move
with its load; the PNG figure, measured in the same run, is the comparison. Writes
bench/out/statspage.json.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

OUT = Path("bench/out/statspage.json")
GOAL_S = 1.0


def add_arguments(p):
    p.add_argument("--games", type=int, default=1000, help="games in the journal (default 1000: a day of play)")
    p.add_argument("--runs", type=int, default=3, help="times each figure is measured (default 3, the median kept)")
    p.add_argument("--out", default=str(OUT), help="the JSON of the figures (default bench/out/statspage.json)")
    p.add_argument("--chromium", default=os.environ.get("CYLINDRE_CHROMIUM", "/usr/bin/chromium"))


def _get(url, token, timeout=120):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


def run(args) -> int:
    from host_tools.stats import report, synth
    from host_tools.table.api.app import create_app
    from host_tools.table.api.server import server
    from host_tools.table.daemon.host import TableHost

    work = Path(tempfile.mkdtemp(prefix="cylindre-statspage-"))
    journal = work / "journal.sqlite"
    synth.write_journal(journal, synth.play(args.games, seed=1))

    class NoPort:
        url, s = "bench (no wheel)", None

        def open(self):
            return False

        def close(self):
            pass

        def write(self, data):
            pass

    host = TableHost.build(NoPort(), bytes(32), str(journal))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = "http://127.0.0.1:%d" % sock.getsockname()[1]
    app = create_app(host, {"http": base[7:]})
    token = host.tokens.add("bench-chef", "chef")
    srv = server(app)
    threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not srv.started:
        time.sleep(0.05)
    pit = app.state.pit
    fig = {"games": args.games, "runs": args.runs}
    try:
        first, kept = [], []
        for _ in range(args.runs):
            with pit._stats_lock:
                pit._snapshots.clear()                  # as after a new game: computed again
            t = time.perf_counter()
            a = json.loads(_get(base + "/stats/analysis", token))
            first.append(time.perf_counter() - t)
            t = time.perf_counter()
            _get(base + "/stats/analysis", token)
            kept.append(time.perf_counter() - t)
        assert a["games"] == args.games, a["games"]
        fig["analysis_first_s"] = statistics.median(first)
        fig["analysis_kept_s"] = statistics.median(kept)
        fig.update(_browser(args, base, token, pit))
        # the charts as PNG on the table host (the way before), and the report: same analysis
        png, pdf = [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                t = time.perf_counter()
                for name, f in report.figures(a):
                    f.savefig(Path(d) / f"{name}.png", dpi=130)
                png.append(time.perf_counter() - t)
                from host_tools.stats import pdf as P
                t = time.perf_counter()
                P.write(a, report.figures(a), Path(d) / "report.pdf", casino="Casino", table="Table 1")
                pdf.append(time.perf_counter() - t)
        fig["png_on_host_s"] = statistics.median(png)
        fig["pdf_s"] = statistics.median(pdf)
    finally:
        srv.should_exit = True
        pit.close()
        host.events.close()
        host.d.j.close()
    fig["goal_s"] = GOAL_S
    fig["goal_met"] = fig.get("charts_drawn_s") is not None and fig["charts_drawn_s"] < GOAL_S
    print(f"statistics page, {args.games:,} games (median of {args.runs}):")
    print(f"  analysis: first {fig['analysis_first_s']:.3f} s, kept {fig['analysis_kept_s'] * 1000:.1f} ms")
    if fig.get("charts_drawn_s") is not None:
        print(f"  Chromium: page reloaded after a new game to {fig['charts']} charts drawn {fig['charts_drawn_s']:.3f} s "
              f"(the page's own request to last chart {fig['page_drawn_ms']:.0f} ms)")
    else:
        print(f"  Chromium: not measured ({fig.get('browser_skipped')})")
    print(f"  the same charts as PNG on the table host (matplotlib): {fig['png_on_host_s']:.2f} s; "
          f"the PDF report: {fig['pdf_s']:.2f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fig, indent=1))
    return 0


def _browser(args, base, token, pit) -> dict:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"charts_drawn_s": None, "browser_skipped": "playwright is not installed"}
    if not Path(args.chromium).is_file():
        return {"charts_drawn_s": None, "browser_skipped": f"{args.chromium} is missing (make browser)"}
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    drawn, own, charts = [], [], 0
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=args.chromium, args=flags, headless=True)
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(base + "/stats#token=" + token)              # the token kept by the tab
        page.wait_for_selector("body[data-loaded]", timeout=120000)
        for _ in range(args.runs):
            with pit._stats_lock:
                pit._snapshots.clear()                  # as after a new game: the analysis computed again
            t = time.perf_counter()
            page.reload()
            page.wait_for_selector("body[data-loaded]", timeout=120000)
            drawn.append(time.perf_counter() - t)
            own.append(float(page.locator("body").get_attribute("data-drawn-ms")))
            charts = page.locator("#plots svg.chart").count()
        b.close()
    return {"charts_drawn_s": statistics.median(drawn), "page_drawn_ms": statistics.median(own), "charts": charts}


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    f = figures
    L = ["## The statistics page for a day of play (`statspage`)", "",
         f"A journal of {f['games']:,} games (one every 48 s, three croupiers) served by the table app; the page "
         f"`/stats` opened in Chromium (`make bench ARGS='statspage'`, median of {f['runs']}).", "",
         "| what | time |", "|---|---|",
         f"| the analysis, first after a new game (`GET /stats/analysis`) | {f['analysis_first_s']:.3f} s |",
         f"| the analysis again, the journal unchanged | {f['analysis_kept_s'] * 1000:.1f} ms |"]
    if f.get("charts_drawn_s") is not None:
        L += [f"| the page reloaded after a new game until its {f['charts']} charts are drawn (the analysis computed again, the charts in the browser) | "
              f"{f['charts_drawn_s']:.3f} s (goal under {f['goal_s']:.0f} s: {'met' if f['goal_met'] else 'missed'}) |"]
    L += [f"| the same charts drawn as PNG on the table host (matplotlib, for comparison) | {f['png_on_host_s']:.2f} s |",
          f"| the PDF report of that analysis, made when asked | {f['pdf_s']:.2f} s |"]
    return "\n".join(L) + "\n"
