"""The physical wheel simulator (docs/internals/simulator.md) and the feed tools built on it."""

from .scenarios import EXPECTED, SCENARIOS
from .feedfile import FeedWriter, Spin, truth_path, write_feed
from .presets import DEALER, DEFAULT_GEOMETRY, NOISY, REALISTIC, geometry_from
from .wheel import WheelSimulator

__all__ = ["WheelSimulator", "Spin", "SCENARIOS", "EXPECTED", "DEFAULT_GEOMETRY", "REALISTIC", "NOISY", "DEALER",
           "geometry_from", "write_feed", "truth_path", "FeedWriter"]
