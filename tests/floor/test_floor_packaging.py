"""The production broker's configuration (packaging/nats) is one nats-server takes, and a table
reaches a broker over TLS with the casino's CA and its own credentials."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from host_tools.floor import natsrv
from host_tools.table.floor.publisher import FloorLink, load_creds
from host_tools.floor.link import creds as K

from apikit import Table
from natskit import make_tls

CONF = Path(__file__).resolve().parents[2] / "packaging" / "nats" / "nats-server.conf"


@pytest.fixture
def etc(tmp_path):
    """packaging/nats/nats-server.conf as installed: /etc/nats in a temporary folder."""
    tls = tmp_path / "tls"
    tls.mkdir()
    make_tls(tls)
    K.generate("PARIS", ["T1"], tmp_path / "creds")
    (tmp_path / "accounts.conf").write_text((tmp_path / "creds" / "accounts.conf").read_text())
    text = CONF.read_text().replace("/etc/nats/tls", str(tls)).replace("/var/lib/nats", str(tmp_path / "var"))
    (tmp_path / "nats-server.conf").write_text(text)
    return tmp_path


def test_the_production_config_is_valid(etc):
    out = subprocess.run([natsrv.binary(), "-c", str(etc / "nats-server.conf"), "-t"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_table_over_tls_with_its_credentials(etc, tmp_path):
    text = (etc / "nats-server.conf").read_text()
    # one node alone: its client TLS block and the accounts as shipped (natsrv sets the ports and
    # the store; the cluster's routes lead nowhere here)
    tls = re.search(r"(?ms)^tls \{.*?^\}$", text).group(0)
    alone = tls + "\n" + (etc / "accounts.conf").read_text()
    srv = natsrv.Server(tmp_path / "js", config_extra=alone, scheme="tls")
    srv.start()
    t = Table(tmp_path / "j.sqlite")
    floor = json.loads((etc / "creds" / "floor.creds.json").read_text())
    try:
        import asyncio
        import ssl
        import nats
        from host_tools.floor.link import stream as S

        ctx = ssl.create_default_context(cafile=str(etc / "tls" / "ca.pem"))

        async def prepare():
            nc = await nats.connect(srv.url, user=floor["user"], password=floor["password"], tls=ctx)
            await S.ensure_stream(nc.jetstream())
            await S.ensure_bucket(nc.jetstream())
            await nc.close()

        async def plain():
            await nats.connect(f"nats://127.0.0.1:{srv.port}", user=floor["user"], password=floor["password"],
                               allow_reconnect=False, connect_timeout=2)
        asyncio.run(prepare())
        with pytest.raises(Exception):          # without TLS and the casino's CA, no connection
            asyncio.run(plain())
        fl = FloorLink(t.host, srv.url, "PARIS", creds=load_creds(etc / "creds" / "T1.creds.json"),
                       tls_ca=str(etc / "tls" / "ca.pem")).start()
        t.feed.spin(1, 17)
        end = time.monotonic() + 20
        while fl.cursor == 0 or fl.backlog:
            assert time.monotonic() < end, fl.status()
            time.sleep(0.02)
        fl.stop()
    finally:
        t.close()
        srv.close()
