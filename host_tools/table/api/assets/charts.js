/* The statistics page's charts, drawn in the browser as SVG from the one analysis the page shows
   (GET /stats/analysis): no image to render on the table host, no chart from another state of the
   journal. Each function returns an <svg> that scales to its box; numbers the French way. */
"use strict";

const Charts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLOUR = { rouge: "#c8102e", noir: "#111111", zero: "#00843d" };
  const BLUE = "#4a6fa5", GREY = "#888888", RUST = "#a5674a";
  const W = 720, PAD = { l: 44, r: 12, t: 26, b: 34 };

  function s(tag, attrs, ...kids) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, v);
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k.nodeType ? k : document.createTextNode(String(k)));
    return e;
  }
  const fr = (x, d) => Cyl.nombre(x, d || 0);

  function frame(h, title) {
    return s("svg", { viewBox: `0 0 ${W} ${h}`, role: "img", "aria-label": title, class: "chart",
                      preserveAspectRatio: "xMidYMid meet" }, s("title", {}, title),
             s("text", { x: W / 2, y: 16, "text-anchor": "middle", "font-size": 13, "font-weight": 700 }, title));
  }

  /* Whole-number ticks from 0 to the top, about 4 of them. */
  function ticks(top) {
    const step = Math.max(1, Math.ceil(top / 4));
    const out = [];
    for (let v = 0; v <= top; v += step) out.push(v);
    return out;
  }

  /* Vertical bars: `values`, each with its `colours[i]` and `labels[i]`; `expected`: a dashed line. */
  function bars({ title, values, labels, colours, expected, ylabel, h = 230, labelSize = 9 }) {
    const svg = frame(h, title);
    const top = Math.max(1, ...values, expected || 0) * 1.15;
    const iw = W - PAD.l - PAD.r, ih = h - PAD.t - PAD.b, bw = iw / values.length;
    const y = (v) => PAD.t + ih - (v / top) * ih;
    for (const t of ticks(top)) {
      svg.append(s("line", { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), stroke: "#e4e4e4" }),
                 s("text", { x: PAD.l - 5, y: y(t) + 3, "text-anchor": "end", "font-size": 10 }, fr(t)));
    }
    values.forEach((v, i) => {
      svg.append(s("rect", { x: PAD.l + i * bw + bw * 0.12, y: y(v), width: bw * 0.76, height: Math.max(0, PAD.t + ih - y(v)),
                             fill: (colours && colours[i]) || BLUE }, s("title", {}, `${labels ? labels[i] : i} : ${fr(v)}`)));
      if (labels) svg.append(s("text", { x: PAD.l + (i + 0.5) * bw, y: h - PAD.b + 13, "text-anchor": "middle", "font-size": labelSize }, labels[i]));
    });
    if (expected) {
      svg.append(s("line", { x1: PAD.l, x2: W - PAD.r, y1: y(expected), y2: y(expected), stroke: GREY, "stroke-dasharray": "5 4" }),
                 s("text", { x: W - PAD.r, y: y(expected) - 4, "text-anchor": "end", "font-size": 10, fill: "#555" },
                   `attendu ${fr(expected, 1)}`));
    }
    if (ylabel) svg.append(s("text", { x: 12, y: PAD.t + ih / 2, transform: `rotate(-90 12 ${PAD.t + ih / 2})`, "text-anchor": "middle", "font-size": 10 }, ylabel));
    return svg;
  }

  /* Horizontal bars of z-scores against ±limit (dashed). */
  function zbars({ title, rows, limit, xlabel }) {
    const left = 190, h = PAD.t + 22 * rows.length + 40;
    const svg = frame(h, title);
    const lim = Math.max(3.5, ...rows.map((r) => Math.abs(r.z) * 1.1));
    const iw = W - left - PAD.r, x = (z) => left + (z + lim) / (2 * lim) * iw;
    for (const z of [-limit, limit]) svg.append(s("line", { x1: x(z), x2: x(z), y1: PAD.t, y2: h - 34, stroke: GREY, "stroke-dasharray": "5 4" }));
    svg.append(s("line", { x1: x(0), x2: x(0), y1: PAD.t, y2: h - 34, stroke: "#333" }));
    rows.forEach((r, i) => {
      const y0 = PAD.t + 22 * i + 4, a = x(Math.min(0, r.z)), b = x(Math.max(0, r.z));
      svg.append(s("text", { x: left - 6, y: y0 + 12, "text-anchor": "end", "font-size": 11 }, r.label),
                 s("rect", { x: a, y: y0, width: Math.max(1, b - a), height: 15, fill: Math.abs(r.z) > limit ? RUST : BLUE },
                   s("title", {}, `${r.label} : z = ${Cyl.nombre(r.z, 2)}`)));
    });
    for (const z of [-3, -2, -1, 0, 1, 2, 3].filter((v) => Math.abs(v) <= lim)) {
      svg.append(s("text", { x: x(z), y: h - 20, "text-anchor": "middle", "font-size": 10 }, (z < 0 ? "−" : "") + Math.abs(z)));
    }
    svg.append(s("text", { x: left + iw / 2, y: h - 5, "text-anchor": "middle", "font-size": 10 }, xlabel));
    return svg;
  }

  /* 36 wedges of 10°, 0° at the top, clockwise: where the ball left the track. */
  function polar({ title, values, h = 260 }) {
    const svg = frame(h, title);
    const cx = W / 2, cy = PAD.t + (h - PAD.t - 10) / 2, R = (h - PAD.t - 20) / 2, top = Math.max(1, ...values);
    for (const f of [0.5, 1]) svg.append(s("circle", { cx, cy, r: R * f, fill: "none", stroke: "#e4e4e4" }));
    values.forEach((v, i) => {
      if (!v) return;
      const r = R * v / top, a0 = (i * 10 - 90) * Math.PI / 180, a1 = ((i + 1) * 10 - 90) * Math.PI / 180;
      const p = (a, rr) => `${cx + rr * Math.cos(a)} ${cy + rr * Math.sin(a)}`;
      svg.append(s("path", { d: `M ${cx} ${cy} L ${p(a0, r)} A ${r} ${r} 0 0 1 ${p(a1, r)} Z`, fill: BLUE },
                   s("title", {}, `${i * 10}–${i * 10 + 10}° : ${fr(v)}`)));
    });
    for (const [deg, t] of [[0, "0°"], [90, "90°"], [180, "180°"], [270, "270°"]]) {
      const a = (deg - 90) * Math.PI / 180;
      svg.append(s("text", { x: cx + (R + 12) * Math.cos(a), y: cy + (R + 12) * Math.sin(a) + 4, "text-anchor": "middle", "font-size": 10 }, t));
    }
    return svg;
  }

  /* Games played against minutes since the first (a session without a whole hour). */
  function session({ title, offsets, h = 230 }) {
    const svg = frame(h, title);
    const mins = offsets.map((t) => t / 60), n = mins.length, xmax = Math.max(1, ...mins) * 1.05;
    const iw = W - PAD.l - PAD.r, ih = h - PAD.t - PAD.b;
    const x = (m) => PAD.l + m / xmax * iw, y = (k) => PAD.t + ih - k / Math.max(1, n) * ih;
    let d = `M ${x(0)} ${y(0)}`;
    mins.forEach((m, i) => { d += ` H ${x(m)} V ${y(i + 1)}`; });
    svg.append(s("path", { d, fill: "none", stroke: BLUE, "stroke-width": 2 }));
    for (const t of ticks(n)) svg.append(s("text", { x: PAD.l - 5, y: y(t) + 3, "text-anchor": "end", "font-size": 10 }, fr(t)));
    for (const m of ticks(xmax)) svg.append(s("text", { x: x(m), y: h - PAD.b + 14, "text-anchor": "middle", "font-size": 10 }, fr(m)));
    svg.append(s("text", { x: PAD.l + iw / 2, y: h - 6, "text-anchor": "middle", "font-size": 10 }, "minutes depuis le premier coup"));
    return svg;
  }

  function empty(title, text) {
    const svg = frame(90, title);
    svg.append(s("text", { x: W / 2, y: 55, "text-anchor": "middle", "font-size": 12, fill: "#666" }, text));
    return svg;
  }

  /* Every chart of the page from analysis `a`: [[key, caption, svg]]. */
  function all(a) {
    const out = [];
    const order = a.wheel_order, counts = a.numbers.counts, n = a.numbers.n;
    out.push(["numeros", "Fréquence des numéros", n ? bars({
      title: `Fréquence des numéros dans l'ordre du cylindre (${Cyl.nombre(n)} coups)`, ylabel: "coups",
      values: order.map((k) => counts[k]), labels: order.map(String), colours: order.map((k) => COLOUR[Cyl.colour(k)]),
      expected: n / 37 }) : empty("Fréquence des numéros", "aucun coup")]);
    const names = a.sector_names || {};
    const rows = a.sectors.map((x) => ({ label: names[x.name] || x.name, z: x.z }))
      .concat(a.runs.map((r) => ({ label: "séries " + r.chance.replace("/", " / "), z: r.z })));
    out.push(["secteurs", "Secteurs et séries", zbars({ title: "Secteurs et séries : écart à l'attendu en z", rows, limit: 2.576,
      xlabel: "z (tirets : |z| = 2,576, soit p = 0,01 avant correction)" })]);
    const d = a.drop;
    out.push(["chute", "Zone de chute", d.n ? polar({ title: `Zone de chute (${Cyl.nombre(d.n)} chutes)`, values: d.zone_10deg })
      : empty("Zone de chute", "le journal ne porte pas l'angle de chute")]);
    out.push(["rebond", "Chute → case", d.landing_n ? bars({ title: `Chute → case, en cases dans le sens de la bille (${Cyl.nombre(d.landing_n)} coups)`,
      values: d.landing_hist, labels: d.landing_hist.map((_, i) => (i % 2 ? "" : String(i))), ylabel: "coups" })
      : empty("Chute → case", "pas de case de chute dans le journal")]);
    const pace = a.pace;
    out.push(["cadence", "Cadence", pace.full_hours ? bars({ title: "Coups par heure (gris : heures entamées)", ylabel: "coups",
      values: pace.per_hour, labels: pace.per_hour.map((_, i) => new Date((pace.first_hour_at + 3600 * i) * 1000).getHours() + " h"),
      colours: pace.per_hour.map((_, i) => (i === 0 || i === pace.per_hour.length - 1 ? GREY : BLUE)), labelSize: 10 })
      : pace.span_s ? session({ title: `Session de ${Cyl.duree(pace.span_s)} : environ ${Cyl.nombre(pace.rate_per_hour)} coups/heure`, offsets: pace.offsets_s })
      : empty("Cadence", "pas de cadence mesurable")]);
    const v = a.voids, reasons = Object.keys(v.by_reason);
    out.push(["nuls", "Coups nuls", reasons.length ? zless(reasons.map((r) => ({ label: Cyl.L("void", r), n: v.by_reason[r] })),
      `Coups nuls : ${Cyl.nombre(v.voids)} sur ${Cyl.nombre(v.launches)} lancers`) : empty("Coups nuls", `aucun coup nul sur ${Cyl.nombre(v.launches)} lancers`)]);
    for (const c of a.croupiers.filter((x) => x.signature_n)) {
      out.push(["croupier-" + c.croupier, "Signature de " + c.croupier, bars({
        title: `${c.croupier} : lâcher → case, en cases (${Cyl.nombre(c.signature_n)} coups)`, values: c.signature_hist,
        labels: c.signature_hist.map((_, i) => (i % 2 ? "" : String(i))), expected: c.signature_n / 37, ylabel: "coups", h: 200 })]);
    }
    return out;
  }

  /* Horizontal count bars with their labels (the voids by reason). */
  function zless(rows, title) {
    const left = 260, h = PAD.t + 22 * rows.length + 20;
    const svg = frame(h, title);
    const top = Math.max(1, ...rows.map((r) => r.n)), iw = W - left - 40;
    rows.forEach((r, i) => {
      const y0 = PAD.t + 22 * i + 4;
      svg.append(s("text", { x: left - 6, y: y0 + 12, "text-anchor": "end", "font-size": 11 }, r.label),
                 s("rect", { x: left, y: y0, width: Math.max(1, r.n / top * iw), height: 15, fill: RUST }),
                 s("text", { x: left + r.n / top * iw + 5, y: y0 + 12, "font-size": 11 }, fr(r.n)));
    });
    return svg;
  }

  return { all, bars, zbars, polar, session };
})();
