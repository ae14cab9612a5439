"""The HTTP API and its pages: routes, roles and tokens, throttling, metrics, the pages' files."""
