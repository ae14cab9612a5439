"""`cylindre` — the command-line entry point. Each subcommand lives in its own module.

A command module exposes `HELP` (one line), `add_arguments(parser)` and `run(args) -> int`.
Only the module of the command that runs is imported: `cylindre daemon --help` never loads the
simulator, and a command whose optional piece is missing says so without breaking the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name: (module, one-line help; the module's HELP says the same, tests/cli/test_install.py checks)
COMMANDS = {
    "settle": ("host_tools.table.game.settle_cli", "settle a JSON session of spins (bets, zero choices, limits) and print the results"),
    "replay": ("host_tools.sim.replay_cli", "replay a sensor feed through the firmware; print its events, one JSON object a line"),
    "simulate": ("host_tools.sim.simulate_cli", "simulate a wheel: write N spins to a sensor feed (and FEED.truth.jsonl beside it)"),
    "daemon": ("host_tools.table.daemon.cli", "run the table host: serial link to the wheel, journal, game flow, HTTP API"),
    "status": ("host_tools.table.daemon.status_cli", "show the link, the wheel and the table of a running daemon"),
    "token": ("host_tools.table.daemon.token_cli", "manage the API's tokens in the journal: add NAME --role ROLE, list, revoke NAME"),
    "demo": ("host_tools.demo.table", "run the whole table on a simulated wheel with simulated players, then print the result"),
    "wheel": ("host_tools.sim.ptywheel", "run a simulated wheel (firmware code on the simulator) on a pseudo-terminal"),
    "stats": ("host_tools.stats.cli", "wheel statistics from a journal: summary, PNG plots and a PDF report"),
    "floor": ("host_tools.floor.cli", "run the casino floor service (every table over NATS, the floor page, reports): serve, token, report, verify"),
    "floor-creds": ("host_tools.floor.link.creds", "write per-table NATS credentials (mode 0600) and the broker's "
                                                  "accounts for a casino floor"),
}


def version() -> str:
    from host_tools import version as _v
    return _v()


def _load(name: str):
    return importlib.import_module(COMMANDS[name][0])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="cylindre", description="French roulette wheel controller and table host.")
    parser.add_argument("--version", action="version", version=f"cylindre {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    module = None
    for name, (_, summary) in COMMANDS.items():
        if name != chosen:
            sub.add_parser(name, help=summary, add_help=False)
            continue
        try:
            module = _load(name)
        except ModuleNotFoundError as exc:
            print(f"cylindre {name}: needs the Python package {exc.name!r}, which is not installed "
                  f"(pip install {exc.name.split('.')[0]})", file=sys.stderr)
            return 2
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
    args = parser.parse_args(argv)
    if not args.command or module is None:
        parser.print_help()
        return 2
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
