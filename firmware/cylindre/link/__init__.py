"""The serial link (liaison série) between the wheel controller and the table host.

One protocol, one code base: the Pico runs `device`, the host daemon runs `host`, both on the
same `frame` (COBS framing, CRC-32, HMAC-SHA256) and `mac` modules. `cammegh` is the separate
compatibility output for existing table displays. The byte layout is in docs/integrators/link-protocol.md.
"""
