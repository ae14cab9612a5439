"""`make bench`: every benchmark of the project. Each part is a module of this package."""
