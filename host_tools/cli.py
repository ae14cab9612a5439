"""`cylindre` — the command-line entry point. Each subcommand lives in its own module.

A command module exposes `HELP` (one line), `add_arguments(parser)` and `run(args) -> int`.
Modules are imported only when their command runs, so a missing optional piece never breaks
the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "settle": "host_tools.settle_cli",
    "replay": "host_tools.sim.replay_cli",
    "simulate": "host_tools.sim.simulate_cli",
    "daemon": "host_tools.daemon.cli",
    "status": "host_tools.daemon.status_cli",
    "demo": "host_tools.demo",
    "wheel": "host_tools.simwheel",
    "stats": "host_tools.stats.cli",
}


def _load(name: str):
    return importlib.import_module(COMMANDS[name])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="cylindre", description="French roulette wheel controller and table host.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    available = {}
    for name in COMMANDS:
        try:
            module = _load(name)
        except ModuleNotFoundError as exc:
            if exc.name and COMMANDS[name].startswith(exc.name):
                continue  # command not built yet
            raise
        available[name] = module
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(available[args.command].run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
