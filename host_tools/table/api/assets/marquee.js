/* The marquee (/marquee): what the table says now, the last number, the last numbers and their
   figures. Everything on it is derived from the table's current state, never from a queue of past
   events (docs/pit/marquee.md): the banner and the big number always name the same spin, a state that is
   over is dropped at once, and "faites vos jeux" shows only while a bet would be taken now — the
   rule POST /bets applies (GET /state's `table.annonce`, kept fresh by each wheel status).
   Options in the address: ?n=500 (games for the figures; default the table's setting), ?strip=18,
   ?hold=4 (seconds the number stays in the banner after its spin is settled, unless the next spin
   is called sooner), ?lang=fr,en (the banner and the headings in French and English). */
"use strict";

(() => {
  const STRIP = Cyl.param("strip", 18, 1, 40);
  const HOT = 4;
  const HOLD_MS = 1000 * Cyl.param("hold", 4, 0, 60);
  const PAID_MS = HOLD_MS / 2;          // "tout est payé" after the number, when something was paid
  const EN = /^fr[ +,]en$/.test(new URLSearchParams(location.search).get("lang") || "");     // ?lang=fr,en
  const $ = (id) => document.getElementById(id);
  const numbers = new Map();            // spin -> number, every settled game we know of
  const table = Cyl.annonce();          // what the table says now (cylindre.js)
  let N = Cyl.param("n", 0, 10, 10000);   // 0: the table's own setting (GET /table/display)
  let display = { sectors: {}, columns: {} };
  let last = null;                      // the last settled spin {spin, number, paid, at}: the big number
  let voided = null;                    // the last void {spin, reason, at} told live
  let authorized = true;

  /* The banner's words for a state code, French then English. */
  const WORDS = {
    betting: ["Faites vos jeux", "Place your bets"], rnvp: ["Rien ne va plus", "No more bets"],
    paid: ["Tout est payé", "All bets paid"], closed: ["Table fermée", "Table closed"],
    void: ["Coup nul — on relance", "No spin — relaunch"], suspended: ["Mises suspendues", "Bets suspended"],
    unauthorized: ["Écran non autorisé", "Screen not authorised"], connecting: ["Connexion…", "Connecting…"],
  };
  const COLOUR_EN = { rouge: "red", noir: "black", zero: "zero" };

  /* The banner now, from the state alone: [code, French, English]. The number stays HOLD_MS after
     its spin was settled and the table has not moved on; the next call drops it at once. */
  function bannerNow(now) {
    if (!authorized) return ["closed", ...WORDS.unauthorized];
    const t = table.now(now);
    if (t.annonce === null) return ["connecting", ...WORDS.connecting];
    if (t.annonce === "closed") return ["closed", ...WORDS.closed];
    if (t.annonce === "no_more_bets") return ["rnvp", ...WORDS.rnvp];
    const fresh = (x, ms) => x && x.at && now - x.at < ms;
    if (voided && fresh(voided, HOLD_MS) && (!last || voided.spin > last.spin)) return ["void", ...WORDS.void];
    if (last && fresh(last, HOLD_MS)) {
      const c = Cyl.colour(last.number);
      return ["result", `${last.number} ${last.number === 0 ? "zéro" : c}`, `${last.number} ${COLOUR_EN[c]}`];
    }
    if (last && last.paid && fresh(last, HOLD_MS + PAID_MS)) return ["paid", ...WORDS.paid];
    if (t.annonce === "betting") return ["betting", ...WORDS.betting];
    const why = Cyl.L("suspendu", t.refusing || "unknown");
    return ["suspended", WORDS.suspended[0] + (t.refusing ? " — " + why : ""), WORDS.suspended[1]];
  }

  let shownBanner = "";
  function renderBanner() {
    const [code, fr, en] = bannerNow(Date.now());
    const key = code + "|" + fr + "|" + en;
    if (key === shownBanner) return;
    shownBanner = key;
    $("marquee").dataset.phase = code;
    $("phase").textContent = fr;
    $("phase-en").textContent = EN ? en : "";
    fitBanner();
  }
  setInterval(renderBanner, 100);        // a hold or a verdict runs out with no event: seen within 0.1 s

  function showNumber() {
    const b = $("number");
    if (!last) { b.textContent = "–"; b.dataset.colour = ""; $("said").textContent = ""; return; }
    if (b.dataset.spin === String(last.spin)) return;
    b.dataset.spin = String(last.spin);
    b.textContent = String(last.number);
    b.dataset.colour = Cyl.colour(last.number);
    $("said").textContent = Cyl.describe(last.number);
    $("spin").textContent = `coup ${last.spin}`;
    if (last.at) {                           // a number won now, not one read back: the winning animation
      b.classList.remove("win");
      void b.offsetWidth;                    // restart it
      b.classList.add("win");
    }
  }

  /* A settled spin: the big number, the banner and the figures take it together. */
  function settled(spin, number, paid, live) {
    numbers.set(spin, number);
    if (!last || spin >= last.spin) {
      last = { spin, number, paid: !!paid, at: live ? Date.now() : 0 };
      showNumber();
    }
    render();
  }

  function chip(n, extra) {
    return Cyl.el("span", { class: "num", "data-colour": Cyl.colour(n) }, String(n), extra || null);
  }

  function pct(k, total) { return total ? Math.round(100 * k / total) : 0; }

  /* Each part of a bar as wide as its share; its text the longest that fits in it ("rouge 48 %",
     "48 %", nothing: its title still says it). No games: an empty bar, never equal parts. */
  function fill(bar, parts, total) {
    const spans = $(bar).children;
    $(bar).classList.toggle("empty", !total);
    parts.forEach(([label, k], i) => {
      const p = pct(k, total);
      spans[i].style.flexGrow = String(total ? k : 0);
      spans[i].dataset.texts = JSON.stringify(total && k ? [`${label} ${p}\u202f%`, `${p}\u202f%`] : []);
      spans[i].title = total ? `${label} ${p}\u202f% (${k} sur ${total})` : "";
    });
    fitLater();
  }

  /* The banner's words on one line at the largest size that fits (the stylesheet's size first). */
  function fitBanner() {
    const b = $("banner"), p = $("phase");
    b.style.fontSize = "";
    let size = parseFloat(getComputedStyle(b).fontSize);
    for (let i = 0; i < 14 && (p.scrollWidth > p.clientWidth + 1 || $("phase-en").scrollWidth > $("phase-en").clientWidth + 1); i++) {
      size *= 0.92;
      b.style.fontSize = size + "px";
    }
  }
  window.addEventListener("resize", fitBanner);

  let fitting = null;
  function fitLater() { if (!fitting) fitting = requestAnimationFrame(() => { fitting = null; fit(); }); }
  function fit() {
    for (const span of document.querySelectorAll(".bars span")) {
      const texts = JSON.parse(span.dataset.texts || "[]");
      span.textContent = "";
      for (const t of texts) {
        span.textContent = t;
        if (span.scrollWidth <= span.clientWidth) break;
        span.textContent = "";
      }
    }
  }
  window.addEventListener("resize", fitLater);
  // a notice coming or going at the top resizes the board without resizing the window
  if (window.ResizeObserver) new ResizeObserver(() => { fitBanner(); fitLater(); }).observe($("marquee"));
  document.querySelector(".bars").addEventListener("transitionend", fitLater);     // the parts grow in 0.4 s
  if (document.fonts) document.fonts.ready.then(fitLater);

  function render() {
    const spins = [...numbers.keys()].sort((a, b) => b - a);
    const n = N || 500;
    const recent = spins.slice(0, n).map((s) => numbers.get(s));
    $("strip").replaceChildren(...spins.slice(0, STRIP).map((s) => Cyl.el("li", { "data-spin": s }, chip(numbers.get(s)))));
    const t = recent.length;
    const c = (f) => recent.filter(f).length;
    const z = c((x) => x === 0);
    const inSet = (name, src) => { const s = new Set(src[name] || []); return c((x) => s.has(x)); };
    fill("b-colour", [["rouge", c((x) => Cyl.RED.has(x))], ["zéro", z], ["noir", c((x) => x && !Cyl.RED.has(x))]], t);
    fill("b-parity", [["pair", c((x) => x && x % 2 === 0)], ["impair", c((x) => x % 2 === 1)]], t - z);
    fill("b-half", [["manque", c((x) => x && x <= 18)], ["passe", c((x) => x >= 19)]], t - z);
    fill("b-dozen", [["1re", c((x) => x >= 1 && x <= 12)], ["2e", c((x) => x >= 13 && x <= 24)], ["3e", c((x) => x >= 25)]], t - z);
    fill("b-column", [["col. 1", inSet("1", display.columns)], ["col. 2", inSet("2", display.columns)],
                      ["col. 3", inSet("3", display.columns)]], t - z);
    fill("b-sector", [["voisins", inSet("voisins", display.sectors)], ["tiers", inSet("tiers", display.sectors)],
                      ["orphelins", inSet("orphelins", display.sectors)]], t);
    const counts = new Array(37).fill(0);
    recent.forEach((x) => counts[x]++);
    const since = new Array(37).fill(t);        // games since each number last came, within the window
    recent.forEach((x, i) => { if (since[x] === t) since[x] = i; });
    const order = [...counts.keys()];
    const hot = order.filter((x) => counts[x]).sort((a, b) => counts[b] - counts[a] || a - b).slice(0, HOT);
    const cold = [...order].sort((a, b) => counts[a] - counts[b] || a - b).slice(0, HOT);
    const absent = [...order].sort((a, b) => since[b] - since[a] || a - b).slice(0, HOT);
    const badge = (x) => chip(x, Cyl.el("small", {}, "×" + counts[x]));
    $("hot").replaceChildren(...(t ? hot.map(badge) : []));
    $("cold").replaceChildren(...(t ? cold.map(badge) : []));
    $("absent").replaceChildren(...(t ? absent.map((x) => chip(x, Cyl.el("small", { title: since[x] >= t
      ? `pas sorti sur les ${t} derniers coups` : `absent depuis ${since[x]} coups` }, (since[x] >= t ? "≥" : "") + since[x]))) : []));
    $("over").textContent = !t ? "aucun coup encore : les chiffres viendront avec les premiers numéros"
      : (t === 1 ? "sur le dernier coup" : `sur les ${t} derniers coups`)
        + (z ? ` ; zéro ${z} fois, sa part dans la barre rouge / noir et les secteurs, hors des autres chances simples, douzaines et colonnes`
             : " ; zéro hors des chances simples, douzaines et colonnes")
        + " ; absents : coups depuis la dernière sortie";
  }

  /* GET /state: the truth on (re)connection, on a link change, on an open or a close, every 5 s.
     A read that an event overtook (the stream said something newer while it was on its way) is
     not applied: it is read again. */
  let events = 0, reading = null;
  async function readState() {
    if (reading) return reading;
    reading = (async () => {
      for (let tries = 0; tries < 3; tries++) {
        const at = events;
        const st = await Cyl.api("GET", "/state");
        showLink(st.link);
        if (at !== events) continue;
        table.set(st.table);
        return st;
      }
    })().finally(() => { reading = null; renderBanner(); });
    return reading;
  }

  async function reload() {
    try {
      display = await Cyl.api("GET", "/table/display");
      if (!N) N = display.history;
      $("t-name").textContent = display.table || "";
    } catch (e) { /* the figures still come: sectors and columns stay empty */ }
    const hist = await Cyl.api("GET", `/history?limit=${Math.max(N || 500, STRIP)}`);
    for (const g of hist) numbers.set(g.spin, g.number);
    const top = hist.length ? hist[0] : null;            // newest first
    if (top && (!last || top.spin > last.spin)) {         // games played while we were away
      last = { spin: top.spin, number: top.number, paid: top.paid > 0, at: 0 };
      showNumber();
    }
    await readState();
    render();
    limits();                                  // the limits may have changed while we were away
  }

  let later = null;
  function readSoon() { clearTimeout(later); later = setTimeout(() => readState().catch(() => {}), 150); }

  function onEvent(kind, body) {
    if (kind === "status") {                          // the wheel's word, with what the table says now
      if (body.table) table.set(body.table);
    } else {
      events++;
      if (kind === "wheel" && body.ev === "rnvp") {
        const closed = table.now().annonce === "closed";
        table.patch({ annonce: closed ? "closed" : "no_more_bets", refusing: closed ? "table_closed" : "poussette",
                      locked: body.spin, spin: body.spin, phase: closed ? "closed" : "no_more_bets" });
      } else if (kind === "wheel" && body.ev === "void") {
        voided = { spin: body.spin, reason: body.reason, at: Date.now() };
        const closed = table.now().annonce === "closed";
        table.patch({ annonce: closed ? "closed" : "suspended", refusing: closed ? "table_closed" : "wheel_not_heard", locked: null });
      } else if (kind === "settlement" && Number.isInteger(body.number)) {
        const closed = table.now().annonce === "closed";
        table.patch({ annonce: closed ? "closed" : "suspended", refusing: closed ? "table_closed" : "wheel_not_heard", locked: null });
        settled(body.spin, body.number, body.totals && body.totals.paid > 0, true);
      } else if (kind === "link" || kind === "announce") {
        readSoon();                                   // an open, a close, the link: read the state again
      }
    }
    renderBanner();
  }

  /* The limits of every kind of bet, as the table enforces them. */
  async function limits() {
    try {
      const l = await Cyl.api("GET", "/table/limits");
      const NAMES = [["plein", "plein"], ["cheval", "cheval"], ["transversale", "transversale"], ["carre", "carré"],
                     ["sixain", "sixain"], ["douzaine", "douzaine"], ["colonne", "colonne"], ["simple", "chances simples"]];
      const rows = NAMES.filter(([k]) => l[k]).map(([k, label]) =>
        Cyl.el("span", { "data-kind": k }, `${label} ${Cyl.euros(l[k].min)} – ${Cyl.euros(l[k].max)}`));
      $("limits").replaceChildren(...(rows.length ? [Cyl.el("b", {}, EN ? "Mises · Limits" : "Mises"), ...rows] : []));
    } catch (e) {
      $("limits").textContent = "";          // not readable now: nothing shown rather than a guess
    }
  }

  /* The link with the wheel, told on the screen when it is not up (docs/pit/marquee.md). */
  let linkOk = true, streamUp = false;
  function showLink(link) {
    const info = Cyl.linkInfo(link);
    linkOk = info.ok;
    // a public screen says what it means for the numbers; the pit says why and what to check
    Cyl.notice("link", info.ok ? null : info.short[0].toUpperCase() + info.short.slice(1)
      + " — aucune mise n'est prise, les numéros affichés peuvent ne pas être à jour.");
    dot();
  }
  function dot() {
    const up = streamUp && linkOk;
    $("link").className = "link " + (up ? "up" : "down");
    $("link").title = !streamUp ? "reconnexion…" : linkOk ? "en direct" : "liaison avec le cylindre coupée";
  }
  setInterval(() => { if (streamUp) readState().catch(() => {}); }, 5000);

  Cyl.onAuth((ok) => { authorized = ok; renderBanner(); });

  if (EN) {
    document.documentElement.dataset.lang = "fr+en";
    for (const [id, en] of [["h-hot", "Hot"], ["h-cold", "Cold"], ["h-absent", "Absent"]]) {
      $(id).append(Cyl.el("span", { class: "en" }, " · " + en));
    }
  }
  $("strip").style.setProperty("--n", String(STRIP));
  $("strip").style.setProperty("--half", String(STRIP > 10 ? Math.ceil(STRIP / 2) : STRIP));
  render();
  renderBanner();

  Cyl.live({
    kinds: ["announce", "settlement", "wheel", "link", "status"],
    onEvent,
    onOpen: reload,
    onLink: (s) => {
      streamUp = s === "up";
      if (!streamUp) table.patch({ annonce: null });      // no stream: the screen does not know what is said
      dot();
      renderBanner();
    },
  });
})();
