/* The wheel statistics page (/stats): the verdict, the family of tests with Holm's correction, the
   croupiers' figures and the charts, all from ONE analysis of the journal (GET /stats/analysis: its
   `snapshot`), so every count on the page is the same count. The charts are drawn here (charts.js),
   in a blink for a day of play; the PDF report of that same snapshot is made when asked for. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = Cyl.el;
  let current = null;                    // the analysis on the page

  function fail(e) { $("error").textContent = e ? String(e.message || e) : ""; }
  function p(x) { return (x === null || x === undefined ? "—" : x < 0.0001 ? "< 0,0001" : String(Number(x.toPrecision(2)))).replace(".", ","); }
  function ms(m) { return m && m.n ? `${Cyl.nombre(m.mean, 1)} ± ${Cyl.nombre(m.sd, 1)}` : "—"; }
  const n = (x) => Cyl.nombre(x);
  const plural = (k, one, many) => `${n(k)} ${k > 1 ? many || one + "s" : one}`;

  function waiting() {
    $("plots").replaceChildren(el("h2", {}, "Graphiques"), el("p", { class: "muted", id: "plots-wait" },
      "Calcul des statistiques du journal…"));
    $("t-verdict").textContent = "calcul…";
    $("t-verdict").className = "pill";
  }

  function render(a) {
    $("t-wheel").textContent = a.wheel || "?";
    $("t-games").textContent = plural(a.games, "coup");
    const v = a.voids;
    // one count behind every figure: the games with a number, the launches (those and the voids), the drops measured
    $("t-counts").textContent = `${plural(v.launches, "lancer")}, dont ${plural(v.voids, "coup nul", "coups nuls")} ; `
      + `${plural(a.drop.n, "chute mesurée", "chutes mesurées")}`;
    $("t-period").textContent = a.period;
    // the verdict the analysis words (host_tools/stats/wording.py): green only when the main tests ran
    $("t-verdict").textContent = a.verdict.short;
    $("t-verdict").title = a.verdict.text;
    $("t-verdict").className = "pill " + ({ alarme: "bad", ok: "ok" }[a.verdict.level] || "warn");
    $("verdict").textContent = a.verdict.text;
    const done = a.tests.filter((t) => t.ran).length;
    const byName = new Map(a.tests.map((t) => [t.test, t]));
    // no p without its sample: said in words, the test table above gives "n sur N"
    const ran = (name) => { const t = byName.get(name); return t && t.ran ? p(t.p) : "pas assez de coups"; };
    $("alpha").textContent = `${done === 0 ? "Aucun test fait" : done === 1 ? "1 test fait" : done + " tests faits"} sur ${a.tests.length} ; seuil global α = ${Cyl.nombre(a.alpha, 2)} ` +
      "sur l'ensemble des tests faits (correction de Holm) : un test est significatif quand son p corrigé est sous α. " +
      "Un test sans assez de coups n'est pas fait et ne dit rien (docs/pit/statistics.md).";
    $("family").replaceChildren(...a.tests.map((t) => el("tr", { class: t.significant ? "sig" : (t.ran ? "" : "muted"), "data-test": t.test },
      el("td", {}, t.label, t.main ? el("span", { class: "muted small" }, " · principal") : null), el("td", { class: "n" }, `${n(t.n)} / ${n(t.needed)}`),
      el("td", { class: "n" }, t.ran ? p(t.p) : "—"), el("td", { class: "n" }, t.ran ? p(t.p_holm) : "—"),
      el("td", {}, t.status))));
    $("croupiers").replaceChildren(...(a.croupiers.length ? a.croupiers.map((c) => el("tr", {},
      el("td", {}, c.croupier), el("td", { class: "n" }, n(c.games)), el("td", { class: "n" }, ms(c.rotor_rpm)),
      el("td", { class: "n" }, ms(c.laps)), el("td", { class: "n" }, n(c.signature_n)),
      el("td", { class: "n" }, ran(`croupier:${c.croupier}:chi2`)),
      el("td", { class: "n" }, ran(`croupier:${c.croupier}:rayleigh`))))
      : [el("tr", {}, el("td", { colspan: 7, class: "muted" }, "aucun coup"))]));
    $("plots").replaceChildren(el("h2", {}, "Graphiques"), ...Charts.all(a).map(([key, caption, svg]) =>
      el("figure", { "data-plot": key }, svg, el("figcaption", {}, caption))));
    $("pdf").hidden = false;
    $("pdf").disabled = false;
    $("pdf").textContent = "rapport PDF";
    $("sig").hidden = true;
  }

  async function load() {
    fail(null);
    document.body.removeAttribute("data-loaded");
    waiting();
    try {
      const t0 = performance.now();
      current = await Cyl.api("GET", "/stats/analysis");
      render(current);
      document.body.dataset.loaded = String(Date.now());
      document.body.dataset.drawnMs = String(Math.round(performance.now() - t0));
    } catch (e) { fail(e); }
  }

  /* The report of the analysis on the page (its snapshot), made on the table host when asked. */
  $("pdf").addEventListener("click", async () => {
    if (!current) return;
    const b = $("pdf");
    b.disabled = true;
    b.textContent = "préparation du rapport…";
    try {
      const r = await fetch(`/stats/files/report.pdf?snapshot=${current.snapshot}`,
                            { headers: { Authorization: "Bearer " + Cyl.token() }, cache: "no-store" });
      if (r.status === 410) throw new Error("Le journal a changé depuis ce calcul : « Recalculer », puis le rapport.");
      if (r.status === 409) throw new Error("Le rapport à déposer demande le nom du casino et celui de la table : réglages "
        + "casino et table_name du démon (son fichier de configuration, ou --casino et --table-name), puis redémarrer le démon.");
      if (!r.ok) throw new Error(`rapport : HTTP ${r.status}`);
      const url = URL.createObjectURL(await r.blob());
      const a = el("a", { href: url, download: `cylindre-${current.wheel}-statistiques.pdf`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      if (current.files.includes("report.pdf.sig")) $("sig").hidden = false;
    } catch (e) { fail(e); } finally {
      b.disabled = false;
      b.textContent = "rapport PDF";
    }
  });

  /* The report's detached signature (the floor's format: cylindre floor verify report.pdf --pub KEY.pub). */
  $("sig").addEventListener("click", async () => {
    try {
      const r = await fetch(`/stats/files/report.pdf.sig?snapshot=${current.snapshot}`,
                            { headers: { Authorization: "Bearer " + Cyl.token() }, cache: "no-store" });
      if (!r.ok) throw new Error(`signature : HTTP ${r.status}`);
      const url = URL.createObjectURL(await r.blob());
      // beside the PDF under its name + .sig: cylindre floor verify cylindre-T1-statistiques.pdf --pub KEY.pub
      const a = el("a", { href: url, download: `cylindre-${current.wheel}-statistiques.pdf.sig`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (e) { fail(e); }
  });

  $("b-reload").addEventListener("click", load);
  load();
})();
