"""The rp2prof bench part: its probe is valid Python for the port, its page section lists the
calls that ran (not the loop's turn, whose total is mostly the wait)."""

from host_tools.bench import rp2prof


def test_the_probe_compiles_with_and_without_the_brackets():
    for wrap in (True, False):
        src = rp2prof.probe_source(wrap=wrap).decode()
        compile(src, "/boot.py", "exec")
        assert ("_wrap(_c0," in src) == wrap
        assert "gc.disable()" in src and "gc.mem_alloc()" in src


def test_the_section_lists_the_calls_that_ran():
    def windows(busy, calls=()):
        return {"idle, rotor stopped": {"seconds": 3.0, "busy_percent": busy},
                "idle, rotor turning": {"seconds": 1.5, "busy_percent": busy},
                "ball on the track": {"seconds": 4.0, "busy_percent": busy + 1, "calls": list(calls)}}
    figures = {"command": "make bench ARGS='rp2prof'", "ball_bytes_allocated": 40000,
               "ball_busy_without_collector": 3.5,
               "plain": {"windows": windows(2.5)},
               "profiled": {"windows": windows(3.0, [
                   {"call": "MainLoop.step", "us": 4000000, "calls": 60},
                   {"call": "Controller.tick", "us": 60000, "calls": 40},
                   {"call": "Controller._save", "us": 0, "calls": 0}])}}
    md = rp2prof.markdown(figures)
    assert "| `Controller.tick` | 60.0 | 40 | 1.50 | 10.0 |" in md
    assert "MainLoop.step" not in md and "_save" not in md
    assert "40,000 bytes allocated (10,000 a second), busy 3.50 % (3.50 % with the collector" in md


def test_the_collector_s_share_is_its_time_over_the_time_the_free_heap_lasts():
    """40,000 bytes in 4 s with 100,000 free: a collection every 10 s; 20 ms each is 0.2 %."""
    ball = {"seconds": 4.0, "busy_percent": 2.0, "bytes_allocated": 40000, "collect_us": 20000,
            "heap_live": 90000, "heap_free": 100000}
    c = rp2prof.collector(ball)
    assert c == {"collect_ms": 20.0, "heap_live": 90000, "heap_free": 100000, "every_s": 10.0, "percent": 0.2}
    assert rp2prof.collector({"seconds": 4.0, "busy_percent": 2.0}) is None     # an older run
    figures = {"command": "make bench ARGS='rp2prof'", "ball_bytes_allocated": 40000,
               "ball_busy_without_collector": 2.0, "collector": c,
               "plain": {"windows": {"ball on the track": {"seconds": 4.0, "busy_percent": 2.1}}},
               "profiled": {"windows": {"ball on the track": dict(ball, calls=[])}}}
    assert "One collection after that window took 20.0 ms with 90,000 bytes live and 100,000 free: " \
           "at that rate of allocation one every 10.0 s, 0.20 % of the core." in rp2prof.markdown(figures)
