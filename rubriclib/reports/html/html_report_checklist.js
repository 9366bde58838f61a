"use strict";
// Checklist mode in a run's page: per grader, the items that decided its failures; per
// judgment, each item's answer. Called by html_report_page.js (one inline script) with its
// helpers, which turn every text into a text node, never markup.
function checklistViews({ data, el, text, number, tableOf, itemCounts }) {
  // Graders judged in checklist mode: which items decided their failures, most often first.
  function failures(section) {
    const judged = data.graders.filter((g) => g.checklist_failures);
    if (!judged.length) return;
    section.append(el("h3", null, "Checklist items that decided the failures"),
      tableOf("checklist-failures", ["grader", "items failed (judgments, most often first)", "uncounted"],
        judged.map((g) => el("tr", { "data-grader": g.name }, el("th", null, g.name),
          el("td", null, itemCounts(g.checklist_failures)),
          el("td", { class: "num", title: "checklist judgments whose rubric was not found" }, number(g.checklist_uncounted))))));
  }

  // A checklist judgment's items; `failed` is there only when the rubric that judged was found.
  function items(list) {
    const marked = list.some((item) => "failed" in item);
    const table = el("table", { class: "members", id: "detail-checklist" }, el("thead", null, el("tr", null,
      ...["item", "answer", "p", "reason"].map((h) => el("th", null, h)))));
    const body = el("tbody");
    for (const item of list) {
      const answer = item.answer === null ? "no answer" : item.answer + (item.failed ? " (failed)" : "");
      body.append(el("tr", { "data-item": item.id, "data-failed": marked ? String(item.failed) : "unknown" },
        el("td", null, item.id), el("td", { class: item.failed ? "fail" : item.answer === null ? "error" : "" }, answer),
        el("td", { class: "num" }, typeof item.p === "number" ? item.p.toFixed(3) : ""), el("td", null, text(item.reason))));
    }
    table.append(body);
    const shown = [el("h3", null, "Checklist"), table];
    if (!marked) shown.push(el("p", { class: "meta" }, "Failed items not marked: the rubric that judged was not found by its digest."));
    return shown;
  }

  return { failures, items };
}
