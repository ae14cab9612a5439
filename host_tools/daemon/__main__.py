"""`python -m host_tools.daemon ...`: the daemon without loading the other `cylindre` commands."""

import argparse
import sys

from . import cli

if __name__ == "__main__":
    p = argparse.ArgumentParser(prog="cylindre daemon", description=cli.HELP)
    cli.add_arguments(p)
    sys.exit(cli.run(p.parse_args()))
