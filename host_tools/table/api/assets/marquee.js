/* The marquee (/marquee): the wheel's state, the number, the last numbers and their figures.
   Options in the address: ?n=100 (games for the figures, hot and cold), ?strip=18, ?hold=4
   (seconds the number and "tout est payé" stay in the banner at least: the daemon sends a game's
   announcements together, and a banner nobody could read would be no banner). */
"use strict";

(() => {
  const N = Cyl.param("n", 100, 10, 10000);
  const STRIP = Cyl.param("strip", 18, 1, 40);
  const HOT = 5;
  const HOLD_MS = 1000 * Cyl.param("hold", 4, 0, 60);
  const $ = (id) => document.getElementById(id);
  const numbers = new Map();           // spin -> number, every settled game we know of
  let pending = null;                   // the wheel's result, shown once the table acts on it
  let shownSpin = -1;                   // the spin whose number is on screen

  const PHASES = {
    betting: "Faites vos jeux", rnvp: "Rien ne va plus", result: "", paid: "Tout est payé",
    closed: "Table fermée", void: "Coup nul",
  };

  /* The banner shows each state in order; the number, "tout est payé" and "coup nul" stay at
     least HOLD_MS before the next one replaces them, any other state MIN_MS (no flicker when
     states queue up behind a held one). */
  const MIN_MS = 300;
  const banner = [];
  let heldUntil = 0, bannerTimer = null;
  function setPhase(p, text) {
    banner.push([p, text !== undefined ? text : PHASES[p]]);
    nextBanner();
  }
  function nextBanner() {
    const wait = heldUntil - Date.now();
    if (bannerTimer || !banner.length) return;
    if (wait > 0) { bannerTimer = setTimeout(() => { bannerTimer = null; nextBanner(); }, wait); return; }
    const [p, text] = banner.shift();
    $("marquee").dataset.phase = p;
    $("phase").textContent = text;
    fitBanner();
    heldUntil = Date.now() + (["result", "paid", "void"].includes(p) ? HOLD_MS : MIN_MS);
    nextBanner();
  }
  function currentPhase() { return banner.length ? banner[banner.length - 1][0] : $("marquee").dataset.phase; }

  function showNumber(n, spin) {
    shownSpin = spin;
    const b = $("number");
    b.textContent = String(n);
    b.dataset.colour = Cyl.colour(n);
    $("said").textContent = Cyl.describe(n);
  }

  function chip(n, extra) {
    return Cyl.el("span", { class: "num", "data-colour": Cyl.colour(n) }, String(n), extra || null);
  }

  function pct(k, total) { return total ? Math.round(100 * k / total) : 0; }

  /* Each part of a bar as wide as its share; its text the longest that fits in it ("rouge 48 %",
     "48 %", nothing): a label is never cut. */
  function fill(bar, parts, total) {
    const spans = $(bar).children;
    parts.forEach(([label, k], i) => {
      const p = pct(k, total);
      spans[i].style.flexGrow = String(Math.max(k, total ? 0 : 1));
      spans[i].dataset.texts = JSON.stringify(p ? [`${label} ${p}\u202f%`, `${p}\u202f%`, `${p}`] : []);
      spans[i].title = `${label} ${p}\u202f%`;
    });
    fitLater();
  }

  /* The banner's words on one line at the largest size that fits (the stylesheet's size first). */
  function fitBanner() {
    const b = $("banner"), p = $("phase");
    b.style.fontSize = "";
    let size = parseFloat(getComputedStyle(b).fontSize);
    for (let i = 0; i < 12 && p.scrollWidth > p.clientWidth + 1; i++) {
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
    const recent = spins.slice(0, N).map((s) => numbers.get(s));
    const strip = $("strip");
    strip.replaceChildren(...spins.slice(0, STRIP).map((s) => Cyl.el("li", { "data-spin": s }, chip(numbers.get(s)))));
    const t = recent.length;
    const c = (f) => recent.filter(f).length;
    const z = c((n) => n === 0);
    fill("b-colour", [["rouge", c((n) => Cyl.RED.has(n))], ["zéro", z], ["noir", c((n) => n && !Cyl.RED.has(n))]], t);
    fill("b-parity", [["pair", c((n) => n && n % 2 === 0)], ["impair", c((n) => n % 2 === 1)]], t - z);
    fill("b-half", [["manque", c((n) => n && n <= 18)], ["passe", c((n) => n >= 19)]], t - z);
    fill("b-dozen", [["1re", c((n) => n >= 1 && n <= 12)], ["2e", c((n) => n >= 13 && n <= 24)], ["3e", c((n) => n >= 25)]], t - z);
    const counts = new Array(37).fill(0);
    recent.forEach((n) => counts[n]++);
    const order = [...counts.keys()];
    const hot = [...order].filter((n) => counts[n]).sort((a, b) => counts[b] - counts[a] || a - b).slice(0, HOT);
    const cold = [...order].sort((a, b) => counts[a] - counts[b] || a - b).slice(0, HOT);
    const badge = (n) => chip(n, Cyl.el("small", {}, "×" + counts[n]));
    $("hot").replaceChildren(...(t ? hot.map(badge) : []));
    $("cold").replaceChildren(...(t ? cold.map(badge) : []));
    $("over").textContent = !t ? "aucun coup encore : les chiffres viendront avec les premiers numéros"
      : (t === 1 ? "sur le dernier coup" : `sur les ${t} derniers coups`) + " (zéro exclu des chances simples et des douzaines)";
  }

  async function reload() {
    const hist = await Cyl.api("GET", `/history?limit=${Math.max(N, STRIP)}`);
    for (const g of hist) numbers.set(g.spin, g.number);
    const st = await Cyl.api("GET", "/state");
    showLink(st.link);
    const table = st.table || {};
    if (table.phase === "closed") setPhase("closed");
    else if (table.phase === "no_more_bets") setPhase("rnvp");
    else if (!currentPhase() || currentPhase() === "closed") setPhase("betting");
    const latest = Math.max(-1, ...numbers.keys());
    if (latest > shownSpin) showNumber(numbers.get(latest), latest);       // games played while we were away
    render();
    limits();                                  // the limits may have changed while we were away
  }

  function onEvent(kind, body) {
    if (kind === "wheel") {
      if (body.ev === "rnvp") setPhase("rnvp");
      else if (body.ev === "result" && Number.isInteger(body.number)) pending = { spin: body.spin, number: body.number };
      else if (body.ev === "void") { pending = null; setPhase("void", "Coup nul — on relance"); }
    } else if (kind === "announce") {
      const text = String(body.text || "");
      if (pending && body.spin === pending.spin) {        // the table took the result: show it
        showNumber(pending.number, pending.spin);
        numbers.set(pending.spin, pending.number);
        setPhase("result", String(pending.number) + " " + (pending.number === 0 ? "zéro" : Cyl.colour(pending.number)));
        pending = null;
        render();
      }
      if (text.startsWith("tout est payé")) setPhase("paid");
      else if (text === "faites vos jeux") setPhase("betting");
      else if (text === "rien ne va plus") setPhase("rnvp");
      else if (text === "la table est fermée") setPhase("closed");
    } else if (kind === "settlement" && Number.isInteger(body.number)) {
      numbers.set(body.spin, body.number);
      render();
    }
  }

  async function limits() {
    try {
      const l = await Cyl.api("GET", "/table/limits");
      const row = (k, label) => l[k] ? Cyl.el("span", {}, `${label} ${Cyl.euros(l[k].min)} – ${Cyl.euros(l[k].max)}`) : null;
      const rows = [row("plein", "plein"), row("simple", "chances simples"), row("douzaine", "douzaines")].filter(Boolean);
      if (rows.length) rows[0].prepend("Mises : ");
      $("limits").replaceChildren(...rows);
    } catch (e) {
      $("limits").textContent = "";          // not readable now: nothing shown rather than a guess
    }
  }

  /* The link with the wheel, told on the screen when it is not up (docs/pit/marquee.md): the numbers
     shown may then be behind the table. Read from /state every 5 s. */
  let linkOk = true, streamUp = false;
  function showLink(link) {
    const info = Cyl.linkInfo(link);
    linkOk = info.ok;
    // a public screen says what it means for the numbers; the pit says why and what to check
    Cyl.notice("link", info.ok ? null : info.short[0].toUpperCase() + info.short.slice(1) + " — les numéros affichés peuvent ne pas être à jour.");
    dot();
  }
  function dot() {
    const up = streamUp && linkOk;
    $("link").className = "link " + (up ? "up" : "down");
    $("link").title = !streamUp ? "reconnexion…" : linkOk ? "en direct" : "liaison avec le cylindre coupée";
  }
  async function watchLink() {
    try { showLink((await Cyl.api("GET", "/state")).link); } catch (e) { /* told by the stream's dot or the token notice */ }
  }
  setInterval(watchLink, 5000);

  Cyl.onAuth((ok) => { if (!ok) setPhase("closed", "Écran non autorisé"); });

  $("strip").style.setProperty("--n", String(STRIP));
  $("strip").style.setProperty("--half", String(STRIP > 10 ? Math.ceil(STRIP / 2) : STRIP));

  Cyl.live({
    onEvent,
    onOpen: reload,
    onLink: (s) => { streamUp = s === "up"; dot(); },
  });
})();
