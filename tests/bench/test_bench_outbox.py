"""`make bench ARGS=outbox` runs (tiny sizes) and writes its figures and its page section."""

import argparse
import json

from host_tools.bench import outbox


def test_outbox_bench_writes_its_figures(tmp_path):
    p = argparse.ArgumentParser()
    outbox.add_arguments(p)
    assert outbox.run(p.parse_args(["--coups", "5", "--gap-ms", "1", "--backlog", "50", "--out", str(tmp_path)])) == 0
    figures = json.loads((tmp_path / "outbox.json").read_text())
    assert figures["latency"]["coups"] == 5 and figures["catch_up"]["events"] == 100
    assert figures["latency"]["p50_ms"] <= figures["latency"]["max_ms"]
    assert "make bench ARGS=outbox" in outbox.markdown(figures)
