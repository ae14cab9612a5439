"""The commands the docs show a newcomer, run as they are written: the README's tour and the
operators' quick start. A fenced block after `<!-- run: NAME -->` is run; in the tour a line
`$ command` is a command and the lines under it what it prints, which the real output must match
(the same fields; the ids, tokens, ports and amounts of another run aside)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from host_tools.floor.natsrv import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow


def blocks(page: Path, name: str) -> list[str]:
    """The fenced blocks of `page` marked `<!-- run: name -->`, in order."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"<!-- run: " + re.escape(name) + r" -->\n```[a-z]*\n(.*?)```", text, re.S)
    assert found, f"no block marked run: {name} in {page.relative_to(ROOT)}"
    return found


def commands(block: str) -> list[tuple[str, list[str]]]:
    """[(command, the lines shown under it)] of a block of `$ ` lines; continuations joined."""
    out, lines = [], block.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), lines[i]
        cmd = lines[i][2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        shown = []
        i += 1
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((cmd, shown))
    return out


def needs(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"the docs' commands use {', '.join(missing)}, not installed here")


def same_fields(shown, real, where):
    """`real` has the shape `shown` has: the same keys for an object (a settled bet's result may
    lack what only a win has), the same kind of value for the rest."""
    if isinstance(shown, dict):
        assert isinstance(real, dict), (where, real)
        assert set(real) <= set(shown), (where, set(real) - set(shown))
        for k in set(real) & set(shown):
            if shown[k] is not None and real[k] is not None:
                same_fields(shown[k], real[k], f"{where}.{k}")
    elif isinstance(shown, list):
        assert isinstance(real, list), (where, real)
        if shown and real:
            same_fields(shown[0], real[0], f"{where}[0]")
    else:
        assert type(real) is type(shown) or {type(real), type(shown)} <= {int, float}, (where, shown, real)


def pattern(line: str) -> str:
    """A shown line as a regex: numbers, tokens, addresses and folders of another run left open."""
    line = re.sub(r"cyl_\S*…", "\x00TOKEN\x00", line)
    line = re.sub(r"var/demo/\S+", "\x00PATH\x00", line)
    rx = re.escape(line)
    rx = re.sub(r"\d+", r"\\d+", rx)
    return rx.replace("\x00TOKEN\x00", r"cyl_[A-Za-z0-9_-]+").replace("\x00PATH\x00", r"\S+")


class Shell:
    """A bash the tour's commands run in, one after the other, with the variables they set."""

    def __init__(self):
        self.env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}

    def run(self, cmd: str, check: bool = True) -> str | None:
        """What `cmd` prints; None when it failed and `check` is off."""
        m = re.match(r"(\w+)=(\S+)\s*(#.*)?$", cmd)
        if m:
            self.env[m.group(1)] = m.group(2)
            return ""
        done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True,
                              env=self.env, cwd=ROOT, timeout=30)
        if done.returncode and not check:
            return None
        assert done.returncode == 0, (cmd, done.stdout, done.stderr)
        return done.stdout


