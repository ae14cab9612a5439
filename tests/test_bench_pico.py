"""The Pico bench's model of the interned-name tables (host_tools/bench/pico.py, docs/firmware.md
"Round 12"): the table sizes are checked against what this project's MicroPython reports, the
`.mpy` reader against mpy-cross's own output."""

import subprocess

import pytest

from host_tools.bench.pico import (RP2_HASH_BYTES, WASI_HASH_BYTES, mpy_names, qstr_tables,
                                   rp2_port_names)
from host_tools.build_firmware import mpy_cross_binary
from host_tools.micropython import MicroPythonRuntime


def test_the_tables_of_n_names_are_20_40_80_entries_and_so_on():
    # one name fills nothing but allocates the first table, its 21st the second
    assert qstr_tables(0, WASI_HASH_BYTES) == 0
    assert qstr_tables(1, WASI_HASH_BYTES) == qstr_tables(20, WASI_HASH_BYTES) == 176     # 24 + 7 x 20, in 16-B blocks
    assert qstr_tables(21, WASI_HASH_BYTES) == 176 + 304
    # rp2 keeps a 1-byte hash: 6 B an entry; past 620 names the 640-entry table, 3,872 B
    assert qstr_tables(620, RP2_HASH_BYTES) == 144 + 272 + 512 + 992 + 1952
    assert qstr_tables(621, RP2_HASH_BYTES) == 144 + 272 + 512 + 992 + 1952 + 3872


@pytest.mark.parametrize("extra", [0, 7, 30, 200])
def test_the_table_model_gives_what_micropython_reports(extra):
    code = ("import micropython\n"
            "for i in range(%d):\n"
            "    getattr(micropython, 'zq_name_%%d' %% i, None)\n"
            "micropython.qstr_info()\n" % extra)
    with MicroPythonRuntime() as rt:
        out = rt.run(code).stdout
    line = next(x for x in out.splitlines() if x.startswith("qstr pool:"))
    q = dict(kv.split("=") for kv in line[len("qstr pool:"):].replace(" ", "").split(","))
    tables = int(q["n_total_bytes"]) - int(q["n_str_data_bytes"])
    assert tables == qstr_tables(int(q["n_qstr"]), WASI_HASH_BYTES)


def test_the_mpy_reader_lists_a_module_s_own_names_not_the_static_ones(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import json\n\nclass Rotor:\n    def lap_period(self, tours):\n"
                   "        print(len(tours), range(3))\n        return json.dumps({'cpr': tours})\n")
    subprocess.run([mpy_cross_binary(), "-s", "m.py", "-o", str(tmp_path / "m.mpy"), str(src)], check=True)
    names = mpy_names((tmp_path / "m.mpy").read_bytes())
    assert {"m.py", "Rotor", "lap_period", "tours", "cpr", "json", "dumps"} <= set(names)
    assert not {"print", "len", "range"} & set(names)             # mpy-cross's static list: an index
    with pytest.raises(ValueError):
        mpy_names(b"not an mpy")


def test_the_rp2_port_names_come_from_its_stubs():
    names = rp2_port_names()
    if names is None:
        pytest.skip("the rp2 stubs (dev extra) are not installed")
    assert {"Pin", "IRQ_FALLING", "StateMachine", "asm_pio", "ticks_us", "alloc_emergency_exception_buf"} <= names
    assert "FlashStore" not in names and "Rotor" not in names


def test_a_pico_charges_the_firmware_names_the_guest_hid_and_not_those_the_port_defines(tmp_path):
    from host_tools.bench.pico import firmware_names, pico_heap_model

    pkg = tmp_path / "cylindre"
    pkg.mkdir()
    src = tmp_path / "m.py"
    src.write_text("class Rotor:\n    def lap(self, now):\n        return now\n")
    subprocess.run([mpy_cross_binary(), "-s", "cylindre/m.py", "-o", str(pkg / "m.mpy"), str(src)], check=True)
    base = ["now", "S", "_advance"]                    # the guest's own; `now` is also the firmware's
    end = base + ["/rom/cylindre/m.mpy", "cylindre/m.py", "Rotor", "lap", "Pin"]
    stats = {"qstr_names": {"base": base, "import": end, "boot": end, "end": end},
             "qstr": {m: {"names": len(n), "pools": 1, "table_bytes": qstr_tables(len(n), WASI_HASH_BYTES)}
                      for m, n in (("base", base), ("import", end), ("boot", end), ("end", end))},
             "heap_base": 1000, "heap_after_import": 2000, "heap_after_boot": 3000, "heap_peak": 3500}
    names = firmware_names(stats, pkg, "end", {"Pin"})
    assert names["here"] == 5 and names["port_defined"] == ["Pin"] and names["hidden"] == ["now"]
    assert names["pico"] == 5                           # 4 of its own here, `Pin` the port's, `now` hidden
    m = pico_heap_model(stats, pkg, {"Pin"})
    assert m["wasi_tables_check"]
    # here the 8 names share the guest's first table: nothing over the base; a Pico allocates one
    assert m["end"]["tables_here"] == 0 and m["end"]["tables_pico"] == qstr_tables(5, RP2_HASH_BYTES) == 144
    assert m["firmware_peak"] == 2500 + 144


def test_code_descriptors_one_per_scope_and_the_children_arrays(tmp_path):
    """One `mp_raw_code_t` (16 B on rp2) per scope MicroPython compiles (module, class, def, lambda,
    comprehension) of each loaded module, and a children array (4 B a pointer, 16-byte blocks)
    for each scope that nests others; a module not loaded at the mark is not counted."""
    from host_tools.bench.pico import RAW_CODE_BYTES, code_descriptors
    pkg = tmp_path / "cylindre"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(
        "def f(xs):\n    g = lambda x: x + 1\n    return [g(x) for x in xs]\n\n\n"
        "class C:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n")
    (pkg / "unused.py").write_text("def h():\n    pass\n")
    stats = {"modules": {"end": ["cylindre", "cylindre.m"]}}
    d = code_descriptors(stats, "end", root=tmp_path)
    # scopes: the package, the module, f, the lambda, the list comprehension, C, a, b
    assert d["scopes"] == 8 and d["modules"] == 2
    assert d["raw_code_bytes"] == 8 * RAW_CODE_BYTES
    # children arrays: the module's [f, C], f's [lambda, comprehension], C's [a, b]: 16 B each
    assert d["children_bytes"] == 48
    assert d["bytes"] == 8 * RAW_CODE_BYTES + 48
