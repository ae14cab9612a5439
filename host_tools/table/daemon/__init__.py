"""The daemon itself, the imperative shell: settings, the I/O thread that owns the port, and the commands `cylindre daemon`, `status` and `token`."""
