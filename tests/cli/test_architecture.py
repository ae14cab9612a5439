"""The house as docs/internals/architecture.md draws it: no import circle between the modules of host_tools/,
and no room importing one drawn above it. Read from the code's own imports (every `import`, at the
top of a module or inside a function), so a new arrow that breaks the layers fails here first."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "host_tools"

# a room may import rooms of a lower rank and itself, never one of its own rank or higher
RANKS = {
    "host_tools": 0, "docs": 0,
    "cammegh": 1, "pico": 1, "table.libelles": 1,
    "rp2emu": 2, "table.wheel": 2, "table.journal": 2,
    "floor.link": 3, "table.game": 3, "table.alerts": 3, "stats": 3,
    "table.config": 4,
    "table.api": 5,
    "table.floor": 6,
    "table.daemon": 7, "table": 7.5,      # the package itself: its __main__ runs the daemon
    "floor": 8, "sim": 8,
    "demo": 9, "bench": 9,
    "cli": 10,
}


def modules() -> dict[str, Path]:
    out = {}
    for f in HOST.rglob("*.py"):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def imports(name: str, path: Path, known) -> set[str]:
    """The host_tools modules `name` imports (a name imported from a package that is a module of its
    own counts as that module)."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.add(full if full in known else base)
    return {m for m in out if m in known and m != name}


def room(mod: str) -> str:
    rest = mod.split(".")[1:]
    for n in (2, 1):
        key = ".".join(rest[:n])
        if len(rest) >= n and key in RANKS:
            return key
    return "host_tools"


def graph():
    known = modules()
    return {m: imports(m, p, known) for m, p in known.items()}


def test_every_room_has_a_rank():
    unranked = sorted({m for m in modules() if room(m) == "host_tools" and m not in ("host_tools", "host_tools.cli")})
    assert not unranked, f"modules outside every room of docs/internals/architecture.md: {unranked}"


def test_no_room_imports_one_drawn_above_it():
    wrong = []
    for mod, deps in graph().items():
        a = room(mod)
        for dep in deps:
            b = room(dep)
            if a != b and RANKS[b] >= RANKS[a] and not a.startswith(b + ".") and not (b == "table" and a.startswith("table.")):
                wrong.append(f"{mod} ({a}) -> {dep} ({b})")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def test_no_import_circle():
    g = graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(g[m]):
            if state.get(d) == 1:
                circles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_the_check_sees_a_circle_and_an_upward_arrow(tmp_path, monkeypatch):
    """The checks can fail: two modules importing each other, and a game module importing the API."""
    g = {"host_tools.table.game.a": {"host_tools.table.api.b"}, "host_tools.table.api.b": {"host_tools.table.game.a"}}
    monkeypatch.setattr(__import__(__name__), "graph", lambda: g)
    for check in (test_no_import_circle, test_no_room_imports_one_drawn_above_it):
        try:
            check()
        except AssertionError:
            continue
        raise AssertionError(f"{check.__name__} passed on a broken graph")
