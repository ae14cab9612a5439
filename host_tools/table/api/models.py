"""The API's typed models: what a route takes and gives, as the generated document (/docs,
/openapi.json) shows them. Money is integer cents."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr


class Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Error(BaseModel):
    error: str = Field(description="a stable code: bad_request, invalid_bet, unauthorized, forbidden, not_found, ...")
    message: str


class ZeroMove(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    move: StrictStr = Field(max_length=16)


Pocket = Annotated[StrictInt, Field(ge=0, le=36)]


class BetIn(BaseModel):
    """A bet (docs/integrators/settle.md), as the generated document shows it. The gate is the table's own
    `parse_bet_request` (framework-free): it refuses, naming it, a field not listed here or one only
    the table sets (`carried`, `status`, `consent`, ...). Money is integer cents."""
    model_config = ConfigDict(extra="forbid", strict=True)
    player: StrictStr = Field(min_length=1, max_length=64, description="no control characters")
    type: StrictStr = Field(max_length=64, description="plein cheval transversale carre sixain douzaine colonne rouge "
                            "noir pair impair manque passe, or a called bet: voisins tiers orphelins nassa jeu_zero "
                            "voisins_numero finale finale_cheval finale_chevaux")
    bet: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of type")
    numbers: Optional[Union[list[StrictInt], StrictInt]] = Field(default=None, description="the numbers covered (0..36)")
    number: Optional[StrictInt] = Field(default=None, description="alias of numbers (one number); voisins: the centre")
    which: Optional[Union[StrictInt, list[StrictInt]]] = Field(
        default=None, description="dozen or column 1..3; two of them is a straddle, awaiting the chef's consent")
    stake: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents (bets on the layout)")
    unit: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents per chip (called bets)")
    replay: Optional[StrictStr] = Field(default=None, max_length=64, description="called bets: refaire, completer or tout")
    rejouer: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of replay")
    zero_choice: Optional[Union[Literal["prison", "partage"], ZeroMove]] = Field(
        default=None, description='even chances only: at zero "prison" (default), "partage" or {"move": "<chance>"}')
    chance: Optional[StrictStr] = Field(default=None, max_length=64, description="an even chance by name")
    chances: Optional[list[StrictStr]] = Field(default=None, max_length=37, description="even chances by name")
    final: Optional[Union[StrictInt, StrictStr, list[StrictInt]]] = Field(
        default=None, description='finales: a last digit, or a pair "8/9"')
    form: Optional[StrictStr] = Field(default=None, max_length=64, description='orphelins: "plein" for en plein')
    forme: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of form")
    k: Optional[StrictInt] = Field(default=None, description="voisins of a number: how many neighbours each side")
    neighbours: Optional[StrictInt] = Field(default=None, description="alias of k")
    neighbors: Optional[StrictInt] = Field(default=None, description="alias of k")
    voisins: Optional[StrictInt] = Field(default=None, description="alias of k")
    numero: Optional[StrictInt] = Field(default=None, description="voisins of a number: the centre")
    centre: Optional[StrictInt] = Field(default=None, description="alias of numero")
    center: Optional[StrictInt] = Field(default=None, description="alias of numero")
    a_placer: Optional[bool] = Field(default=None, description="called bets: payés à placer")
    payes_a_placer: Optional[bool] = Field(default=None, description="alias of a_placer")
    paye_a_placer: Optional[bool] = Field(default=None, description="alias of a_placer")
    placed: Optional[bool] = Field(default=None, description="alias of a_placer")


class Placed(Model):
    id: str
    player: str
    label: str
    stake: int
    played: int
    status: str
    bet: dict[str, Any]


class RefusedBet(Error):
    bet: Optional[Placed] = None


class Who(BaseModel):
    name: str = Field(description="the token's name")
    role: str


class BetRow(Model):
    id: str
    player: str
    placed_at: float
    bet: dict[str, Any]
    label: Optional[str] = Field(default=None, description="the bet in the croupier's words: 'cheval 14/17', 'jeu zéro'")
    stake: int
    status: str = Field(description="open locked refused cancelled settled held refunded ...")
    spin: Optional[int] = None
    reason: Optional[str] = None
    result: Optional[dict[str, Any]] = None
    placed_by: Optional[Who] = Field(default=None, description="the token that placed it")
    withdrawn_by: Optional[Who] = Field(default=None, description="the token that withdrew it")


class Cancelled(Model):
    id: str
    status: str


class TableState(Model):
    wheel: str
    phase: str = Field(description="closed, betting or no_more_bets")
    spin: Optional[int] = None
    locked_spin: Optional[int] = None
    last_number: Optional[int] = None
    bets_on_table: int
    stakes_on_table: int = Field(description="cents")
    bets_held: int
    prisoners: list[Any]
    carry: list[Any]
    croupier: Optional[str] = Field(default=None, description="the croupier on duty, as the chef set it (PUT /table/croupier)")
    croupier_since: Optional[float] = None
    session_since: Optional[float] = Field(default=None, description="when the table last opened (None while closed)")
    accepting_bets: bool = Field(False, description="a bet arriving now would be taken (POST /bets' own window)")
    refusing: Optional[str] = Field(None, description="why a bet arriving now would be refused (the 409 code), null when taken")
    annonce: str = Field("suspended", description="what every screen says of the table now: betting (faites vos jeux, "
                                                   "only while a bet would be taken), no_more_bets, closed, or suspended "
                                                   "(open, but no bet taken: the wheel not heard or unknown)")
    open_for_ms: int = Field(0, description="how long accepting_bets stays true without another status from the wheel (ms)")


class LinkProblem(Model):
    code: str = Field(description="port_missing, wrong_wheel, wheel_unknown, not_authentic, garbage, slow_line, silent, down")
    text: str = Field(description="what the host sees, in French (the pit, cylindre status)")
    advice: str = Field(description="what to check or do, in French")


class LinkState(Model):
    port: Optional[str] = None
    port_open: bool
    session: bool
    boot: Optional[str] = None
    next_event: Optional[int] = None
    acked: Optional[int] = None
    last_heard: Optional[float] = None
    counts: dict[str, int]
    sessions: int
    up: bool = Field(True, description="a session with the wheel is up and the wheel is the one the table knows")
    problem: Optional[LinkProblem] = Field(None, description="why the link is not up (null while it is)")
    rtt_ms: Optional[float] = Field(None, description="the round trip of the last HELLO answered, ms")


class WheelState(Model):
    id: str
    welcome: Optional[dict[str, Any]] = None
    status: Optional[dict[str, Any]] = None


class State(Model):
    link: LinkState
    wheel: WheelState
    table: TableState


class TableChange(Model):
    table: TableState
    wheel_confirmed: bool = Field(description="the wheel acknowledged the change (false: told at its next connection)")


class HistoryRow(Model):
    spin: int
    number: int
    at: float
    staked: int
    paid: int


class RecallEvent(Model):
    boot: str
    seq: int
    received_at: float
    event: dict[str, Any]
    frame_hex: str


class Said(Model):
    at: float
    text: str


class AuditRow(Model):
    id: int
    at: float
    who: str
    role: str
    action: str
    target: Optional[str] = None
    spin: Optional[int] = None
    before: Any = None
    after: Any = None
    answer: Any = None
    done: bool


class Recall(Model):
    wheel: str
    spin: int
    events: list[RecallEvent]
    settlement: Optional[dict[str, Any]] = None
    bets: list[BetRow]
    announcements: list[Said]
    audit: list[AuditRow] = Field(description="privileged actions that touched this spin")


class ResolveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["refund", "play"]


class WheelAcceptIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    serial: Optional[str] = Field(None, max_length=64, description="the board serial the chef checked (refused if another waits)")
    epoch: Optional[str] = Field(None, max_length=64, description="the counter epoch the chef checked")


class WheelAccepted(Model):
    before: Optional[dict[str, Any]] = Field(None, description="the wheel the table knew")
    wheel: dict[str, Any] = Field(description="the wheel the table knows now (Daemon.wheel_identity)")


class SettingIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: StrictStr = Field(min_length=1, max_length=40)
    value: Union[StrictInt, bool, StrictStr] = Field(description="the wheel enforces its safe bounds")


class KindLimit(BaseModel):
    min: int = Field(description="cents")
    max: int = Field(description="cents")


class KindLimitIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    min: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents; left out: unchanged")
    max: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents; left out: unchanged")


class Health(Model):
    ok: bool
    reasons: list[str]



E = {"model": Error}
ERRORS = {400: E, 401: E, 403: E, 413: E, 415: E, 421: E, 429: E}
