"""The daemon itself, the imperative shell on top of every room: the I/O thread that owns the port
and the link (service.py), the daemon as the HTTP app sees it (host.py), and the commands
`cylindre daemon`, `status` and `token`."""
