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
  function p(x) { return (x === null || x === undefined ? "—" : x < 0.0001 ? "< 0,0001" : String(Number(x.toPrecision(2)))).replace(".", ","); }
  function ms(m) { return m && m.n ? `${m.mean.toFixed(1)} ± ${m.sd.toFixed(1)}`.replaceAll(".", ",") : "—"; }

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
      $("t-period").textContent = a.period;
      // the verdict the analysis words (host_tools/stats/wording.py): green only when tests ran
      $("t-verdict").textContent = a.verdict.short;
      $("t-verdict").title = a.verdict.text;
      $("t-verdict").className = "pill " + ({ alarme: "bad", ok: "ok" }[a.verdict.level] || "warn");
      $("verdict").textContent = a.verdict.text;
      const done = a.tests.filter((t) => t.ran).length;
      const byName = new Map(a.tests.map((t) => [t.test, t]));
      // no p without its sample: said in words, the test table above gives "n sur N"
      const ran = (name) => { const t = byName.get(name); return t && t.ran ? p(t.p) : "pas assez de coups"; };
      $("alpha").textContent = `${done === 0 ? "Aucun test fait" : done === 1 ? "1 test fait" : done + " tests faits"} sur ${a.tests.length} ; seuil global α = ${String(a.alpha).replace(".", ",")} ` +
        "sur l'ensemble des tests faits (correction de Holm) : un test est significatif quand son p corrigé est sous α. " +
        "Un test sans assez de coups n'est pas fait et ne dit rien (docs/pit/statistics.md).";
      $("family").replaceChildren(...a.tests.map((t) => el("tr", { class: t.significant ? "sig" : (t.ran ? "" : "muted"), "data-test": t.test },
        el("td", {}, t.label), el("td", { class: "n" }, `${t.n} / ${t.needed}`),
        el("td", { class: "n" }, t.ran ? p(t.p) : "—"), el("td", { class: "n" }, t.ran ? p(t.p_holm) : "—"),
        el("td", {}, t.status))));
      $("croupiers").replaceChildren(...(a.croupiers.length ? a.croupiers.map((c) => el("tr", {},
        el("td", {}, c.croupier), el("td", { class: "n" }, c.games), el("td", { class: "n" }, ms(c.rotor_rpm)),
        el("td", { class: "n" }, ms(c.laps)), el("td", { class: "n" }, c.signature_n),
        el("td", { class: "n" }, ran(`croupier:${c.croupier}:chi2`)),
        el("td", { class: "n" }, ran(`croupier:${c.croupier}:rayleigh`))))
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
