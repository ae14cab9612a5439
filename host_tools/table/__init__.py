"""The table host daemon: serial link to the wheel, durable journal, game flow and HTTP API."""
