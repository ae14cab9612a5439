/* Cylindre pages: the access token, the HTTP API and the live event stream, shared by the
   marquee and the pit page. No library, no build step: served as is by the daemon. */
"use strict";

const Cyl = (() => {
  const KEY = "cylindre.token";
  const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);

  /* The token comes once in the address (#token=...), is kept for this tab in sessionStorage
     and removed from the address bar; a 401 asks for it. */
  function token() {
    const m = location.hash.match(/token=([^&]+)/);
    if (m) {
      sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
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

  function askToken() {
    const t = window.prompt("Jeton d'accès (token) de cette table :");
    if (t) sessionStorage.setItem(KEY, t.trim());
    return !!t;
  }

  /* JSON in, JSON out; an error carries the API's {error, message} and the HTTP status. */
  async function api(method, path, body) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const init = { method, cache: "no-store", headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
      if (body !== undefined) init.body = JSON.stringify(body);
      const r = await fetch(path, init);
      if (r.status === 401 && attempt === 0 && askToken()) continue;
      const data = await r.json().catch(() => null);
      if (!r.ok) {
        const e = new Error((data && data.message) || r.statusText || ("HTTP " + r.status));
        e.status = r.status;
        e.code = data && data.error;
        throw e;
      }
      return data;
    }
  }

  /* The daemon's Server-Sent Events read with fetch (an EventSource cannot send the token).
     On every (re)connection `onOpen` runs before any event is handled: the page re-reads what it
     may have missed (/history), then the events queued meanwhile are applied on top. The last
     event id goes back as Last-Event-ID so a server that keeps its events can resume. */
  function live({ onEvent, onOpen, onLink }) {
    let lastId = null, stopped = false, delay = 500;
    const say = (s) => { try { onLink && onLink(s); } catch (e) { console.error(e); } };
    async function once() {
      const h = headers({ Accept: "text/event-stream" });
      if (lastId !== null) h["Last-Event-ID"] = lastId;
      const r = await fetch("/events", { headers: h, cache: "no-store" });
      if (r.status === 401) { askToken(); return; }
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
    return (neg ? "−" : "") + s + " €";
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

  return { api, live, colour, describe, euros, el, param, token, RED };
})();
