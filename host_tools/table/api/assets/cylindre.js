/* Cylindre pages: the access token, the HTTP API and the live event stream, shared by the
   marquee and the pit page. No library, no build step: served as is by the daemon. */
"use strict";

const Cyl = (() => {
  const KEY = "cylindre.token";
  const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);

  /* The token comes once in the address (#token=...), is kept for this tab in sessionStorage
     and removed from the address bar. A token refused (401: unknown, revoked, expired) is never
     asked for in a blocking dialog: the screen says so in French and the page retries quietly
     (every 10 s, and at once when a new #token=... is given or typed in the notice). */
  function token() {
    const m = location.hash.match(/token=([^&]+)/);
    if (m) {
      sessionStorage.setItem(KEY, decodeURIComponent(m[1]).trim());
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(KEY) || "";
  }

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const t = token();
    if (t) h.Authorization = "Bearer " + t;
    return h;
  }

  /* The notice at the top of every page: what is wrong, in words, never a dialog. */
  const notices = new Map();            // key -> [level, text, form?]
  function notice(key, text, level, withForm) {
    if (text) notices.set(key, [level || "bad", text, !!withForm]);
    else notices.delete(key);
    let box = document.getElementById("cyl-notice");
    if (!box) {
      box = el("div", { id: "cyl-notice", role: "status", "aria-live": "polite" });
      document.body.prepend(box);
    }
    box.replaceChildren(...[...notices.entries()].map(([k, [lvl, txt, form]]) => el("div", { class: "cyl-notice " + lvl, "data-notice": k },
      el("span", {}, txt), form ? tokenForm() : null)));
    box.hidden = notices.size === 0;
    const auth = notices.has("token") ? "refused" : "ok";
    if (document.documentElement.dataset.auth !== auth) {
      document.documentElement.dataset.auth = auth;
      authHooks.forEach((f) => { try { f(auth === "ok"); } catch (e) { console.error(e); } });
    }
  }
  const authHooks = [];
  /* `fn(ok)` when the page's token becomes refused (false) or accepted again (true). */
  function onAuth(fn) { authHooks.push(fn); }

  function tokenForm() {
    const input = el("input", { type: "password", autocomplete: "off", "aria-label": "jeton d'accès", placeholder: "jeton d'accès" });
    return el("form", { class: "cyl-token", onsubmit: (e) => {
      e.preventDefault();
      if (input.value.trim()) {
        sessionStorage.setItem(KEY, input.value.trim());
        authWaiters.splice(0).forEach((f) => f());
        window.dispatchEvent(new Event("cyl-token"));
      }
    } }, input, el("button", { type: "submit" }, "Valider"));
  }

  const authWaiters = [];               // retries waiting for a new token (or their 10 s)
  window.addEventListener("hashchange", () => { token(); authWaiters.splice(0).forEach((f) => f()); window.dispatchEvent(new Event("cyl-token")); });
  function waitForToken(ms) {
    return new Promise((res) => {
      const done = () => { clearTimeout(t); res(); };
      const t = setTimeout(() => { const i = authWaiters.indexOf(done); if (i >= 0) authWaiters.splice(i, 1); res(); }, ms);
      authWaiters.push(done);
    });
  }

  function refused(status) {
    if (status === 401) {
      notice("token", token() ? "Jeton d'accès refusé (inconnu, révoqué ou expiré). Cet écran réessaie toutes les 10 secondes ; "
        + "ouvrez la page avec un jeton valide : adresse#token=… (cylindre token add)."
        : "Aucun jeton d'accès : ouvrez la page avec son jeton, adresse#token=… (cylindre token add). Cet écran réessaie toutes les 10 secondes.",
        "bad", true);
    } else if (status === 403) {
      notice("token", "Ce jeton n'a pas le rôle que cette page demande (afficheur : display ; chef de table : chef).", "bad", true);
    }
  }

  /* JSON in, JSON out; an error carries the API's {error, message} and the HTTP status. */
  async function api(method, path, body) {
    const init = { method, cache: "no-store", headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await fetch(path, init);
    const data = await r.json().catch(() => null);
    if (!r.ok) {
      if (r.status === 401 || (r.status === 403 && data && data.error === "forbidden" && method === "GET")) refused(r.status);
      const e = new Error(r.status === 401 ? "jeton d'accès refusé" : (data && data.message) || r.statusText || ("HTTP " + r.status));
      e.status = r.status;
      e.code = data && data.error;
      throw e;
    }
    if (r.status !== 401 && notices.has("token")) notice("token", null);
    return data;
  }

  /* The daemon's Server-Sent Events read with fetch (an EventSource cannot send the token).
     On every (re)connection `onOpen` runs before any event is handled: the page re-reads what it
     may have missed (/history), then the events queued meanwhile are applied on top. The last
     event id goes back as Last-Event-ID so a server that keeps its events can resume. */
  function live({ onEvent, onOpen, onLink, kinds }) {
    let lastId = null, stopped = false, delay = 500;
    const say = (s) => { try { onLink && onLink(s); } catch (e) { console.error(e); } };
    const url = "/events" + (kinds ? "?kinds=" + kinds.join(",") : "");
    async function once() {
      const h = headers({ Accept: "text/event-stream" });
      if (lastId !== null) h["Last-Event-ID"] = lastId;
      const r = await fetch(url, { headers: h, cache: "no-store" });
      if (r.status === 401 || r.status === 403) { refused(r.status); say("down"); await waitForToken(10000); return; }
      if (!r.ok || !r.body) throw new Error("HTTP " + r.status);
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      await onOpen();
      say("up");
      delay = 500;
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id = null, kind = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (!line || line[0] === ":") continue;
            const c = line.indexOf(":");
            const field = c < 0 ? line : line.slice(0, c);
            let v = c < 0 ? "" : line.slice(c + 1);
            if (v[0] === " ") v = v.slice(1);
            if (field === "id") id = v;
            else if (field === "event") kind = v;
            else if (field === "data") data.push(v);
          }
          if (id !== null) lastId = id;
          if (!data.length) continue;
          let body;
          try { body = JSON.parse(data.join("\n")); } catch (e) { continue; }
          try { onEvent(kind, body, id); } catch (e) { console.error(e); }
        }
      }
    }
    (async () => {
      while (!stopped) {
        try { await once(); } catch (e) { /* the daemon is away: try again */ }
        say("down");
        await new Promise((res) => setTimeout(res, delay));
        delay = Math.min(delay * 2, 5000);
      }
    })();
    return { stop() { stopped = true; } };
  }

  function colour(n) { return n === 0 ? "zero" : RED.has(n) ? "rouge" : "noir"; }

  function describe(n) {
    if (n === 0) return "zéro";
    return [RED.has(n) ? "rouge" : "noir", n % 2 ? "impair" : "pair", n <= 18 ? "manque" : "passe"].join(" · ");
  }

  function euros(cents) {
    if (cents === null || cents === undefined) return "—";
    const neg = cents < 0, c = Math.abs(cents);
    const s = Math.floor(c / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f") + "," + String(c % 100).padStart(2, "0");
    return (neg ? "−" : "") + s + "\u202f€";
  }

  /* 14.04 -> "14,0" (decimal comma, narrow no-break space between thousands, "−" sign). */
  function nombre(x, decimals) {
    if (x === null || x === undefined || !Number.isFinite(x)) return "—";
    const [whole, frac] = Math.abs(x).toFixed(decimals || 0).split(".");
    const s = whole.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f") + (frac ? "," + frac : "");
    return (x < 0 && /[1-9]/.test(s) ? "−" : "") + s;
  }
  function pourcent(x, decimals) { return nombre(x, decimals) + "\u202f%"; }

  /* The French label of an API code (host_tools/table/libelles.py, loaded as /assets/libelles.js);
     an unknown code is shown as it is, never hidden. */
  function L(table, code) {
    const t = (typeof LIBELLES !== "undefined" && LIBELLES[table]) || {};
    return Object.prototype.hasOwnProperty.call(t, code) ? t[code] : String(code);
  }

  /* The link with the wheel, from /state's `link`: {ok, text, short, advice}, in words. `up` (a session
     with the wheel the table knows) is the truth; `problem` ({code, text, advice}, French) says why
     it is not up; without them (an older daemon) the session and the port tell. */
  function linkInfo(link) {
    link = link || {};
    const up = typeof link.up === "boolean" ? link.up && link.session !== false : !!link.session;
    const ago = typeof link.last_heard === "number" ? Math.max(0, Date.now() / 1000 - link.last_heard) : null;
    const heard = ago === null ? "jamais entendu" : ago < 2 ? "entendu à l'instant" : "dernier signal il y a " + duree(ago);
    if (up && !link.problem) return { ok: true, text: "liaison avec le cylindre établie", short: "liaison établie", advice: "" };
    const p = link.problem && typeof link.problem === "object" ? link.problem : null;
    if (p && p.text) {                  // the daemon's own words (docs/operators/troubleshooting.md, the link's health)
      const head = { wheel_unknown: "cylindre inconnu de la table", slow_line: "liaison lente" }[p.code] || "liaison coupée";
      return { ok: false, text: head + " : " + p.text, short: head, advice: p.advice ? String(p.advice) : "" };
    }
    let text;
    if (link.port_open === false) text = "liaison coupée : port série " + (link.port ? link.port + " " : "") + "absent ou fermé";
    else if (!link.session) text = "liaison coupée : le cylindre ne répond pas";
    else text = "liaison en défaut";
    return { ok: false, text: text + " (" + heard + ")", short: text.split(" : ")[0], advice: "" };
  }

  /* What the table says now, the rule POST /bets applies (host_tools/table/game/annonce.py):
     "faites vos jeux" only while a bet would be taken. Fed by GET /state's `table` and by every
     wheel status's `table` (the stream's `status` kind, twice a second while betting is open); a
     verdict is good for its `open_for_ms` only: with no newer word by then (a pulled cable, a
     silent wheel) the screen stops saying "faites vos jeux" when the table starts refusing bets.
     `now()`: {annonce, refusing, phase, spin, locked}; `seen` counts the verdicts taken. */
  function annonce() {
    let v = { annonce: null, refusing: null, phase: null, spin: null, locked: null, until: 0 };
    const me = {
      seen: 0,
      set(t) {
        if (!t || typeof t.annonce !== "string") return;
        me.seen++;
        v = { annonce: t.annonce, refusing: t.refusing ?? null, phase: t.phase ?? null, spin: t.spin ?? null,
              locked: t.locked_spin ?? null, until: t.annonce === "betting" ? Date.now() + (t.open_for_ms || 0) : Infinity };
      },
      /* A change the stream told before any verdict on it (the call, a result, a void): nothing
         is taken until the wheel's next word. */
      patch(fields) { me.seen++; v = Object.assign({}, v, fields, fields.annonce === "betting" ? {} : { until: Infinity }); },
      now(at) {
        if (v.annonce === "betting" && (at ?? Date.now()) >= v.until) return Object.assign({}, v, { annonce: "suspended", refusing: "wheel_not_heard" });
        return v;
      },
    };
    return me;
  }

  /* A phrase as a sentence: a capital first, a full stop unless it already ends with ? ! or . */
  function sentence(t) {
    t = String(t || "").trim();
    return t ? t[0].toUpperCase() + t.slice(1) + (/[.?!]$/.test(t) ? "" : ".") : "";
  }

  function duree(s) {
    if (s < 90) return Math.round(s) + "\u202fs";
    if (s < 5400) return Math.round(s / 60) + "\u202fmin";
    return nombre(s / 3600, 1) + "\u202fh";
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k.nodeType ? k : String(k));
    return e;
  }

  function param(name, dflt, lo, hi) {
    const v = parseInt(new URLSearchParams(location.search).get(name), 10);
    return Number.isFinite(v) && v >= lo && v <= hi ? v : dflt;
  }

  /* A page marked <body data-watch-link> (the statistics) tells a cut link at its top too, from
     /state every 5 s; the marquee and the pit show it in their own places. That read is also its
     retry of a refused token: once a token is accepted again the page loads afresh. */
  function watchLink() {
    let refusedOnce = false;
    onAuth((ok) => { if (!ok) refusedOnce = true; else if (refusedOnce) location.reload(); });
    window.addEventListener("cyl-token", () => check());
    const check = async () => {
      try {
        const info = linkInfo((await api("GET", "/state")).link);
        notice("link", info.ok ? null : sentence(info.text), "warn");
      } catch (e) { /* the token notice or the page's own error says it */ }
    };
    check();
    setInterval(check, 5000);
  }
  if (document.body && document.body.hasAttribute("data-watch-link")) watchLink();

  return { api, live, annonce, colour, describe, euros, nombre, pourcent, L, linkInfo, duree, sentence, notice, onAuth, el, param, token, RED };
})();
