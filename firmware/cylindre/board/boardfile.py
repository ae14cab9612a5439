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
    for opt in ("void", "lamp", "led"):
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
    if not isinstance(board.get("active_low", False), bool):
        return "active_low: true or false"
    return None
