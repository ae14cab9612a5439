"""`python -m host_tools.table ...`: the daemon without loading the other `cylindre` commands."""

import argparse
import sys

from host_tools.table.daemon import cli

if __name__ == "__main__":
    p = argparse.ArgumentParser(prog="cylindre daemon", description=cli.HELP)
    cli.add_arguments(p)
    sys.exit(cli.run(p.parse_args()))
