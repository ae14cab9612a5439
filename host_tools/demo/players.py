"""The demo's players (`cylindre demo`): four regulars and a cheat who bet through the table's
HTTP API like any client, and say what the table answered in French.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from host_tools.table.libelles import euros

EVEN = ("rouge", "noir", "pair", "impair", "manque", "passe")
# the daemon's refusals, as the demo's players hear them (the API's own messages are English)
REFUSAL = {"wheel_not_heard": "le cylindre n'a pas encore confirmé que les jeux sont ouverts",
           "no_more_bets": "rien ne va plus : la mise est jouée", "not_your_bet": "ce n'est pas sa mise",
           "poussette": "poussette: la mise arrive après rien ne va plus",
           "table_closed": "la table est fermée", "link_down": "liaison avec le cylindre coupée"}

class Api:
    def __init__(self, base, token):
        self.base = base
        self.token = token

    def call(self, method, path, body=None, timeout=10):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")


class Players:
    """Four regulars and a cheat, each with a habit; bets go through the API like any client."""

    def __init__(self, api, rng, say):
        self.api = api
        self.rng = rng
        self.say = say
        self.owner = {}          # bet id -> player
        self.labels = {}
        self.refused = 0

    def bets_for_round(self):
        r = self.rng
        out = [("Alice", {"type": "plein", "numbers": [r.randrange(37)], "stake": 1000}),
               ("Alice", {"type": "cheval", "numbers": r.choice([[0, 3], [14, 17], [20, 23], [32, 35]]), "stake": 500}),
               ("Bruno", r.choice([{"type": "voisins", "unit": 200}, {"type": "tiers", "unit": 200},
                                   {"type": "orphelins", "unit": 100}, {"type": "jeu_zero", "unit": 100}])),
               ("Chloé", {"type": r.choice(EVEN), "stake": 5000,
                          "zero_choice": r.choice(["prison", "partage"])}),
               ("Chloé", {"type": r.choice(EVEN), "stake": 2000}),
               ("Denis", {"type": "douzaine", "which": r.randint(1, 3), "stake": 2000}),
               ("Denis", {"type": "transversale", "numbers": r.choice([[0, 1, 2], [0, 2, 3], [13, 14, 15]]), "stake": 500})]
        return out

    def wait_open(self, seconds=3.0) -> bool:
        """Wait until the table takes bets. The croupier's "faites vos jeux" follows the result at
        once; the daemon takes a bet only on the wheel's next fresh status (at most 500 ms later),
        so a player who puts chips down on the very word is refused `wheel_not_heard`."""
        end = time.monotonic() + seconds
        while True:
            st, state = self.api.call("GET", "/state")
            if st == 200 and state["table"]["accepting_bets"]:
                return True
            if time.monotonic() > end:
                return False
            time.sleep(0.05)

    def place(self, player, bet):
        """One bet; refused for want of fresh word from the wheel, it is put down again once the
        table takes bets (as a player does when the croupier waves the chips back)."""
        st, body = self.api.call("POST", "/bets", {"player": player, **bet})
        if st == 409 and body.get("error") == "wheel_not_heard" and self.wait_open(1.0):
            st, body = self.api.call("POST", "/bets", {"player": player, **bet})
        return st, body

    def place_round(self, wheel_done=lambda: False):
        if not self.wait_open():
            if not wheel_done():
                self.say("  (le cylindre ne confirme pas l'ouverture des jeux : pas de mises à ce tour)")
            return
        for player, bet in self.bets_for_round():
            st, body = self.place(player, bet)
            if st == 201:
                self.owner[body["id"]] = player
                self.labels[body["id"]] = body["label"]
                self.say(f"  {player:6} mise {body['label']}: {euros(body['stake'])}")
            else:
                self.say(f"  {player:6} mise refusée ({st}) : {REFUSAL.get(body.get('error'), body.get('message'))}")
        if self.rng.random() < 0.3:     # Alice changes her mind about a bet
            st, body = self.place("Alice", {"type": "carre", "numbers": [1, 2, 4, 5], "stake": 500})
            if st == 201:
                self.say(f"  Alice  mise {body['label']}: {euros(body['stake'])}")
                st2, out = self.api.call("DELETE", f"/bets/{body['id']}")
                self.say(f"  Alice  retire {body['label']} : " + ("mise retirée, rendue" if st2 == 200 else
                         f"refusé ({REFUSAL.get(out.get('error'), out.get('message'))})"))

    def late_bet(self):
        st, body = self.api.call("POST", "/bets", {"player": "Eve", "type": "plein", "numbers": [self.rng.randrange(37)], "stake": 10000})
        if st == 409:
            self.refused += 1
            self.say(f"  Eve    pose un plein après l'annonce : refusé ({body.get('error')})")
