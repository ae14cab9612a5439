"""Cylindre host tools (CPython)."""


def version() -> str:
    """The package's version, from its metadata (pyproject.toml): the one number the CLI
    (`cylindre --version`) and the API's document (/openapi.json, /docs) show."""
    from importlib.metadata import PackageNotFoundError, version as _v
    try:
        return _v("cylindre")
    except PackageNotFoundError:
        return "unknown (not installed)"
