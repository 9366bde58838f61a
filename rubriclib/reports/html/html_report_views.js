"use strict";
// Goldens and calibration pages: their JSON report's numbers, shown as they are. Called by
// html_report_page.js (both files are one inline script) with its helpers, which turn every
// text into a text node, never markup.
function agreementViews({ data, el, text, tableOf, facts, within, percent, decimal, number, itemCounts }) {
  function goldenRows(list) {
    return list.map((o) => el("tr", { "data-golden": o.name }, el("td", null, o.name),
      el("td", null, o.expected_winner || o.expected), el("td", null, o.answers.join(", ")),
      el("td", null, text(o.why || "")), el("td", null, ...o.results.map((r) => text(r.reason)))));
  }

  function confusion(counts) {
    if ("true_pass" in counts) {
      return tableOf(null, ["expected \\ judged", "pass", "fail"], [
        el("tr", null, el("th", null, "pass"), el("td", { class: "num pass" }, number(counts.true_pass)), el("td", { class: "num fail" }, number(counts.false_fail))),
        el("tr", null, el("th", null, "fail"), el("td", { class: "num fail" }, number(counts.false_pass)), el("td", { class: "num pass" }, number(counts.true_fail)))]);
    }
    const winners = Object.keys(counts).filter((k) => k.startsWith("expected_"));
    const answers = ["output", "tie", "baseline"];
    return tableOf(null, ["expected \\ judged", ...answers], winners.map((k) => el("tr", null, el("th", null, k.slice(9)),
      ...answers.map((a) => el("td", { class: "num " + (a === k.slice(9) ? "pass" : "fail") }, number(counts[k][a] || 0))))));
  }

  // Across trials, judge errors left out: things whose verdict changed, verdicts off their thing's majority.
  function flipRates(f, noun) {
    return `flipped ${number(f.flipped)} of ${number(f.compared)} ${noun}(s) (${percent(f.flipped_share)}), ` +
      `disagreement ${percent(f.disagreement)} (${number(f.differing)} of ${number(f.judgments)} verdict(s))`;
  }

  function goldens(section) {
    const run = data.goldens;
    section.hidden = false;
    const said = { ok: "every judgment matched its golden", regression: "a judged golden missed (a regression)",
      undecided: "undecided: judge errors kept goldens from being judged; no regression measured",
      interrupted: "interrupted: not every golden was judged" };
    section.append(el("h2", null, "Goldens"), el("p", { class: "meta", id: "goldens-status" },
      `${run.trials} trial(s) per golden; ${said[run.status]}`));
    for (const r of run.rubrics) {
      // A miss is a judged golden the judge got wrong; a judge error is an outage, listed apart.
      const misses = r.goldens.filter((o) => o.status === "miss");
      const errored = r.goldens.filter((o) => o.status === "error");
      const flaky = r.goldens.filter((o) => o.flaky);
      const accuracy = within(r.accuracy, r.accuracy_interval, percent) + (r.errors ? ` of ${r.judged} judged` : "");
      const list = [["judgments", number(r.judgments)], ["accuracy", accuracy],
        ["kappa", within(r.kappa, r.kappa_interval, decimal) + (r.kappa_band ? ` (${r.kappa_band})` : "")],
        ["judge errors", number(r.counts.errors)], ["missed goldens", number(misses.length)],
        ["goldens with judge errors", number(errored.length)], ["flaky goldens", number(flaky.length)]];
      if (r.flip_rates) list.push(["flip rates", flipRates(r.flip_rates, "golden")]);
      if (r.exact_score_agreement !== null) list.push(["exact score agreement", percent(r.exact_score_agreement)]);
      if (r.mean_absolute_error !== null) list.push(["mean absolute error", decimal(r.mean_absolute_error)]);
      if (Object.keys(r.checklist_failures || {}).length) list.push(["checklist items failed", itemCounts(r.checklist_failures)]);
      if (r.pairwise) list.push(["pairwise", `win ${r.pairwise.win}, tie ${r.pairwise.tie}, loss ${r.pairwise.loss}; flip rate ${percent(r.pairwise.flip_rate)}`]);
      const heads = ["golden", "expected", "judged", "why", "judge's reasons"];
      section.append(el("div", { class: "rubric", "data-rubric": r.rubric.name },
        el("h3", null, `${r.rubric.name}@${r.rubric.version} ${r.rubric.digest.slice(0, 8)}`), facts(list),
        el("h4", null, "Confusion matrix"), confusion(r.counts),
        el("h4", null, `Missed goldens (${misses.length})`), misses.length ? tableOf(null, heads, goldenRows(misses)) : el("p", { class: "meta" }, "none"),
        el("h4", null, `Goldens with judge errors (${errored.length})`), errored.length ? tableOf(null, heads, goldenRows(errored)) : el("p", { class: "meta" }, "none"),
        el("h4", null, `Flaky goldens (${flaky.length})`), flaky.length ? tableOf(null, heads, goldenRows(flaky)) : el("p", { class: "meta" }, "none")));
    }
  }

  function calibration(section) {
    const c = data.calibration;
    section.hidden = false;
    const judged = c.trials > 1
      ? ["judgments", `${number(c.run.judged)} judged of ${number(c.run.planned)} (${number(c.run.rows)} rows x ${c.trials} trials)`]
      : ["rows", `${number(c.run.judged)} judged of ${number(c.run.rows)}`];
    const list = [judged, ["verdicts", number(c.verdicts)],
      ["judge errors", number(c.judge_errors)], ["disagreements", number(c.disagreements)],
      ["accuracy", within(c.accuracy, c.accuracy_interval, percent)],
      ["kappa", c.kappa === null ? `undefined${c.kappa_undefined ? ": " + c.kappa_undefined : ""}`
        : within(c.kappa, c.kappa_interval, decimal) + (c.kappa_band ? ` (${c.kappa_band})` : "")],
      ["base rate (human pass)", percent(c.base_rate)]];
    if (c.flip_rates) list.push(["flip rates", flipRates(c.flip_rates, "row")]);
    if (c.majority_baseline) list.push(["always-majority baseline", `${c.majority_baseline.label}: ${percent(c.majority_baseline.accuracy)}`]);
    if (Object.keys(c.checklist_failures || {}).length) list.push(["checklist items failed", itemCounts(c.checklist_failures)]);
    if (c.scored_pairs) list.push(["exact score agreement", percent(c.exact_score_agreement)], ["mean absolute error", decimal(c.mean_absolute_error)]);
    if (c.pass_fail) {
      list.push(["pass/fail by the labels", `accuracy ${percent(c.pass_fail.accuracy)}, kappa ${decimal(c.pass_fail.kappa)}`]);
    }
    // Rows: human labels (pass and fail, or a labels rubric's names); columns: the judge's, then errors.
    const humans = Object.keys(c.confusion);
    const columns = Object.keys(c.confusion[humans[0]]);
    const matrix = tableOf("confusion", ["human \\ judge", ...columns], humans.map((human) => el("tr", null,
      el("th", null, human), ...columns.map((v) => el("td", { class: "num " + (v === "error" ? "error" : v === human ? "pass" : "fail") }, number(c.confusion[human][v]))))));
    const tags = Object.entries(c.tags).map(([tag, t]) => el("tr", null, el("th", null, tag), el("td", { class: "num" }, number(t.verdicts)),
      el("td", { class: "num" }, within(t.accuracy, t.accuracy_interval, percent)), el("td", { class: "num" }, within(t.kappa, t.kappa_interval, decimal))));
    const named = (name, verdict) => (name ? `${name} (${verdict})` : verdict);
    const cases = (list) => list.map((d) => el("tr", { "data-row": d.id }, el("td", null, d.id), el("td", null, d.where),
      el("td", { class: d.label }, named(d.human_label, d.label) + (d.score !== null ? ` (score ${d.score})` : "")),
      el("td", { class: d.verdict }, named(d.verdict !== "error" && d.judge_label, d.verdict) + (d.judge_score !== null ? ` (score ${d.judge_score})` : "")),
      el("td", null, text(d.reason)), el("td", null, d.tags.join(", "))));
    const heads = ["row", "where", "human label", "judge", "judge's reason", "tags"];
    section.append(el("h2", null, `Calibration of ${c.rubric.name}@${c.rubric.version} ${c.rubric.digest.slice(0, 8)} against ${c.labels}`),
      facts(list), el("p", { class: "meta" }, `95% intervals: bootstrap, ${number(c.bootstrap.resamples)} resamples, seed ${c.bootstrap.seed}`),
      el("h3", null, "Confusion matrix"), matrix);
    if (tags.length) section.append(el("h3", null, "By tag"), tableOf("tags", ["tag", "verdicts", "accuracy", "kappa"], tags));
    section.append(el("h3", null, `Disagreements (${c.disagreement_rows.length})`), tableOf("disagreements", heads, cases(c.disagreement_rows)));
    if (c.judge_error_rows.length) section.append(el("h3", null, `Judge errors (${c.judge_error_rows.length})`), tableOf("judge-errors", heads, cases(c.judge_error_rows)));
  }

  return { goldens, calibration };
}
