"""Every module in tests/shared/ runs on CPython (pytest collects it) and here, on MicroPython.

The shared modules use only what MicroPython has: plain `assert`, no pytest, no typing.
"""

from pathlib import Path

import pytest

from host_tools.pico.micropython import MicroPythonRuntime, run_test_module

SHARED = Path(__file__).parents[1] / "shared"
MODULES = sorted(p.stem for p in SHARED.glob("test_*.py"))


@pytest.fixture(scope="module")
def runtime():
    with MicroPythonRuntime(extra={"tests": SHARED}) as rt:
        yield rt


@pytest.mark.micropython
@pytest.mark.parametrize("module", MODULES)
def test_shared_module_passes_on_micropython(runtime, module):
    passed, failed, out = run_test_module(runtime, "tests", module)
    assert not failed, f"{module} failed on MicroPython:\n{out}"
    assert passed, f"{module} ran no test on MicroPython:\n{out}"