def test_the_readme_tour(tmp_path):
    needs("make", "curl", "jq")
    readme = ROOT / "README.md"
    demo, bets, recall, stats = blocks(readme, "tour")
    (start, shown_start), = commands(demo)
    assert start == "make demo ARGS=--linger"
    # as written, but shorter (8 spins: spin 5 is recalled) and its files in a scratch folder; the
    # venv is this one, and `make` does not set it up again
    work = tmp_path / "demo"
    argv = ["make", "--no-print-directory", "-o", ".venv/.installed", "demo", f"ARGS=--linger --workdir {work}",
            "SPINS=8", f"BIN={BIN}"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        head = []
        deadline = time.monotonic() + 120
        while not any(line.lstrip().startswith("statistiques") for line in head):
            line = proc.stdout.readline()
            assert line and time.monotonic() < deadline, "the demo stopped before its pages:\n" + "".join(head)
            head.append(line)
        printed = [line.rstrip("\n") for line in head if not line.startswith(("make", "/"))]
        for want in shown_start:
            assert any(re.fullmatch(pattern(want), got) for got in printed), (want, printed)
        base = re.search(r"http://127\.0\.0\.1:\d+", "".join(head)).group(0)
        chef = re.search(r"chef de table\s+\S+#token=(\S+)", "".join(head)).group(1)

        sh = Shell()
        ids = {}
        for cmd, shown in commands(bets):
            cmd = cmd.replace("http://127.0.0.1:40123", base)
            if cmd.startswith("PIT="):
                cmd = "PIT=" + chef
            out = sh.run(cmd)
            if shown:
                want, got = json.loads("\n".join(shown)), json.loads(out)
                same_fields(want, got, cmd[:40])
                assert got["status"] == want["status"] == "open"
                ids[want["id"]] = got["id"]
        assert len(ids) == 2

        for cmd, shown in commands(recall):
            cmd = cmd.replace("http://127.0.0.1:40123", base)
            for doc_id, real_id in ids.items():
                cmd = cmd.replace(doc_id, real_id)
            want = json.loads("\n".join(shown))
            deadline = time.monotonic() + 90           # until the bet's spin, and spin 5, are settled
            while True:
                out = sh.run(cmd, check=False)          # spin 5 not played yet: a 404, which jq refuses
                got = json.loads(out) if out else None
                settled = got is not None and (got.get("number") is not None if "spin" in want else True)
                if settled:
                    break
                assert time.monotonic() < deadline, (cmd, out)
                time.sleep(0.5)
            same_fields(want, got, cmd[:40])
            if "spin" in want:                          # the demo's seed: spin 5 is 22 on every run
                assert (got["spin"], got["number"], got["events"]) == (want["spin"], want["number"], want["events"])
                assert want["said"][1] in got["said"]
            else:
                assert got["outcome"] in ("won", "lost") and got["staked"] == want["staked"]

        os.killpg(proc.pid, signal.SIGINT)              # Ctrl-C, to make and the demo alike
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # the demo's last line is the statistics command, as the README shows it
    (shown_stats, _), = commands(stats)
    last = [line.strip() for line in rest.splitlines() if "cylindre stats --journal" in line][-1]
    rx = re.escape(shown_stats).replace("JOURNAL", r"(\S+)").replace("DIR", r"(\S+)")
    m = re.fullmatch(rx, last)
    assert m, (shown_stats, last)
    out = Shell().run(last.replace(".venv/bin/", f"{BIN}/", 1))
    assert "pas assez de coups" in out.lower()
    assert (Path(m.group(2)) / "report.pdf").stat().st_size > 0


def test_the_operators_quick_start(tmp_path):
    needs("curl", "sqlite3")
    page = ROOT / "docs" / "operators" / "quick-start.md"
    script, = blocks(page, "quick-start")
    port = free_port()
    assert "127.0.0.1:8737" in script
    script = script.replace("127.0.0.1:8737", f"127.0.0.1:{port}")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))      # the page's `.venv/bin/cylindre`
    proc = subprocess.Popen(["bash", "-e", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)             # the wheel or daemon, if a line failed
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, (out[-2000:], err[-2000:])
    assert re.search(r"^liaison\s+ÉTABLIE sur /dev/pts/\d+", out, re.M), out
    shown = json.loads(re.search(r'^\s*(\{"id":"B000001".*\})$', page.read_text(encoding="utf-8"), re.M).group(1))
    placed = json.loads(next(line for line in out.splitlines() if line.startswith('{"id"')))
    same_fields(shown, placed, "POST /bets")
    assert placed == shown                                   # a new journal: the same first bet, word for word
    assert "aucun coup dans ce journal" in out.lower()         # the copy, made before the first spin ended
    assert (tmp_path / "var" / "journal-copy.sqlite").stat().st_size > 0
