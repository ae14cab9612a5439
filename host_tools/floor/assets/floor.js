/* The floor page: tiles grouped by pit, every table's alerts, the statistics of each wheel, the
   signed reports to download, and the commands a pit boss sends. Long polling of /floor/api/state
   (answers as soon as the floor changes); the token comes once in the address (#token=...) or from
   the page's own form, and is kept for this tab only. */
(function () {
  "use strict";
  const KEY = "cylindre.floor.token";
  const ROLE_RANK = { surveillance: 0, pit_boss: 1, director: 2, admin: 3 };
  const ROLE_FR = { surveillance: "surveillance", pit_boss: "chef de partie", director: "directeur des jeux", admin: "administrateur" };
  let me = { name: "", role: "surveillance" }, version = -1, editing = false;

  function token() {
    const m = location.hash.match(/token=([^&]+)/);
    if (m) {
      sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(KEY) || "";
  }
  // no token, or one refused: the page's own form asks for it (never a browser prompt), then starts again
  function login(why) {
    document.querySelector("main").hidden = true;
    const f = document.getElementById("login");
    document.getElementById("login-why").textContent = why || "";
    f.hidden = false;
    return new Promise(done => f.addEventListener("submit", ev => {
      ev.preventDefault();
      sessionStorage.setItem(KEY, String(new FormData(f).get("token")).trim());
      f.hidden = true;
      document.querySelector("main").hidden = false;
      done();
    }, { once: true }));
  }
  async function api(method, path, body) {
    const r = await fetch(path, { method, headers: { "Authorization": "Bearer " + token(), "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body) });
    let data = {};
    try { data = await r.json(); } catch (e) { /* empty */ }
    if (r.status === 401) { sessionStorage.removeItem(KEY); }
    return { status: r.status, data };
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  const euros = c => (c < 0 ? "−" : "") + (Math.abs(c) / 100).toLocaleString("fr-FR", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) + "\u202f€";        // never "1 091,00" then "€" on the next line
  const hhmm = at => new Date(at * 1000).toLocaleTimeString("fr-FR", { hour: "2-digit", minute: "2-digit" });
  const PHASE = { betting: "faites vos jeux", spinning: "la bille tourne", no_more_bets: "rien ne va plus", result: "résultat",
    idle: "au repos", closed: "fermée", settling: "paiement" };
  // what the table says now: "faites vos jeux" only while it would take a bet (host_tools/table/game/annonce.py)
  const ANNONCE = { betting: "faites vos jeux", no_more_bets: "rien ne va plus", closed: "fermée", suspended: "mises suspendues" };
  const may = role => ROLE_RANK[me.role] >= ROLE_RANK[role];
  function say(text, info) {
    const e = document.getElementById("error");
    e.textContent = text || "";
    e.className = info ? "info" : "";
    if (text) setTimeout(() => { if (e.textContent === text) say(""); }, 6000);
  }
  function answer(r, done) {
    if (r.status < 300 && (r.data.ok === undefined || r.data.ok)) { say(""); if (done) done(); return; }
    const d = r.data.detail || r.data;
    say((d.message || d.error || ("erreur " + r.status)));
  }

  function limitsText(l) {
    if (!l || typeof l !== "object") return "";
    const k = l.plein ? "plein" : Object.keys(l)[0];
    return k && l[k] ? `${k} ${euros(l[k].min || 0)} – ${euros(l[k].max || 0)}` : "";
  }
  function tile(t) {
    const lost = t.link !== "up";
    const cls = ["tile", t.open ? "open" : "closed", lost ? "lost" : "", t.alerts ? "alerted" : ""].join(" ");
    const title = t.url ? el("a", { href: t.url.replace(/\/$/, "") + "/pit", target: "_blank", title: "page du chef de table" }, t.table) : t.table;
    // the table's own reason (its /health, "link down: …") goes in the tag's tooltip: a tile has no room for it
    const why = String(t.link || "").replace(/^link down: /, "");
    const link = lost ? el("span", { class: "tag bad", title: t.link === "silent" ? "la table ne publie plus rien" : why },
      t.link === "silent" ? "table muette" : "cylindre : liaison coupée")
      : el("span", { class: "tag ok", title: "la table entend son cylindre" }, "cylindre relié");
    const nums = el("div", { class: "nums" });
    t.numbers.forEach((n, i) => nums.append(el("span", { class: "num" + (i === 0 ? " first" : ""), "data-colour": n.colour }, String(n.n))));
    if (!t.numbers.length) nums.append(el("span", { class: "muted small" }, "aucun numéro"));
    const gph = t.games_per_hour, pct = Math.min(100, Math.round(100 * gph / Math.max(1, t.target)));
    const bar = el("div", { class: "bar" + (pct < 80 ? " low" : "") }, el("div", { style: "width:" + pct + "%" }));
    const res = el("b", { class: t.result > 0 ? "pos" : t.result < 0 ? "neg" : "nil" }, euros(t.result));
    const node = el("div", { class: cls, "data-table": t.table },
      el("h3", {}, title, el("span", { class: "tag " + (t.open ? "ok" : "") }, t.open ? "ouverte" : (t.open === false ? "fermée" : "?"))),
      el("div", { class: "row" }, el("span", { "data-annonce": t.annonce || "" }, ANNONCE[t.annonce] || PHASE[t.phase] || t.phase || "—"), link,
        t.backlog ? el("span", { class: "tag warn", title: "événements en attente d'envoi" }, "en attente " + t.backlog) : null),
      nums,
      el("div", { class: "row" }, el("span", {}, "coups/h " + gph + " / " + t.target), el("span", {}, "coups du jour " + t.games)),
      bar,
      el("div", { class: "row" }, el("span", {}, "mises " + euros(t.turnover)), el("span", {}, "résultat ", res)),
      el("div", { class: "row" }, el("span", {}, "croupier : " + (t.croupier || "—")),
        t.alerts ? el("span", { class: "tag bad" }, t.alerts + " alerte" + (t.alerts > 1 ? "s" : "")) : el("span", { class: "muted small" }, "aucune alerte")),
      el("div", { class: "row small muted" }, el("span", {}, "cylindre " + (t.serial || "—")),
        el("span", {}, limitsText(t.limits))));
    if (may("pit_boss")) {
      node.append(el("div", { class: "cmds" },
        el("button", { class: "go", onclick: async () => answer(await api("POST", `/floor/api/tables/${encodeURIComponent(t.table)}/open`)) }, "Ouvrir"),
        el("button", { class: "stop", onclick: async () => {
          if (confirm("Fermer la table " + t.table + " ?")) answer(await api("POST", `/floor/api/tables/${encodeURIComponent(t.table)}/close`));
        } }, "Fermer")));
    }
    if (may("director")) {
      const cents = v => Math.round(parseFloat(String(v).replace(",", ".")) * 100);
      node.append(el("form", { class: "cmds", onsubmit: async ev => {
        ev.preventDefault();
        const f = new FormData(ev.target);
        const body = {}; body[f.get("kind")] = { min: cents(f.get("min")), max: cents(f.get("max")) };
        answer(await api("POST", `/floor/api/tables/${encodeURIComponent(t.table)}/limits`, body), () => ev.target.reset());
      } }, el("select", { name: "kind", "aria-label": "mise" }, ...["plein", "cheval", "transversale", "carre", "sixain", "douzaine", "colonne", "simple"]
          .map(k => el("option", { value: k }, k))),
        el("input", { name: "min", placeholder: "min €", required: "", "aria-label": "mise minimum", onfocus: () => (editing = true), onblur: () => setTimeout(() => (editing = false), 300) }),
        el("input", { name: "max", placeholder: "max €", required: "", "aria-label": "mise maximum", onfocus: () => (editing = true), onblur: () => setTimeout(() => (editing = false), 300) }),
        el("button", { type: "submit" }, "Limites")));
    }
    return node;
  }

  function render(s) {
    document.getElementById("day").textContent = "journée du " + s.day.split("-").reverse().join("/");
    const b = document.getElementById("broker");
    b.textContent = s.broker === "connected" ? "courtier connecté" : "courtier injoignable";
    b.className = "pill " + (s.broker === "connected" ? "ok" : "bad");
    const open = s.tiles.filter(t => t.open).length, lost = s.tiles.filter(t => t.link !== "up").length;
    const sum = document.getElementById("summary");
    sum.textContent = `${s.tiles.length} tables · ${open} ouvertes` + (lost ? ` · ${lost} sans liaison` : "");
    sum.className = "pill " + (lost ? "warn" : "");
    if (!editing) {
      const pits = {};
      s.tiles.forEach(t => (pits[t.pit] = pits[t.pit] || []).push(t));
      const root = document.getElementById("pits");
      root.replaceChildren(...Object.keys(pits).sort().map(p =>
        el("section", { class: "pit" }, el("h2", {}, p + " ", el("span", { class: "small muted" }, pits[p].length + (pits[p].length > 1 ? " tables" : " table"))),
          el("div", { class: "tiles" }, ...pits[p].map(tile)))));
      const sel = document.getElementById("setting-table");
      const cur = sel.value;
      sel.replaceChildren(...s.tiles.map(t => el("option", { value: t.table }, t.table)));
      if (cur) sel.value = cur;
    }
    const openAlerts = s.alerts.filter(a => a.open);
    document.getElementById("alert-count").textContent = openAlerts.length || "";
    if (!editing) {
      document.getElementById("alerts").replaceChildren(...(s.alerts.length ? s.alerts.slice(0, 60).map(alertItem)
        : [el("li", { class: "muted" }, "aucune alerte")]));
      document.getElementById("pending").replaceChildren(...(s.pending.length ? s.pending.map(pendingItem)
        : [el("li", { class: "muted" }, may("director") ? "aucune demande en attente" : "aucune demande (réservé aux directeurs)")]));
    }
  }

  function alertItem(a) {
    const cls = [a.open ? (a.level || "warning") : "done", a.escalated_at && a.open ? "escalated" : ""].join(" ");
    const li = el("li", { class: cls },
      el("div", {}, el("b", {}, a.table), " · " + hhmm(a.raised_at) + " · ", el("span", {}, a.message || a.code),
        a.escalated_at && a.open ? el("span", { class: "tag bad" }, " escaladée") : null));
    if (!a.open) {
      const by = a.floor_acked_by ? `acquittée en salle par ${a.floor_acked_by} : « ${a.floor_comment} »` +
        (a.table_told ? ` (table : ${a.table_told})` : "") : `acquittée à la table par ${a.acked_by || "?"}` + (a.comment ? ` : « ${a.comment} »` : "");
      li.append(el("div", { class: "small muted" }, by));
    } else if (may("pit_boss")) {
      li.append(el("form", { onsubmit: async ev => {
        ev.preventDefault();
        const comment = new FormData(ev.target).get("comment");
        editing = false;
        answer(await api("POST", `/floor/api/alerts/${encodeURIComponent(a.table)}/${encodeURIComponent(a.id)}/ack`, { comment }));
        version = -1;
      } }, el("input", { name: "comment", placeholder: "commentaire (obligatoire)", required: "", "aria-label": "commentaire",
          onfocus: () => (editing = true), onblur: () => setTimeout(() => (editing = false), 300) }),
        el("button", { type: "submit" }, "Acquitter")));
    }
    return li;
  }

  function pendingItem(p) {
    const li = el("li", { class: p.outcome ? "done" : "" }, el("b", {}, p.table), ` · ${p.setting} = ${JSON.stringify(p.value)} · demandé par ${p.requested_by}`);
    if (p.outcome) li.append(el("div", { class: "small muted" }, `${p.outcome} (approuvé par ${p.approved_by})`));
    else if (may("director") && p.requested_by.toLowerCase() !== me.name.toLowerCase()) {
      li.append(el("div", {}, el("button", { class: "go", onclick: async () => answer(await api("POST", `/floor/api/pending/${p.id}/approve`)) }, "Approuver")));
    } else li.append(el("div", { class: "small muted" }, "en attente d'une seconde personne (directeur)"));
    return li;
  }

  document.getElementById("setting-form").addEventListener("submit", async ev => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const raw = String(f.get("value")).trim().toLowerCase();
    const value = raw === "oui" || raw === "true" ? true : raw === "non" || raw === "false" ? false : parseInt(raw, 10);
    answer(await api("POST", `/floor/api/tables/${encodeURIComponent(f.get("table"))}/settings`, { setting: f.get("setting"), value }),
      () => ev.target.reset());
  });

  const pc = x => x === null || x === undefined ? "—" : (100 * x).toLocaleString("fr-FR", { maximumFractionDigits: 1 }) + " %";
  const plural = (n, one, many) => n + " " + (n > 1 ? many : one);
  async function wheels() {
    const box = document.getElementById("wheels");
    const r = await api("GET", "/floor/api/wheels");
    if (r.status === 202) { box.replaceChildren(el("li", { class: "muted" }, "statistiques en cours de calcul…")); return; }
    if (r.status !== 200) { box.replaceChildren(el("li", { class: "muted" }, "statistiques indisponibles (" + r.status + ")")); return; }
    const s = r.data;
    const items = s.wheels.map(w => el("li", { class: w.alarms.length ? "critical" : "" },
      el("div", {}, el("b", {}, w.wheel), ` · ${plural(w.games, "coup", "coups")} · ${w.tables.length > 1 ? "tables" : "table"} ${w.tables.join(", ")}`),
      el("div", { class: "small" + (w.alarms.length ? "" : " muted") }, w.alarms.length ? "alarme : " + w.alarms.join(", ")
        : `aucune alarme · art. 53 respecté ${pc(w.article53.rate)} · annulations ${pc(w.voids.rate)}`)));
    if (!s.wheels.length) items.push(el("li", { class: "muted" }, "aucun coup encore sur les " + s.days + " derniers jours : "
      + "chaque cylindre apparaît avec ses premiers coups"));
    else items.push(el("li", { class: "small muted" }, `${plural(s.family_size, "test", "tests")} sur ${plural(s.wheels.length, "cylindre", "cylindres")}, `
      + `corrigés ensemble (Holm, risque ${pc(s.alpha)} pour toute la salle) · ${s.days} derniers jours · calculé à ${hhmm(s.computed_at)} `
      + `en ${String(s.compute_s).replace(".", ",")} s`));
    box.replaceChildren(...items);
  }

  // the signed reports: each day's files, downloaded with the token (a plain link would carry none)
  async function download(day, name) {
    const r = await fetch(`/floor/api/reports/${day}/${encodeURIComponent(name)}`, { headers: { "Authorization": "Bearer " + token() } });
    if (r.status !== 200) { say("téléchargement refusé (" + r.status + ")"); return; }
    const a = el("a", { href: URL.createObjectURL(await r.blob()), download: name });
    document.body.append(a); a.click(); a.remove();
  }
  const kb = n => (n / 1024).toLocaleString("fr-FR", { maximumFractionDigits: 1 }) + " ko";
  async function reports() {
    const r = await api("GET", "/floor/api/reports");
    const box = document.getElementById("reports");
    if (r.status !== 200) { box.replaceChildren(el("li", { class: "muted" }, "rapports indisponibles (" + r.status + ")")); return; }
    box.replaceChildren(...(r.data.days.length ? r.data.days.slice(0, 14).map(d => el("li", { "data-day": d.day },
      el("div", {}, el("b", {}, "journée du " + d.day.split("-").reverse().join("/"))),
      el("div", { class: "small files" }, ...d.files.flatMap(f => [
        el("a", { href: "#", "data-file": f.name, onclick: ev => { ev.preventDefault(); download(d.day, f.name); } }, f.name),
        f.signed ? el("a", { href: "#", class: "muted", title: "la signature (cylindre floor verify)",
          onclick: ev => { ev.preventDefault(); download(d.day, f.name + ".sig"); } }, " (.sig)") : el("span", { class: "neg" }, " (non signé)"),
        el("span", { class: "muted" }, " " + kb(f.size) + " · ")]))))
      : [el("li", { class: "muted" }, "aucun rapport signé")]));
  }
  document.getElementById("report-form").addEventListener("submit", async ev => {
    ev.preventDefault();
    const day = new FormData(ev.target).get("day");
    const r = await api("POST", `/floor/api/report/${day}/files`);
    if (r.status === 200) { say("rapport signé : " + r.data.files.length + " fichiers", true); reports(); }
    else answer(r);
  });

  async function loop() {
    let r = await (token() ? api("GET", "/floor/api/me") : Promise.resolve({ status: 0 }));
    while (r.status !== 200) {
      await login(r.status === 401 ? "jeton refusé (inconnu ou révoqué) : entrez-en un autre"
        : r.status ? "la salle ne répond pas (" + r.status + ")" : "");
      r = await api("GET", "/floor/api/me");
    }
    me = r.data;
    const m = document.getElementById("me");
    m.textContent = me.name + " (" + (ROLE_FR[me.role] || me.role) + ")";
    if (!may("director")) document.getElementById("setting-form").hidden = true;
    document.getElementById("report-form").hidden = !may("pit_boss");
    wheels();
    setInterval(wheels, 20000);
    reports();
    for (;;) {
      try {
        const s = await api("GET", `/floor/api/state?since=${version}&wait=20`);
        if (s.status === 401) { await login("jeton révoqué : entrez-en un autre"); continue; }
        if (s.status === 200) {
          version = s.data.version;
          const d = document.getElementById("report-day");
          if (!d.value) d.value = s.data.day;
          render(s.data);
          await new Promise(res => setTimeout(res, 1000));   // a busy floor changes every few ms: once a second is enough
        }
        else { say("la salle ne répond pas (" + s.status + ")"); await new Promise(res => setTimeout(res, 2000)); }
      } catch (e) {
        say("service de salle injoignable"); await new Promise(res => setTimeout(res, 2000));
      }
    }
  }
  window.cylindreFloor = { render };
  loop();
})();
