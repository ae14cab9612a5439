"""A board file (boards/<name>.json, /board.json on the Pico): which GPIO carries which signal,
the wheel's geometry and its spin settings. A board is data: checking one here, on the host
(`make firmware`, tests) and on the Pico alike, means a wrong file is refused with a message
before anything is wired.
"""

from cylindre.spin.settings import build

MAX_GPIO = 47          # RP2350B has 48 GPIOs; the RP2040 29 usable


def spin_settings(board):
    """Controller settings from a board file: geometry plus its "spin" section."""
    s = {}
    for k in ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg"):
        if k in board:
            s[k] = board[k]
    if "board" in board:
        s["board"] = board["board"]
    sp = board.get("spin") or {}
    if not isinstance(sp, dict):
        return None
    for k in sp:
        s[k] = sp[k]
    return s


def check(board):
    """None when the board file is usable, else the first problem found, in words."""
    if not isinstance(board, dict):
        return "a board file is a JSON object"
    if not isinstance(board.get("board"), str) or not board["board"]:
        return "board: a name is required"
    s = spin_settings(board)
    if s is None:
        return "spin: must be an object of settings"
    settings, err = build(s)
    if err:
        return err
    pins = board.get("pins")
    if not isinstance(pins, dict):
        return "pins: an object mapping signals to GPIO numbers is required"
    used = {}
    nb = len(board["ball_sensors_deg"])
    npk = len(board["pocket_sensors_deg"])
    want = [("enc_a", 1), ("enc_b", 1), ("z", 1), ("ball", nb), ("pocket", npk)]
    for opt in ("void", "call", "lamp", "led"):
        if pins.get(opt) is not None:
            want.append((opt, 1))
    for name, n in want:
        v = pins.get(name)
        gp = v if isinstance(v, list) else [v]
        if len(gp) != n:
            return "pins.%s: %d GPIO(s) expected (one per sensor angle), got %d" % (name, n, len(gp))
        for g in gp:
            if not isinstance(g, int) or isinstance(g, bool) or g < 0 or g > MAX_GPIO:
                return "pins.%s: %r is not a GPIO number" % (name, g)
            if g in used:
                return "pins.%s: GPIO %d is already %s" % (name, g, used[g])
            used[g] = name
    a = pins["enc_a"]
    b = pins["enc_b"]
    if a != b + 1 and b != a + 1:
        return "pins.enc_a and pins.enc_b must be adjacent GPIOs (the PIO reads them together)"
    sm = pins.get("pio_sm", 0)
    if not isinstance(sm, int) or sm < 0 or sm > 11:
        return "pins.pio_sm: a state machine number 0-11 is required"
    link = board.get("link") or {"type": "usb"}
    kind = link.get("type")
    if kind not in ("usb", "uart"):
        return "link.type: usb or uart"
    if kind == "uart":
        for k in ("tx", "rx"):
            g = link.get(k)
            if not isinstance(g, int) or g in used:
                return "link.%s: a free GPIO is required" % k
    err = _check_cammegh(board.get("cammegh"), link, used)
    if err:
        return err
    if not isinstance(board.get("active_low", False), bool):
        return "active_low: true or false"
    return None


def _gpio(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_GPIO


def _check_cammegh(cfg, link, used):
    """The Cammegh compatibility output (docs/integrators/cammegh-output.md): absent or null = off, else
    {"uart": 0|1, "tx": GPIO, "rx": GPIO or absent, "baud": 9600 by default}, 8N1."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        return "cammegh: an object {\"uart\": 1, \"tx\": 4, \"rx\": 5} or null (off)"
    for k in cfg:
        if k not in ("uart", "tx", "rx", "baud"):
            return "cammegh.%s: unknown key (uart, tx, rx, baud)" % k
    u = cfg.get("uart")
    if u not in (0, 1) or isinstance(u, bool):
        return "cammegh.uart: 0 or 1"
    if link.get("type") == "uart":
        if link.get("uart", 0) == u:
            return "cammegh.uart: UART%d already carries the link" % u
        used = dict(used)
        used[link.get("tx")] = "link.tx"
        used[link.get("rx")] = "link.rx"
    for k in ("tx", "rx"):
        g = cfg.get(k)
        if g is None and k == "rx":
            continue
        if not _gpio(g):
            return "cammegh.%s: %r is not a GPIO number" % (k, g)
        if g in used:
            return "cammegh.%s: GPIO %d is already %s" % (k, g, used[g])
        used[g] = "cammegh.%s" % k
    baud = cfg.get("baud", 9600)
    if not isinstance(baud, int) or isinstance(baud, bool) or not 1200 <= baud <= 115200:
        return "cammegh.baud: 1200 to 115200 (the format is 9600)"
    return None
