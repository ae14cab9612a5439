"""The daemon's floor settings: checked at start, a credentials or key file open to others refused."""

import argparse
import json

import pytest

from host_tools import cli
from host_tools.table import config
from host_tools.table.daemon.cli import add_arguments, settings, start_floor


def parse(*argv):
    p = argparse.ArgumentParser()
    add_arguments(p)
    return settings(p.parse_args(list(argv)))


def test_floor_flags_and_their_checks(tmp_path):
    c = parse("--nats", "nats://127.0.0.1:4222", "--site", "PARIS", "--wheel", "T7", "--wheel-serial", "E661")
    assert (c["nats"], c["site"], c["wheel"], c["wheel_serial"]) == ("nats://127.0.0.1:4222", "PARIS", "T7", "E661")
    assert parse()["nats"] is None and parse()["site"] == "casino"
    for bad in (("--nats", "http://x"), ("--nats", "nats://x", "--site", "PAR.IS"),
                ("--nats", "nats://x", "--wheel", "T 1")):
        with pytest.raises(config.ConfigError):
            parse(*bad)
    f = tmp_path / "table.toml"
    f.write_text('nats = "tls://nats1:4222"\nsite = "LYON"\nfloor_key = "k"\n')
    c = config.merge(config.load(f), {})
    assert (c["nats"], c["site"], c["floor_key"]) == ("tls://nats1:4222", "LYON", "k")


def test_start_floor_refuses_files_others_may_read(tmp_path, capsys):
    from host_tools.floor.link.creds import generate
    made = generate("PARIS", ["T1"], tmp_path / "c")
    c = parse("--nats", "nats://127.0.0.1:1", "--site", "PARIS", "--nats-creds", str(made["tables"]["T1"]),
              "--floor-key", str(made["key"]))
    made["key"].chmod(0o644)
    assert start_floor(object(), c) is None
    assert "chmod 600" in capsys.readouterr().err
    made["key"].chmod(0o600)
    made["tables"]["T1"].chmod(0o640)
    assert start_floor(object(), c) is None
    assert "credentials file" in capsys.readouterr().err


def test_floor_creds_command(tmp_path, capsys):
    assert cli.main(["floor-creds", "--site", "PARIS", "--tables", "T1,T2", "--out", str(tmp_path / "o"),
                     "--url", "tls://nats1:4222"]) == 0
    out = capsys.readouterr().out
    assert "T2.creds.json" in out and "accounts.conf" in out
    assert json.loads((tmp_path / "o" / "T2.creds.json").read_text())["url"] == "tls://nats1:4222"
    assert cli.main(["floor-creds", "--site", "PARIS", "--tables", "T1,T1", "--out", str(tmp_path / "p")]) == 2
