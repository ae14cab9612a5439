/* The wheel statistics page (/stats): the family of tests with Holm's correction, the croupiers'
   figures, the plots and the PDF report, from GET /stats/analysis and /stats/files/<name>
   (fetched with the token, shown from blob URLs: an <img> cannot send a header). */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = Cyl.el;
  const NAMES = { numeros: "Fréquence des numéros", secteurs: "Secteurs et séries", chute: "Zone de chute et rebond",
                  cadence: "Cadence et coups nuls", croupiers: "Signature des croupiers" };
  let urls = [];

  function fail(e) { $("error").textContent = e ? String(e.message || e) : ""; }
  function p(x) { return x === null || x === undefined ? "—" : x < 0.001 ? x.toExponential(1) : x.toFixed(3); }
  function ms(m) { return m && m.n ? `${m.mean.toFixed(1)} ± ${m.sd.toFixed(1)}` : "—"; }

  async function blob(name) {
    const r = await fetch(`/stats/files/${name}`, { headers: { Authorization: "Bearer " + Cyl.token() }, cache: "no-store" });
    if (!r.ok) throw new Error(`${name}: HTTP ${r.status}`);
    const u = URL.createObjectURL(await r.blob());
    urls.push(u);
    return u;
  }

  async function load() {
    fail(null);
    document.body.removeAttribute("data-loaded");
    try {
      const a = await Cyl.api("GET", "/stats/analysis");
      $("t-wheel").textContent = a.wheel || "?";
      $("t-games").textContent = `${a.games} coups`;
      const bad = a.alarms.length;
      $("t-verdict").textContent = bad ? `${bad} test(s) significatif(s)` : "aucun écart significatif";
      $("t-verdict").className = "pill " + (bad ? "bad" : "ok");
      $("alpha").textContent = `Seuil global α = ${a.alpha} sur la famille de ${a.family.length} tests (Holm) : ` +
        "un test est significatif quand son p corrigé est sous α (docs/stats.md).";
      $("family").replaceChildren(...(a.family.length ? a.family.map((f) => el("tr", { class: f.significant ? "sig" : "" },
        el("td", {}, f.test), el("td", { class: "n" }, p(f.p)), el("td", { class: "n" }, p(f.p_holm)),
        el("td", {}, f.significant ? "SIGNIFICATIF" : "—")))
        : [el("tr", {}, el("td", { colspan: 4, class: "muted" }, "aucun test : pas encore assez de coups pour qu'un test soit valide"))]));
      $("croupiers").replaceChildren(...(a.croupiers.length ? a.croupiers.map((c) => el("tr", {},
        el("td", {}, c.croupier), el("td", { class: "n" }, c.games), el("td", { class: "n" }, ms(c.rotor_rpm)),
        el("td", { class: "n" }, ms(c.laps)), el("td", { class: "n" }, c.signature_n),
        el("td", { class: "n" }, c.signature_n ? p(c.signature_p) : "—"),
        el("td", { class: "n" }, c.signature_n ? p(c.signature_rayleigh_p) : "—")))
        : [el("tr", {}, el("td", { colspan: 7, class: "muted" }, "aucun coup"))]));
      urls.forEach((u) => URL.revokeObjectURL(u));
      urls = [];
      const figs = [];
      for (const f of a.files.filter((f) => f.endsWith(".png"))) {
        const key = f.replace(/\.png$/, "");
        figs.push(el("figure", {}, el("img", { src: await blob(f), alt: NAMES[key] || key, "data-plot": key }),
                     el("figcaption", {}, NAMES[key] || key)));
      }
      $("plots").replaceChildren(el("h2", {}, "Graphiques"), ...figs);
      $("pdf").href = await blob("report.pdf");
      $("pdf").download = `cylindre-${a.wheel}-statistiques.pdf`;
      $("pdf").hidden = false;
      document.body.dataset.loaded = String(Date.now());
    } catch (e) { fail(e); }
  }

  $("b-reload").addEventListener("click", load);
  load();
})();
