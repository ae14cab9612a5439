"""The routes of bet slips (bulletins, game/slips.py): a terminal places, reads and withdraws its
own slips; a croupier, a chef and an admin any. A terminal is an identity of its own (role
`terminal`: `cylindre token add T042 --role terminal`), listed and revoked like the others; it
may place no single bet and read no other bet than its slips'."""

from __future__ import annotations

from typing import Any, Optional

from fastapi import Depends, Header, Path, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from host_tools.table.api.errors import ApiError
from host_tools.table.api.guard import BODY
from host_tools.table.api.models import E, ERRORS, BetRow, Error, Model
from host_tools.table.game.table import Refused

SLIP_ID = r"^S[0-9]{1,12}$"


class SlipBet(Model):
    id: str
    label: str
    stake: int
    played: int
    status: str
    bet: dict[str, Any]


class SlipPlaced(Model):
    slip: str = Field(description="the slip's id (S000123)")
    player: str
    status: str = Field(description="open, or refused (409)")
    stake: int = Field(description="cents, every bet of the slip")
    bets: list[SlipBet] = Field(description="its bets, as recorded (none when refused)")
    reason: Optional[str] = None


class RefusedSlip(Error):
    slip: Optional[SlipPlaced] = None


class Slip(Model):
    slip: str
    player: str
    placed_at: float
    status: str = Field(description="open, refused, withdrawn")
    reason: Optional[str] = None
    stake: int
    bets: list[BetRow] = Field(description="its bets as they stand, with their results once settled")


class SlipWithdrawn(Model):
    slip: str
    status: str
    bets: list[str]


SLIP_BODY = {"type": "object", "required": ["player", "bets"], "additionalProperties": False, "properties": {
    "player": {"type": "string", "minLength": 1, "maxLength": 64},
    "bets": {"type": "array", "minItems": 1, "maxItems": 50, "items": {"$ref": "#/components/schemas/BetIn"},
             "description": "the bets as POST /bets takes them, without player (the slip's plays them all)"}}}


def add_slips(app, host, need):
    """POST /slips, GET /slips/{slip}, DELETE /slips/{slip}."""

    @app.post("/slips", status_code=201, response_model=SlipPlaced, tags=["table"],
              responses={**ERRORS, 409: {"model": RefusedSlip}, 422: {"model": RefusedSlip}},
              summary="place a terminal's slip (up to 50 bets of one player) whole: 201 with every bet open after its "
                      "commit, or 409 with none (table_closed, poussette, wheel_not_heard: the slip is recorded "
                      "refused); a bad bet is 400 naming it (bets[3]: ...); Idempotency-Key as for a bet",
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": SLIP_BODY}}}})
    async def place_slip(request: Request, who=Depends(need("terminal", "slip_place")),
                         idempotency_key: Optional[str] = Header(None, max_length=128, description="1 to 128 printable "
                                                                 "ASCII characters: a retry with it returns the first answer")):
        if BODY not in request.scope:
            raise ApiError(400, "invalid_slip", "body: a slip is required (a JSON object)")
        try:
            return JSONResponse(await host.place_slip_async(request.scope[BODY], idempotency_key, who), 201)
        except Refused as e:
            return JSONResponse({"error": e.code, "message": e.message, "slip": e.bet}, e.http)

    @app.get("/slips/{sid}", response_model=Slip, responses={**ERRORS, 404: E}, tags=["table"],
             summary="a slip and its bets with their results (a terminal: its own slips only)")
    def slip(sid: str = Path(pattern=SLIP_ID), who=Depends(need("terminal"))):
        return host.slip(sid, who)

    @app.delete("/slips/{sid}", response_model=SlipWithdrawn, responses={**ERRORS, 404: E, 409: E}, tags=["table"],
                summary="withdraw every bet of an open slip on fresh word from the wheel, or none (409): the terminal "
                        "that placed it, a croupier, a chef or an admin (403 not_your_slip otherwise, audited)")
    def withdraw(sid: str = Path(pattern=SLIP_ID), who=Depends(need("terminal", "slip_cancel"))):
        return host.withdraw_slip(sid, who)
