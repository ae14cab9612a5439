"""The Pico and the host settle alike: every example session settled on MicroPython gives exactly
the JSON CPython gives (the same files, two runtimes)."""

import json
from pathlib import Path

import pytest

from cylindre.rules.session import settle_session
from host_tools.pico.micropython import MicroPythonRuntime

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

GUEST = """
import json
from cylindre.rules.session import settle_session
for name in {names!r}:
    with open('/input/ex/' + name) as f:
        doc = json.load(f)
    print('@@' + name + ' ' + json.dumps(settle_session(doc)))
"""


@pytest.mark.micropython
def test_examples_settle_the_same_on_micropython():
    names = sorted(p.name for p in EXAMPLES.glob("*.json"))
    assert names
    with MicroPythonRuntime(extra={"ex": EXAMPLES}) as rt:
        out = rt.run(GUEST.format(names=names)).stdout
    got = {}
    for line in out.splitlines():
        if line.startswith("@@"):
            name, _, text = line[2:].partition(" ")
            got[name] = json.loads(text)
    assert sorted(got) == names
    for name in names:
        expected = settle_session(json.loads((EXAMPLES / name).read_text(encoding="utf-8")))
        assert got[name] == json.loads(json.dumps(expected)), name
