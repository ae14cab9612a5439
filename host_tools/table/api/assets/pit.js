/* The pit page (/pit): the table now, the bets by player, held bets with their decision, alerts
   and faults to acknowledge, the last games with their evidence, turnover and result. Everything
   is re-read from the API when the live stream says something changed. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = Cyl.el;
  const faults = [];                   // the wheel's faults seen since this page opened
  const said = Cyl.annonce();           // what the table says now (cylindre.js): "faites vos jeux" only while a bet is taken
  let timer = null;
  let may = new Set();                  // the roles this page's token covers (GET /me): what it shows and offers
  let closed = false;

  function fail(e) { $("error").textContent = e ? String(e.message || e) : ""; }

  function pill(id, text, cls) { $(id).textContent = text; $(id).className = "pill " + (cls || ""); }

  function hhmm(at) { return at ? new Date(at * 1000).toLocaleTimeString("fr-FR") : "—"; }

  const L = Cyl.L;

  /* A bet in the croupier's words, as the daemon names it from the rules ("cheval 14/17", "jeu
     zéro"), with its unit for a called bet. */
  function label(b) {
    const x = b.bet || {};
    const name = b.label || L("bet", x.type);
    return name + (x.unit ? ` (${Cyl.euros(x.unit)} la pièce)` : "");
  }

  function num(n) { return el("span", { class: "num", "data-colour": Cyl.colour(n) }, String(n)); }

  async function act(fn) {
    try { fail(null); await fn(); } catch (e) { fail(e); }
    refresh();
  }

  function renderTop(st) {
    const link = st.link || {}, wheel = st.wheel || {}, table = st.table || {};
    const ws = wheel.status || {};
    $("t-wheel").textContent = table.wheel || wheel.id || "?";
    said.set(table);
    renderAnnonce();
    closed = table.phase === "closed";
    $("b-open").hidden = !closed;
    $("b-close").hidden = closed;
    $("b-call").hidden = table.phase !== "betting";
    const li = Cyl.linkInfo(link);
    pill("t-link", li.short, li.ok ? "ok" : "bad");
    $("t-link").title = li.text;
    Cyl.notice("link", li.ok ? null : Cyl.sentence(li.text) + " Aucune mise n'est prise tant que la liaison n'est pas rétablie."
               + (li.advice ? " À faire : " + Cyl.sentence(li.advice) : ""));
    const bad = Object.entries(ws.sensors || {}).filter(([, v]) => v !== "ok").map(([k, v]) => `capteur ${k} ${L("sensor", v)}`);
    pill("t-state", "cylindre : " + (ws.state ? L("state", ws.state) : "?") + (ws.rotor_rpm_x10 ? ` · rotor ${Cyl.nombre(ws.rotor_rpm_x10 / 10, 1)}\u202ftr/min` : "")
         + (bad.length ? " · " + bad.join(", ") : "") + (li.ok ? "" : " (dernier état connu)"),
         bad.length || ws.state === "fault" ? "bad" : li.ok ? "" : "warn");
    pill("t-croupier", "croupier : " + (table.croupier || "—") + (table.croupier_since ? " depuis " + hhmm(table.croupier_since) : ""));
    if (document.activeElement !== $("croupier")) $("croupier").value = table.croupier || "";
  }

  /* "ouverte — faites vos jeux" only while a bet would be taken now: the marquee's rule, POST /bets'. */
  let shownAnnonce = "";
  function renderAnnonce() {
    const t = said.now();
    if (t.annonce === null) return;
    const text = t.annonce === "closed" ? "fermée" : "ouverte — " + L("annonce", t.annonce)
      + (t.annonce === "suspended" && t.refusing ? " (" + L("suspendu", t.refusing) + ")" : "");
    if (text === shownAnnonce) return;
    shownAnnonce = text;
    pill("t-open", text, { closed: "warn", betting: "ok", no_more_bets: "", suspended: "bad" }[t.annonce] || "");
  }
  setInterval(renderAnnonce, 200);

  function renderMoney(hist, table) {
    const midnight = new Date(); midnight.setHours(0, 0, 0, 0);
    const rows = [["jour", midnight.getTime() / 1000]];
    if (typeof table.session_since === "number") rows.unshift(["session", table.session_since]);
    $("money").replaceChildren(...rows.map(([label, since]) => {
      const g = hist.filter((h) => h.at >= since);
      const staked = g.reduce((s, h) => s + h.staked, 0), paid = g.reduce((s, h) => s + h.paid, 0);
      return el("tr", { "data-row": label }, el("th", {}, label), el("td", { class: "n" }, g.length),
                el("td", { class: "n" }, Cyl.euros(staked)), el("td", { class: "n" }, Cyl.euros(paid)),
                el("td", { class: "n" }, Cyl.euros(staked - paid)));
    }));
  }

  function renderBets(bets) {
    const by = new Map();
    for (const b of bets) {
      if (!by.has(b.player)) by.set(b.player, []);
      by.get(b.player).push(b);
    }
    const players = [...by.keys()].sort();
    $("bets").replaceChildren(...(players.length ? players.map((p) => {
      const mine = by.get(p);
      return el("tr", {}, el("td", {}, p), el("td", { class: "n" }, mine.length),
                el("td", { class: "n" }, Cyl.euros(mine.reduce((s, b) => s + b.stake, 0))),
                el("td", { class: "small" }, mine.map((b) => `${label(b)} ${Cyl.euros(b.stake)}${b.status === "locked" ? " (rien ne va plus)" : ""}`).join(" · ")));
    }) : [el("tr", {}, el("td", { colspan: 4, class: "muted" }, "aucune mise"))]));
  }

  function renderHeld(held) {
    $("n-held").textContent = held.length || "";
    const chef = may.has("chef");            // the decision is the chef's; a croupier sees what waits for it
    $("h-decision").textContent = chef ? "décision" : "décision (chef de table)";
    $("held").replaceChildren(...(held.length ? held.map((b) => el("tr", { "data-bet": b.id },
      el("td", {}, b.id), el("td", {}, b.player), el("td", {}, label(b)), el("td", { class: "n" }, Cyl.euros(b.stake)),
      el("td", { class: "n" }, b.spin ?? "—"), el("td", { class: "actions" }, chef ? [
        el("button", { class: "stop", onclick: () => act(() => Cyl.api("POST", `/bets/${b.id}/resolve`, { action: "refund" })) }, "Rembourser"),
        el("button", { class: "go", onclick: () => act(() => Cyl.api("POST", `/bets/${b.id}/resolve`, { action: "play" })) }, "Jouer au prochain coup")]
        : el("span", { class: "muted" }, "en attente du chef de table"))))
      : [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "aucune mise retenue"))]));
  }

  function renderAlerts(alerts) {
    const pending = alerts.filter((a) => a.acked_at == null);
    $("n-alerts").textContent = pending.length || "";
    $("alerts").replaceChildren(...(alerts.length ? alerts.slice(0, 30).map((a) => {
      const head = el("div", {}, el("b", {}, (a.level === "critical" ? "CRITIQUE" : "ATTENTION") + " · " + L("alert", a.code) + " "),
                      `${hhmm(a.raised_at)} — ${a.message}`,
                      a.cleared_at ? el("span", { class: "muted" }, " (terminée)") : null);
      if (a.acked_at != null) {
        return el("li", { class: "done", "data-alert": a.id }, head,
                  el("div", { class: "small" }, `acquittée par ${a.acked_by} à ${hhmm(a.acked_at)} : ${a.comment}`));
      }
      const input = el("input", { name: "comment", placeholder: "commentaire obligatoire : ce qui a été vérifié, ce qui a été fait",
                                  title: "commentaire obligatoire : ce qui a été vérifié, ce qui a été fait", maxlength: 1000 });
      const form = el("form", { onsubmit: (e) => {
        e.preventDefault();
        if (!input.value.trim()) { fail("un commentaire est obligatoire pour acquitter"); return; }
        act(() => Cyl.api("POST", `/alerts/${a.id}/ack`, { comment: input.value.trim() }));
      } }, input, el("button", { type: "submit" }, "Acquitter"));
      return el("li", { class: a.level, "data-alert": a.id }, head, form);
    }) : [el("li", { class: "muted" }, "aucune alerte")]));
  }

  function renderFaults(st) {
    $("faults").replaceChildren(...faults.slice(-10).reverse().map((f) =>
      el("li", { class: "warning" }, el("b", {}, "DÉFAUT "), `${hhmm(f.at)} — ${L("fault", f.code)}${f.signal ? " (capteur " + f.signal + ")" : ""}`,
         el("span", { class: "muted small" }, ` ${f.code}${f.detail ? " : " + f.detail : ""}`))));
  }

  /* The last games, a void one in its place with its reason (GET /games): never a hole between two numbers. */
  function renderGames(games) {
    const see = (g) => el("td", { class: "may-croupier" }, el("button", { onclick: () => evidence(g.spin) }, "voir"));
    $("games").replaceChildren(...(games.length ? games.slice(0, 10).map((g) => g.void
      ? el("tr", { "data-spin": g.spin, class: "void" }, el("td", { class: "n" }, g.spin),
           el("td", { colspan: 4 }, "coup nul : " + L("void", g.void) + " (" + hhmm(g.at) + ") — les mises restent en jeu pour le lancer suivant"),
           see(g))
      : el("tr", { "data-spin": g.spin }, el("td", { class: "n" }, g.spin), el("td", {}, num(g.number)), el("td", {}, hhmm(g.at)),
           el("td", { class: "n" }, Cyl.euros(g.staked)), el("td", { class: "n" }, Cyl.euros(g.paid)), see(g)))
      : [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "aucun coup"))]));
  }

  async function evidence(spin) {
    try {
      const r = await Cyl.api("GET", `/spins/${spin}`);
      const st = r.settlement;
      $("ev-title").textContent = `Coup ${r.spin}` + (st ? ` — ${st.number} ${st.number === 0 ? "zéro" : Cyl.colour(st.number)}` : "");
      $("evidence").replaceChildren(...Recall.render(r));
      $("s-evidence").hidden = false;
      $("s-evidence").scrollIntoView({ block: "nearest" });
    } catch (e) { fail(e); }
  }
  $("ev-close").addEventListener("click", () => { $("s-evidence").hidden = true; });

  /* Who this page is for (GET /me): a display token reads the table and its last games, a croupier
     also the bets and the recall, the chef everything and the controls. Nothing is asked that the
     token may not read, nothing offered that it may not do. */
  const ROLE_FR = { display: "afficheur", croupier: "croupier", chef: "chef de table", admin: "administrateur" };
  async function whoami() {
    const me = await Cyl.api("GET", "/me");
    may = new Set(me.may);
    document.documentElement.dataset.may = me.may.join(" ");
    const note = $("role-note");
    note.hidden = may.has("chef");
    note.textContent = may.has("chef") ? "" : `Jeton « ${me.name} » (${ROLE_FR[me.role] || me.role}) : cette page montre ce `
      + (may.has("croupier") ? "qu'un croupier peut voir : la table, ses mises et les derniers coups. Les alertes, "
         + "les décisions sur les mises retenues et les commandes de la table demandent un jeton de chef de table."
        : "qu'un afficheur peut voir : l'état de la table et les derniers coups. Les mises, les alertes et les commandes "
         + "demandent un jeton de croupier ou de chef de table.");
  }

  async function refresh() {
    clearTimeout(timer);
    timer = null;
    try {
      if (!may.size) await whoami();
      const none = Promise.resolve([]);
      const [st, hist, games, open, locked, held, alerts] = await Promise.all([
        Cyl.api("GET", "/state"), Cyl.api("GET", "/history?limit=10000"), Cyl.api("GET", "/games?limit=10"),
        may.has("croupier") ? Cyl.api("GET", "/bets?status=open&limit=5000") : none,
        may.has("croupier") ? Cyl.api("GET", "/bets?status=locked&limit=5000") : none,
        may.has("croupier") ? Cyl.api("GET", "/bets?status=held&limit=5000") : none,
        may.has("chef") ? Cyl.api("GET", "/alerts?limit=100") : none]);
      renderTop(st);
      renderMoney(hist, st.table || {});
      renderBets(open.concat(locked));
      renderHeld(held);
      renderAlerts(alerts);
      renderFaults(st);
      renderGames(games);
      document.body.dataset.loaded = String(Date.now());
    } catch (e) { fail(e); }
  }

  $("b-open").addEventListener("click", () => act(() => Cyl.api("POST", "/table/open")));
  $("b-close").addEventListener("click", () => {
    if (window.confirm("Fermer la table ? Un coup en cours sera annulé.")) act(() => Cyl.api("POST", "/table/close"));
  });

  $("b-call").addEventListener("click", () => act(() => Cyl.api("POST", "/table/call")));

  $("f-croupier").addEventListener("submit", (e) => {
    e.preventDefault();
    act(() => Cyl.api("PUT", "/table/croupier", { croupier: $("croupier").value.trim() }));
  });

  function soon() { if (!timer) timer = setTimeout(refresh, 200); }

  const live = () => Cyl.live({
    // what this token may read: the bets' own events need a croupier, the alerts a chef
    kinds: ["announce", "settlement", "wheel", "link", "status"].concat(may.has("croupier") ? ["bet", "cancel"] : [],
                                                                        may.has("chef") ? ["alert"] : []),
    onOpen: refresh,
    onEvent: (kind, body) => {
      if (kind === "status") { if (body.table) said.set(body.table); renderAnnonce(); return; }
      if (kind === "wheel" && body.ev === "fault") faults.push({ at: Date.now() / 1000, code: body.code, detail: body.detail, signal: body.signal });
      if (kind === "wheel" && body.ev === "rnvp") said.patch({ annonce: closed ? "closed" : "no_more_bets", refusing: "poussette" });
      if ((kind === "wheel" && body.ev === "void") || kind === "settlement") said.patch({ annonce: closed ? "closed" : "suspended", refusing: "wheel_not_heard" });
      renderAnnonce();
      soon();
    },
    onLink: (s) => pill("t-stream", s === "up" ? "en direct" : "reconnexion…", s === "up" ? "" : "bad"),
  });
  (async () => {                        // the role first: the stream asks only what the token may read
    for (;;) {
      try { await whoami(); break; } catch (e) {
        if (e.status !== 401) fail(e);
        await new Promise((res) => { const t = setTimeout(res, e.status === 401 ? 10000 : 3000);
          window.addEventListener("cyl-token", () => { clearTimeout(t); res(); }, { once: true }); });
      }
    }
    live();
  })();
  setInterval(() => { if (may.size) refresh(); }, 15000);
  // the link and the wheel's state every 5 s: a cut cable says nothing on the stream
  setInterval(async () => { if (may.size) try { renderTop(await Cyl.api("GET", "/state")); } catch (e) { /* refresh() says it */ } }, 5000);
})();
