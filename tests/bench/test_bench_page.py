"""docs/benchmarks.md is written by `make bench` from its own run: after two cheap parts ran in a
scratch folder, the page has the machine, each part's section from its own `markdown()` with the
command that reproduces it, a generic table for a part without one, and lists what did not run."""

import json
import re

from host_tools.bench import __main__ as bench
from host_tools.bench import page


def test_make_bench_writes_the_page_from_its_own_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert bench.main(["settle", "link", "--bets", "300", "--repeats", "3", "--micropython", "0",
                       "--durable-spins", "0", "--no-before", "--frames", "300", "--no-micropython"]) == 0
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert text.startswith("# Benchmarks\n") and "do not edit by hand" in text
    m = page.machine()
    assert f"| cores | {m['cores']} |" in text and f"CPython {m['python']}" in text
    settle = json.loads((tmp_path / "bench" / "out" / "settle.json").read_text())
    assert "## Settlement (`settle`)" in text and f"One spin of {settle['bets_per_spin']:,} mixed" in text
    assert f"{settle['after_median_spin_s_settle_compiled'] * 1e3:,.2f} ms" in text
    link = json.loads((tmp_path / "bench" / "out" / "link.json").read_text())
    assert f"| {link['decoder']['decode_verify_fps']:,} |" in text
    # each section says how it was measured: that part's options only, date, machine load
    assert "Measured by `make bench ARGS='settle --bets 300 --repeats 3 --micropython 0 --durable-spins 0 --no-before'`" in text
    assert "Measured by `make bench ARGS='link --frames 300 --no-micropython'`" in text
    assert re.search(r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    missing = [p for p in bench.PARTS if p not in ("settle", "link")]
    assert "Not measured in this checkout's `bench/out/`: " + ", ".join(f"`{p}`" for p in missing) in text
    # a part that defines no markdown() gets the generic table of its figures
    (tmp_path / "bench" / "out" / "custom.json").write_text(json.dumps({"rate": {"bets_per_s": 1234.5}, "ok": True}))
    again = page.render(tmp_path / "bench" / "out", bench.PARTS)
    assert "## custom" in again and "| `rate.bets_per_s` | 1,234 |" in again and "| `ok` | yes |" in again


def test_a_json_of_another_shape_falls_back_to_the_generic_table(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "link.json").write_text(json.dumps({"frames_per_s": 12345}))      # not what link.markdown reads
    text = page.render(out, ["link"])
    assert "could not read its figures: KeyError" in text and "| `frames_per_s` | 12,345 |" in text


def test_a_part_run_with_its_figures_elsewhere_leaves_the_page_as_it_was(tmp_path, monkeypatch):
    """Before: the run record went to bench/out whatever `--out` said, so the page showed the
    figures of one run under the command line of another."""
    monkeypatch.chdir(tmp_path)
    assert bench.main(["link", "--frames", "300", "--no-micropython"]) == 0
    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    record = (tmp_path / "bench" / "out" / "link.run.json").read_text()
    assert bench.main(["link", "--frames", "200", "--no-micropython", "--out", str(tmp_path / "elsewhere.json")]) == 0
    assert json.loads((tmp_path / "elsewhere.json").read_text())
    assert (tmp_path / "docs" / "benchmarks.md").read_text() == text
    assert (tmp_path / "bench" / "out" / "link.run.json").read_text() == record


def test_a_part_it_does_not_know_is_refused_with_the_list_of_parts(tmp_path, monkeypatch, capsys):
    """`make bench ARGS=NAME` with a name it does not know runs nothing (before: every part, the
    emulated chip included, 25 minutes and more) and says which parts there are."""
    monkeypatch.chdir(tmp_path)
    for argv in (["stadum"], ["settle", "stadum"], ["--no-before", "setle"], ["settle", "--bets", "300", "api2"]):
        assert bench.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "unknown part" in err and ", ".join(bench.PARTS) in err
    assert not (tmp_path / "bench").exists() and not (tmp_path / "docs").exists()
    assert bench.unknown_parts(["settle", "--bets", "300", "--before", "main"]) == []


def test_an_option_no_named_part_takes_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    """`make bench ARGS='stadium --out X'`: stadium has no --out. Before, the option was dropped
    without a word, the part ran, and the page recorded the run as if it had been obeyed."""
    monkeypatch.chdir(tmp_path)
    for argv in (["stadium", "--out", "x"], ["link", "--frame", "200"], ["link", "rest", "--spin=3"]):
        assert bench.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "option " + argv[-2 if "=" not in argv[-1] else -1].split("=")[0] in err and "nothing run" in err
    assert not (tmp_path / "bench").exists() and not (tmp_path / "docs").exists()
    from host_tools.bench import link, rest
    parsers = [bench.part_parser("link", link), bench.part_parser("rest", rest)]
    assert bench.unknown_options(["--frames", "9", "--spins=3", "--out", "o", "-h"], parsers) == []
    assert bench.unknown_options(["--frames", "-3", "--nope"], parsers) == ["--nope"]


def test_a_part_run_alone_keeps_the_other_sections_as_they_were_measured(tmp_path):
    """`make bench ARGS=link` on a clone with an empty `bench/out/` (it is not committed) rewrites
    the link's section and keeps every other section of the page: before, they were dropped."""
    out, docs = tmp_path / "out", tmp_path / "benchmarks.md"
    out.mkdir()
    docs.write_text("# Benchmarks\n\nheader\n\n## Settlement (`settle`)\n\n| a | b |\n\n### detail\n\nkept 42\n\n"
                    "*Measured by `make bench ARGS='settle --bets 300'` on 2026-01-02 03:04 UTC (1 s); 2 cores*\n\n"
                    "## Serial link (`link`)\n\nold link figures 7\n\n*Measured by `make bench ARGS='link'` on 2025-01-01 00:00 UTC*\n")
    (out / "link.json").write_text(json.dumps({"frames_per_s": 99}))
    page.write(["settle", "link", "rest"], out=out, page=docs)
    text = docs.read_text()
    settle = text[text.index("<!-- part: settle -->"):text.index("<!-- part: link -->")]
    assert "## Settlement (`settle`)" in settle and "### detail" in settle and "kept 42" in settle
    assert "old link figures 7" not in text and "| `frames_per_s` | 99 |" in text
    assert "Not measured in this checkout's `bench/out/`: `rest`" in text
    assert "| last run | 2026-01-02 03:04 UTC |" in text
    # the settle section kept names no CPU: the header does not give it this machine's
    assert "a section whose footer names another CPU, or none, ran on another machine" in text
    # written again with nothing new: the same page (the marks, not the headings, cut the sections)
    (out / "link.json").unlink()
    page.write(["settle", "link", "rest"], out=out, page=docs)
    assert docs.read_text() == text


def test_another_parts_option_is_not_taken_as_the_prefix_of_this_ones():
    """`make bench ARGS='link floor --out X'`: `--out` is link's; the floor part must not read it
    as its `--outage-s` (argparse's abbreviations), nor fail on it."""
    from host_tools.bench import floor, link
    args, unknown = bench.part_parser("floor", floor).parse_known_args(["--out", "x.json"])
    assert unknown == ["--out", "x.json"] and args.outage_s == 60.0
    args, unknown = bench.part_parser("link", link).parse_known_args(["--out", "x.json"])
    assert args.out == "x.json" and unknown == []


def test_a_second_bench_while_one_runs_is_refused_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Two benches at once wrote bench/out and docs/benchmarks.md over each other: the second
    is refused, naming who holds the lock; a part run with its figures elsewhere still runs,
    and once the first is over the lock is free again."""
    import subprocess
    import sys
    monkeypatch.chdir(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from host_tools.bench import __main__ as b\n"
                               "f = b.hold_the_page(); print('held' if not isinstance(f, str) else f, flush=True)\n"
                               "sys.stdin.read()"],
                              cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)})
    try:
        assert holder.stdout.readline().strip() == "held"
        assert bench.main(["link", "--frames", "200", "--no-micropython"]) == 2
        err = capsys.readouterr().err
        assert "another bench is running in bench/out (pid %d, since " % holder.pid in err and "nothing run" in err
        assert not (tmp_path / "docs").exists() and not (tmp_path / "bench" / "out" / "link.json").exists()
        assert bench.main(["link", "--frames", "200", "--no-micropython", "--out", str(tmp_path / "x.json")]) == 0
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    assert bench.main(["link", "--frames", "200", "--no-micropython"]) == 0
    assert (tmp_path / "bench" / "out" / "link.json").exists() and (tmp_path / "docs" / "benchmarks.md").exists()
    assert bench.main(["link", "--frames", "200", "--no-micropython"]) == 0      # this process let it go
