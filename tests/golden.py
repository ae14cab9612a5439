"""Golden event streams: the controller's behaviour held byte for byte across a refactoring.

Simulated feeds (fixed seeds; clean, --imperfect, --noisy; every fault scenario; both boards)
go through `cylindre replay` on CPython and on MicroPython, status events included; the streams
are kept and compared, byte for byte, with those of another run.

    .venv/bin/python tests/golden.py save DIR [--set small|big] [--no-mpy]
    .venv/bin/python tests/golden.py check DIR [--set small|big] [--no-mpy]
    .venv/bin/python tests/golden.py digests            # the small set's digests, as the test keeps them

`save` before a change (or from an older commit's tree: `git archive COMMIT | tar -x -C DIR`, then
DIR/tests/golden.py save), `check` after it: exit 1 and the first differing line of each stream that
moved. The big set (about 300 spins) is the one to run by hand; tests/firmware/test_golden_events.py holds
the small set's digests (tests/data/golden_events.json) and checks them on CPython at every run.
Each case's feed digest is kept too, so a change in the simulator is told apart from one in the
controller (then regenerate the digests with `digests`).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The CLI of this tree, whatever is installed: an older commit's tree (git archive) runs its own code.
CLI = [sys.executable, "-c", "import sys; from host_tools.cli import main; sys.exit(main())"]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "firmware")]))
BOARDS = {"pico": ROOT / "boards" / "pico.json", "3pk": ROOT / "boards" / "pico2-3pockets.json"}


def cases(which):
    """(name, simulate options, replay options) of a set."""
    out = []
    if which == "small":
        for board in ("pico", "3pk"):
            out.append(("%s-noisy-all-s7" % board, ["-n", "6", "--seed", "7", "--noisy", "--scenarios", "all",
                                                    "--fault-every", "2"], board))
            out.append(("%s-clean-s2" % board, ["-n", "3", "--seed", "2"], board))
        return out
    for board in ("pico", "3pk"):
        for seed in (1, 2, 3):
            out.append(("%s-clean-s%d" % (board, seed), ["-n", "12", "--seed", str(seed)], board))
            out.append(("%s-imperfect-s%d" % (board, seed), ["-n", "12", "--seed", str(seed), "--imperfect"], board))
            out.append(("%s-noisy-s%d" % (board, seed), ["-n", "12", "--seed", str(seed), "--noisy"], board))
        for seed in (11, 12):
            out.append(("%s-all-s%d" % (board, seed), ["-n", "24", "--seed", str(seed), "--imperfect",
                                                      "--scenarios", "all", "--fault-every", "2"], board))
            out.append(("%s-noisy-all-s%d" % (board, seed), ["-n", "12", "--seed", str(seed), "--noisy",
                                                            "--scenarios", "all", "--fault-every", "2"], board))
    return out


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def feed(tmp, name, sim, board):
    path = Path(tmp) / (name + ".feed")
    subprocess.run(CLI + ["simulate", *sim, "--board", str(BOARDS[board]), str(path)],
                   check=True, capture_output=True, env=ENV)
    return path


def replay(path, board, mpy):
    cmd = CLI + ["replay", "--board", str(BOARDS[board]), str(path)] + ([] if mpy else ["--cpython"])
    return subprocess.run(cmd, check=True, capture_output=True, env=ENV).stdout


def run(which, mpy):
    """{name: {"feed": sha, "cpython": bytes, "mpy": bytes or None}}"""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, sim, board in cases(which):
            path = feed(tmp, name, sim, board)
            out[name] = {"feed": _sha(path.read_bytes()), "cpython": replay(path, board, False),
                         "mpy": replay(path, board, True) if mpy else None}
            os.unlink(path)
            os.unlink(str(path) + ".truth.jsonl")
    return out


def _first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else b"<end>"
        y = lb[i] if i < len(lb) else b"<end>"
        if x != y:
            return "line %d:\n  was %s\n  now %s" % (i + 1, x.decode(), y.decode())
    return "identical"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("verb", choices=("save", "check", "digests"))
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--set", default="big", choices=("small", "big"))
    ap.add_argument("--no-mpy", action="store_true", help="CPython only")
    a = ap.parse_args(argv)
    if a.verb == "digests":
        got = run("small", False)
        print(json.dumps({k: {"feed": v["feed"], "events": _sha(v["cpython"]),
                              "lines": v["cpython"].count(b"\n")} for k, v in sorted(got.items())},
                         indent=1, sort_keys=True))
        return 0
    if not a.dir:
        ap.error("save and check need a DIR")
    d = Path(a.dir)
    got = run(a.set, not a.no_mpy)
    bad = 0
    spins = 0
    for name, v in sorted(got.items()):
        if v["mpy"] is not None and v["mpy"] != v["cpython"]:
            print("%s: MicroPython differs from CPython, %s" % (name, _first_diff(v["cpython"], v["mpy"])))
            bad += 1
        spins += v["cpython"].count(b'"ev": "launch"')
    if a.verb == "save":
        d.mkdir(parents=True, exist_ok=True)
        for name, v in got.items():
            (d / (name + ".jsonl")).write_bytes(v["cpython"])
            (d / (name + ".feed.sha256")).write_text(v["feed"] + "\n")
        print("saved %d streams (%d launches, %d lines) in %s" % (len(got), spins,
              sum(v["cpython"].count(b"\n") for v in got.values()), d))
        return 1 if bad else 0
    for name, v in sorted(got.items()):
        was_feed = (d / (name + ".feed.sha256")).read_text().strip()
        if was_feed != v["feed"]:
            print("%s: the feed itself changed (the simulator moved): save again before comparing" % name)
            bad += 1
            continue
        was = (d / (name + ".jsonl")).read_bytes()
        if was != v["cpython"]:
            print("%s: %s" % (name, _first_diff(was, v["cpython"])))
            bad += 1
    print("%d streams, %d launches, %d lines: %s" % (len(got), spins,
          sum(v["cpython"].count(b"\n") for v in got.values()),
          "byte-identical%s" % (" on CPython and MicroPython" if not a.no_mpy else " on CPython")
          if not bad else "%d differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
