"""The production broker on one machine: three nats-servers, each with the whole node configuration
of packaging/nats/nats-server.conf (client port TLS, the cluster's routes TLS with certificates
checked both ways, the accounts of `cylindre floor-creds` when given), on local ports with a CA
and certificates made for the occasion. The tests' and the bench's cluster (natsrv.py runs each
node); `kill(i)` is a node's crash, `restart(i)` brings it back with its store.
"""

from __future__ import annotations

import re
import ssl
import subprocess
import tempfile
from pathlib import Path

from . import natsrv

PACKAGING = Path(__file__).resolve().parents[2] / "packaging" / "nats" / "nats-server.conf"


def make_tls(d: Path) -> Path:
    """A CA and certificates for 127.0.0.1 signed by it (openssl), as a casino's IT would make:
    `server.pem` for the client port, `route.pem` for the cluster's routes (no extended key usage:
    good for both ends of a route). Returns the CA's path."""
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=casino CA",
        "-keyout", str(d / "ca-key.pem"), "-out", str(d / "ca.pem"))
    (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "route"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", str(d / f"{name}-key.pem"),
            "-out", str(d / f"{name}.csr"))
        run("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca-key.pem"),
            "-CAcreateserial", "-days", "2", "-extfile", str(d / "san.cnf"), "-out", str(d / f"{name}.pem"))
    return d / "ca.pem"


def node_config(tls: Path, route_port: int, routes: list[int], accounts: str | None = None) -> str:
    """The shipped node configuration but for what natsrv sets (name, ports, store): its client TLS
    block, its cluster block on this machine's ports and certificates, its accounts (or none: an
    open broker) and its limits."""
    text = PACKAGING.read_text()
    client_tls = re.search(r"(?ms)^tls \{.*?^\}$", text).group(0)
    cluster = re.search(r"(?ms)^cluster \{.*?^\}$", text).group(0)
    cluster = cluster.replace("host: 0.0.0.0", "host: 127.0.0.1")
    cluster = re.sub(r"port: 6222", f"port: {route_port}", cluster)
    cluster = re.sub(r"(?s)routes: \[.*?\]", "routes: [%s]" % ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes),
                     cluster)
    limits = "\n".join(line for line in text.splitlines() if line.startswith(("max_payload", "write_deadline")))
    out = "\n".join([client_tls, cluster, accounts or "", limits])
    return out.replace("/etc/nats/tls", str(tls))


class Cluster:
    """Three nodes (`size`) of the shipped configuration under `work`."""

    def __init__(self, work=None, size: int = 3, accounts: str | None = None):
        self.work = Path(work or tempfile.mkdtemp(prefix="cylindre-cluster-"))
        self.tls = self.work / "tls"
        self.ca = make_tls(self.tls)
        routes = [natsrv.free_port() for _ in range(size)]
        self.nodes = [natsrv.Server(self.work / f"js{i}", scheme="tls",
                                    config_extra=node_config(self.tls, routes[i], routes, accounts))
                      for i in range(size)]

    @property
    def url(self) -> str:
        """Every node, comma-separated (`cylindre floor --nats`, `cylindre daemon --nats`)."""
        return ",".join(n.url for n in self.nodes)

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def start(self, timeout: float = 60.0) -> "Cluster":
        for n in self.nodes:
            n.start(wait=False)
        for n in self.nodes:
            n.wait_healthy(timeout)
        return self

    def node_named(self, server_name: str) -> int | None:
        """The index of the node whose server name (natsrv's `cylindre_test_<port>`) is given."""
        for i, n in enumerate(self.nodes):
            if server_name == f"cylindre_test_{n.port}":
                return i
        return None

    async def leader(self, js, stream: str) -> int | None:
        """The node leading `stream` now (None while it has none)."""
        info = await js.stream_info(stream)
        name = getattr(getattr(info, "cluster", None), "leader", None)
        return self.node_named(name) if name else None

    def ask(self, what, **connect):
        """Run `what(js)` on a connection to the cluster (`connect`: a user's credentials), its result."""
        import asyncio

        import nats

        async def go():
            nc = await nats.connect(self.url.split(","), tls=self.ssl_context(), connect_timeout=2,
                                    max_reconnect_attempts=3, **connect)
            try:
                return await what(nc.jetstream(timeout=3))
            finally:
                await nc.close()
        return asyncio.run(go())

    def elected(self, stream: str, timeout: float = 30.0, **connect) -> int | None:
        """The node leading `stream`, once it has one (None after `timeout`: an election too long)."""
        import asyncio

        async def poll(js):
            end = asyncio.get_running_loop().time() + timeout
            while asyncio.get_running_loop().time() < end:
                try:
                    i = await self.leader(js, stream)
                    if i is not None:
                        return i
                except Exception:                      # noqa: BLE001 - electing, or its node just died
                    pass
                await asyncio.sleep(0.2)
            return None
        return self.ask(poll, **connect)

    def replicas(self, *streams, **connect) -> list[int]:
        async def read(js):
            return [(await js.stream_info(n)).config.num_replicas for n in streams]
        return self.ask(read, **connect)

    def kill(self, i: int) -> None:
        self.nodes[i].kill()

    def restart(self, i: int, timeout: float = 60.0) -> None:
        self.nodes[i].start(wait=False)
        self.nodes[i].wait_healthy(timeout)

    def close(self) -> None:
        for n in self.nodes:
            n.close()
