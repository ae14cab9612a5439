"""The MicroPython test runtime: real MicroPython, the firmware files as staged, errors surfaced."""

import pytest

from host_tools.pico.micropython import MicroPythonError, MicroPythonRuntime


@pytest.fixture(scope="module")
def rt():
    with MicroPythonRuntime() as runtime:
        yield runtime


def test_it_is_micropython_running_the_staged_firmware(rt):
    out = rt.run("import sys, cylindre\nprint(sys.implementation.name, cylindre.__file__)").stdout
    assert out.split() == ["micropython", "/input/lib/cylindre/__init__.py"]


def test_a_guest_exception_is_raised_with_what_was_printed_before(rt):
    with pytest.raises(MicroPythonError) as info:
        rt.run("print('before')\nraise ValueError('boom')")
    assert "ValueError: boom" in str(info.value)
    assert info.value.stdout.strip() == "before"


def test_the_heap_is_large_enough_that_tests_do_not_collect(rt):
    free = int(rt.run("import gc\nprint(gc.mem_free())").stdout)
    assert free > 200 * 1024 * 1024


def test_fuel_is_counted(rt):
    small = rt.run("x = 1").fuel_used
    big = rt.run("x = 0\nfor i in range(20000):\n    x += i").fuel_used
    assert 0 < small < big
