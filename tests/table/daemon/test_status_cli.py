"""`cylindre status` speaks French (daemon/status_cli.py): numbers the French way, euros with a
comma and a narrow space, and words where a value is not known yet, never "None"."""

from host_tools.table.daemon.status_cli import lines


def state(**table):
    return {"link": {"port": "/dev/ttyACM0", "port_open": False, "session": False, "up": False, "boot": None,
                     "acked": None, "last_heard": None, "counts": dict(frames=0, events=0, duplicates=0, rejects=0,
                                                                       stale=0, gaps=0),
                     "problem": {"code": "port_missing", "text": "port /dev/ttyACM0 absent", "advice": "vérifier le câble"},
                     "rtt_ms": None},
            "wheel": {"id": "T1", "status": None},
            "table": {"phase": "betting", "spin": None, "last_number": None, "bets_on_table": 0, "stakes_on_table": 0,
                      "prisoners": [], "bets_held": 0, "annonce": "suspended", "refusing": "wheel_not_heard", **table}}


def test_a_daemon_that_never_heard_its_wheel_says_so_in_words():
    out = "\n".join(lines(state()))
    assert "None" not in out and "0.00" not in out
    assert out.startswith("liaison  COUPÉE sur /dev/ttyACM0 (port fermé) ; dernier signal jamais entendu ; "
                          "aucun démarrage du cylindre entendu")
    assert "cylindre T1 : aucun état reçu encore" in out
    assert "table    ouverte — mises suspendues (en attente du cylindre) ; aucun coup encore ; aucun numéro encore ; " \
           "0 mise sur le tapis, 0,00\u202f€ ; 0 en prison" in out


def test_a_table_at_work_in_french_numbers():
    st = state(spin=1234, last_number=17, bets_on_table=12, stakes_on_table=123456, annonce="betting", refusing=None)
    st["link"].update(port_open=True, session=True, up=True, problem=None, boot="b7f3", acked=20001, last_heard=999.6,
                      rtt_ms=12.4, counts=dict(frames=1234567, events=20001, duplicates=3, rejects=0, stale=0, gaps=0))
    st["wheel"]["status"] = {"state": "idle", "spin": 1234, "rotor_rpm_x10": 231, "rotor_dir": 1, "table_open": True,
                             "sensors": {"ball": "ok", "pocket": "stuck"}}
    out = "\n".join(lines(st, now=1000.0))
    assert "liaison  ÉTABLIE" in out and "dernier signal à l'instant" in out and "n° 20\u202f001" in out
    assert "trames 1\u202f234\u202f567, événements 20\u202f001" in out
    assert "cylindre T1 : au repos, coup 1234, rotor 23,1\u202ftr/min sens horaire" in out
    assert "CAPTEURS EN DÉFAUT : pocket bloqué" in out
    assert "table    ouverte — faites vos jeux ; coup 1234 ; dernier numéro 17 ; 12 mises sur le tapis, 1\u202f234,56\u202f€" in out
