/* The recall of one spin (GET /spins/N) as a croupier tells it: what the wheel did, in order and in
   words (launch, directions, rien ne va plus, the drop, the number or why the spin is void), what
   the croupier said, the payments in the order they are paid, every bet with its outcome, who did
   what on this spin; the wheel's raw events and frames behind "détails techniques". */
"use strict";

const Recall = (() => {
  const el = Cyl.el, L = Cyl.L, n = Cyl.nombre;
  const DIR = { 1: "sens horaire", "-1": "sens anti-horaire" };

  function time(at) { return at ? new Date(at * 1000).toLocaleTimeString("fr-FR") : "—"; }
  function dir(d) { return DIR[d] || "sens inconnu"; }
  function num(x) { return el("span", { class: "num", "data-colour": Cyl.colour(x) }, String(x)); }
  function sec(us) { return n(us / 1e6, us < 1e7 ? 2 : 1) + "\u202fs"; }

  /* One of the wheel's events in words (docs/integrators/wheel-events.md). */
  function said(e) {
    switch (e.ev) {
      case "launch": {
        const parts = [`Lancer : cylindre ${dir(e.rotor_dir)}`
          + (e.rotor_rpm_x10 ? ` à ${n(e.rotor_rpm_x10 / 10, 1)}\u202ftr/min` : ""), `bille ${dir(e.ball_dir)}`];
        if (e.lap_us) parts.push(`premier tour de bille en ${sec(e.lap_us)}`);
        if (e.release_pocket !== null && e.release_pocket !== undefined) parts.push(`case ${e.release_pocket} sous le repère au lâcher`);
        const v = (e.violations || []).map((x) => L("void", x));
        return [parts.join(", "), v.length ? el("b", { class: "bad" }, ` — infraction : ${v.join(", ")}`) : null];
      }
      case "rnvp":
        return [`Rien ne va plus après ${e.laps} tours de bille`,
          ` (${L("rnvp_why", e.why)}${typeof e.lead_us === "number" && e.lead_us > 0 ? `, ${sec(e.lead_us)} avant la chute prévue` : ""})`];
      case "drop":
        return [`La bille quitte la piste après ${e.laps} tours`
          + (typeof e.drop_angle_x10 === "number" ? `, à ${n(e.drop_angle_x10 / 10, 0)}° du repère` : "")
          + (e.drop_pocket !== null && e.drop_pocket !== undefined ? `, devant la case ${e.drop_pocket}` : "")];
      case "result":
        return ["Numéro ", num(e.number), ` ${e.number === 0 ? "zéro" : Cyl.describe(e.number)} : bille au repos`
          + (Array.isArray(e.sightings) ? `, vue ${e.sightings.length} fois par les capteurs de case` : "")
          + (e.confirmed_by ? ` (confirmé par ${e.confirmed_by})` : "")];
      case "void":
        return [el("b", {}, "Coup nul : " + L("void", e.reason)), e.detail ? el("span", { class: "muted small" }, ` ${e.reason} : ${e.detail}`) : null];
      case "fault":
        return [el("b", {}, "Défaut : " + L("fault", e.code)), e.signal ? ` (capteur ${e.signal})` : "",
          el("span", { class: "muted small" }, ` ${e.code}${e.detail ? " : " + e.detail : ""}`)];
      case "boot":
        return [`Le cylindre redémarre (${({ power: "coupure de courant", watchdog: "chien de garde", soft: "redémarrage logiciel" })[e.reset_cause] || e.reset_cause || "?"})`
          + (e.interrupted !== null && e.interrupted !== undefined ? `, coup ${e.interrupted} interrompu` : "")];
      default:
        return [String(e.ev)];
    }
  }

  function timeline(r) {
    const rows = r.events.map((e) => [e.received_at, el("li", { "data-ev": e.event.ev }, el("time", {}, time(e.received_at)), " ", ...said(e.event))]);
    for (const a of r.announcements) rows.push([a.at, el("li", { class: "said" }, el("time", {}, time(a.at)), " Annonce : « " + a.text + " »")]);
    rows.sort((x, y) => x[0] - y[0]);
    return el("ol", { class: "timeline" }, ...rows.map((x) => x[1]));
  }

  function payments(r) {
    const st = r.settlement;
    if (!st) {
      const v = r.events.find((e) => e.event.ev === "void");
      return el("p", { class: "muted" }, v ? `Coup nul (${L("void", v.event.reason)}) : rien n'est payé ni ramassé, les mises restent pour le lancer suivant.`
        : "Pas de règlement pour ce coup : aucun numéro n'a été réglé.");
    }
    const by = new Map(r.bets.map((b) => [b.id, b]));
    const order = st.payment_order || [];
    const payer = st.paying_croupier ? `Le ${L("croupier", st.paying_croupier)} paie, le ${L("croupier", st.raking_croupier)} ramasse. ` : "";
    const t = st.totals || {};
    const head = el("p", {}, payer, `Misé ${Cyl.euros(t.staked ?? st.staked)}, payé ${Cyl.euros(t.paid ?? st.paid)}`
      + (t.lost !== undefined ? `, ramassé ${Cyl.euros(t.lost)}` : "") + (t.imprisoned ? `, en prison ${Cyl.euros(t.imprisoned)}` : "") + ".");
    const pay = order.length ? el("table", { class: "grid", id: "ev-payments" },
      el("thead", {}, el("tr", {}, el("th", {}, "ordre"), el("th", {}, "combinaison"), el("th", {}, "joueur"), el("th", {}, "mise"),
        el("th", { class: "n" }, "jeton"), el("th", { class: "n" }, "gain"))),
      el("tbody", {}, ...order.map((p, i) => el("tr", { "data-bet": p.id }, el("td", { class: "n" }, i + 1), el("td", {}, p.combination),
        el("td", {}, (by.get(p.id) || {}).player || "—"), el("td", {}, p.id), el("td", { class: "n" }, Cyl.euros(p.stake)),
        el("td", { class: "n" }, Cyl.euros(p.won))))))
      : el("p", { class: "muted" }, "Rien à payer sur les combinaisons.");
    return el("div", {}, el("h3", {}, "Paiements, dans l'ordre où ils sont faits"), head, pay);
  }

  function bets(r) {
    if (!r.bets.length) return el("p", { class: "muted" }, "Aucune mise sur ce coup.");
    const rows = [...r.bets].sort((a, b) => a.id < b.id ? -1 : 1).map((b) => {
      const res = b.result || {};
      const outcome = b.result ? L("outcome", res.outcome) : L("status", b.status) + (b.reason ? " : " + L("refusal", b.reason) : "");
      return el("tr", { "data-bet": b.id }, el("td", {}, b.id), el("td", {}, b.player), el("td", {}, res.label || b.label || L("bet", (b.bet || {}).type)),
        el("td", { class: "n" }, Cyl.euros(res.staked ?? b.stake)), el("td", {}, outcome, res.imprisoned ? ` (${Cyl.euros(res.imprisoned)})` : ""),
        el("td", { class: "n" }, b.result ? Cyl.euros(res.paid) : "—"));
    });
    return el("div", {}, el("h3", {}, "Les mises du coup"),
      el("table", { class: "grid", id: "ev-bets" }, el("thead", {}, el("tr", {}, el("th", {}, "mise"), el("th", {}, "joueur"), el("th", {}, "pari"),
        el("th", { class: "n" }, "misé"), el("th", {}, "issue"), el("th", { class: "n" }, "payé"))), el("tbody", {}, ...rows)));
  }

  function audit(r) {
    if (!r.audit || !r.audit.length) return null;
    return el("div", {}, el("h3", {}, "Actions sur ce coup"), el("ul", { class: "list" }, ...r.audit.map((a) =>
      el("li", { class: "small" }, `${time(a.at)} — ${a.who} (${a.role}) : ${a.action}${a.target ? " " + a.target : ""}`))));
  }

  function technical(r) {
    const lines = [];
    for (const e of r.events) lines.push(`${e.boot}#${e.seq} ${JSON.stringify(e.event)}\ntrame ${e.frame_hex}`);
    if (r.settlement) lines.push("règlement " + JSON.stringify(r.settlement));
    return el("details", { class: "technical" }, el("summary", {}, "détails techniques (événements du cylindre, trames, règlement)"),
      el("pre", { class: "raw" }, lines.join("\n\n")));
  }

  function render(r) {
    return [el("h3", {}, "Déroulement"), timeline(r), payments(r), bets(r), audit(r), technical(r)].filter(Boolean);
  }

  return { render, said };
})();
