"""The API fuzzed from its own generated OpenAPI document (schemathesis): every answer matches the
schema the document gives for its status, and none is a 5xx but the documented ones (502 when the
wheel refuses a command: a setting out of its safe bounds). Run as admin with the link up, so every
route is reached; the stream (/events) is left to test_api_sse.py, its answer never ends.
Not checked: that every body of the right types is accepted; the document types a bet's fields,
the rules decide whether it is a bet (a plein of two numbers is 400 invalid_bet)."""

import atexit
import shutil
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import negative_data_rejection, not_a_server_error, positive_data_acceptance

from apikit import Table, link_up

_folder = Path(tempfile.mkdtemp(prefix="cylindre-schema-"))
atexit.register(shutil.rmtree, _folder, ignore_errors=True)      # a module-level table: no tmp_path
_table = Table(_folder / "j.sqlite")
_table.app.state.throttle.burst = 10**9           # the fuzzer's made-up tokens: never throttled here
link_up(_table)
_table.call("croupier", "POST", "/bets", json={"player": "ann", "type": "rouge", "stake": 500})    # B000001
schema = schemathesis.openapi.from_asgi("/openapi.json", _table.app).exclude(path="/events")


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_matches_its_document(case):
    # negative_data_rejection is left out: the admin's header is added to every case, which undoes
    # a case whose mutation was to drop the required Authorization header (the check would judge a
    # request that was not sent); refusals of bad input are test_api_app.py's and _roles.py's
    r = case.call_and_validate(headers={"Authorization": "Bearer " + _table.tokens["admin"]},
                               excluded_checks=[not_a_server_error, positive_data_acceptance, negative_data_rejection])
    refused_by_wheel = r.status_code == 502 and r.json()["error"] == "wheel_refused" and case.path.startswith("/wheel/")
    assert r.status_code < 500 or refused_by_wheel, (case.method, case.path, r.status_code, r.text)
