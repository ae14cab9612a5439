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


# synthetic modules, each one top-level `def f`, so the objects the import itself makes (module,
# globals, one function) are the same for all and only what loading allocates differs
LOAD_CASES = {
    "empty": "def f():\n    return 0\n",
    "scopes": ("def f(xs):\n    def g(x):\n        return x\n    h = lambda x: x\n    ys = [x for x in xs]\n"
               "    zs = {x: x for x in xs}\n    class C:\n        def a(self):\n            return 1\n\n"
               "        def b(self):\n            return 2\n    return (g, h, ys, zs, C)\n"),
    "leaves": "def f():\n" + "    def g():\n        return 1\n" * 9 + "    return 0\n",
    "names": "def f():\n    return (len, abs, min, max, sum, print, range, sorted, isinstance, getattr, setattr)\n",
    "constants": ("def f(x):\n    return (x * 2.5, b'\\x00', b'', None, 'a string longer than ten', (1, 2, 3),"
                  " ('settings', 'must be a dict', 4294967295), 12345)\n"),
}


def _compile_cases(tmp_path):
    from host_tools.build_firmware import compile_package, romfs_image
    src = tmp_path / "src" / "cylindre"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    for name, text in LOAD_CASES.items():
        (src / (name + ".py")).write_text(text)
    out = tmp_path / "out"
    compile_package(out, files=["cylindre/__init__.py"] + ["cylindre/%s.py" % n for n in LOAD_CASES],
                    root=tmp_path / "src")
    return out / "cylindre", romfs_image(out)


def test_load_cost_reads_the_scopes_tables_and_constants_of_a_mpy(tmp_path):
    """Scopes as MicroPython compiles them (module, def, lambda, comprehension, class), a children
    array per scope that nests others, one block of name and constant tables, each constant
    object by its kind."""
    from host_tools.bench.pico import RAW_CODE_BYTES, load_cost
    pkg, _ = _compile_cases(tmp_path)
    d = load_cost((pkg / "scopes.mpy").read_bytes())
    # the module, f, g, the lambda, the list and dict comprehensions, C, a, b
    assert d["scopes"] == 9 and d["raw_code_bytes"] == 9 * RAW_CODE_BYTES
    # the module's [f], f's [g, lambda, listcomp, dictcomp, C] (20 B: two blocks), C's [a, b]
    assert d["children_bytes"] == 16 + 32 + 16
    assert load_cost((pkg / "leaves.mpy").read_bytes())["children_bytes"] == 16 + 48    # 9 pointers, 36 B
    c = load_cost((pkg / "constants.mpy").read_bytes())
    # 2.5, b'\\x00', the long string, the tuples (1, 2, 3) and ('settings', ...) (20 B each), the
    # latter's two strings and its big int (16 B object and its digits); b'', None and the small
    # ints allocate nothing (the outer tuple is built when f runs: not a constant)
    assert c["objects_bytes"] == 16 + 16 + 16 + 32 + 32 + 16 + 16 + 32
    assert load_cost((pkg / "empty.mpy").read_bytes())["objects_bytes"] == 0


def test_load_cost_is_what_this_micropython_allocates(tmp_path):
    """Each synthetic module imported from ROMFS: what the heap grew by, less `load_cost`, is the
    same for all of them (the module, its globals and `f`), so `load_cost` is exactly what
    loading allocates on this runtime. Their names are interned first, so no name table grows.
    (With one collection the `scopes` case faulted the WASI guest, whose collector does not see
    WebAssembly locals, host_tools/micropython.py; with two it runs, every time.)"""
    from host_tools.bench.pico import load_cost, mpy_names
    from host_tools.micropython import MicroPythonRuntime
    pkg, image = _compile_cases(tmp_path)
    rest = {}
    with MicroPythonRuntime(romfs=image) as rt:
        for name in LOAD_CASES:
            data = (pkg / (name + ".mpy")).read_bytes()
            # the module's names, its ROMFS path, its name on the package and its dotted name
            intern = mpy_names(data) + ["/rom/cylindre/%s.mpy" % name, name, "cylindre." + name]
            code = ("import gc, cylindre\n"
                    "for n in %r:\n    getattr(cylindre, n, None)\n"      # getattr interns its name
                    "gc.collect(); gc.collect(); a = gc.mem_alloc()\n"
                    "import cylindre.%s\n"
                    "gc.collect(); print(gc.mem_alloc() - a)\n" % (intern, name))
            rest[name] = int(rt.run(code).stdout.split()[-1]) - load_cost(data)["bytes"]
    assert len(set(rest.values())) == 1, rest
