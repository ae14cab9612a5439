"""The physical wheel simulator (docs/internals/simulator.md) and the feed tools built on it."""

from .scenarios import EXPECTED, SCENARIOS
from .wheel import (DEALER, DEFAULT_GEOMETRY, NOISY, REALISTIC, FeedWriter, Spin, WheelSimulator, geometry_from, truth_path,
                    write_feed)

__all__ = ["WheelSimulator", "Spin", "SCENARIOS", "EXPECTED", "DEFAULT_GEOMETRY", "REALISTIC", "NOISY", "DEALER",
           "geometry_from", "write_feed", "truth_path", "FeedWriter"]
