"use strict";
// A rubric's labels and output fields: per grader, how many judgments gave each label and
// what its judges filled in (the summary's words come from the data, worded once in Python);
// per judgment, each field's value, an array of objects as a small table, and each object's
// citations shown as the verdict's are (`cite.beside`).
// Called by html_report_page.js (one inline script) with its helpers, which turn every text
// into a text node, never markup.
function outputViews({ el, plain, number, tableOf, cite }) {
  const clippedText = (v) => v !== null && typeof v === "object" && "clipped" in v && "length" in v;
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !clippedText(v);

  // The graders' summaries: on a labels rubric, a row per grader with each label's count
  // (and the verdict it means); a row per output field, the grader and how many judgments
  // it counted.
  function summary(graders) {
    return [...labels(graders), ...fields(graders)];
  }

  function labels(graders) {
    const labelled = graders.filter((g) => g.labels);
    if (!labelled.length) return [];
    const rows = labelled.map((g) => el("tr", { "data-grader": g.name }, el("th", null, g.name),
      el("td", { class: "num" }, number(Object.values(g.labels.counts).reduce((a, b) => a + b, 0))),
      el("td", null, g.labels.text)));
    return [el("h3", null, "Labels (judgments per label, with the verdict each means; judge errors have none)"),
      tableOf("label-counts", ["grader", "labelled", "judgments per label"], rows)];
  }

  function fields(graders) {
    const filled = graders.filter((g) => g.output);
    if (!filled.length) return [];
    const rows = filled.flatMap((g) => g.output.texts.map(([field, words]) =>
      el("tr", { "data-grader": g.name, "data-field": field }, el("th", null, g.name),
        el("td", { class: "num" }, `${number(g.output.counted)} of ${number(g.judged)}`),
        el("td", null, field), el("td", null, words))));
    return [el("h3", null, "Output fields (what the judges filled in; judge errors have none)"),
      tableOf("output-summary", ["grader", "judgments counted", "field", "what the judges filled in"], rows)];
  }

  // One value: text, a list, a table of objects or an object's fields; `path` names it
  // (`issues[0]`) where its citations are shown.
  function value(v, path) {
    if (Array.isArray(v)) {
      if (v.length && v.every(isObject)) return objects(v, path);
      return el("ul", { class: "output-list" }, ...v.map((item, i) => el("li", null, value(item, `${path}[${i}]`))));
    }
    if (!isObject(v)) return el("span", { class: "output-value" }, plain(v));
    const keys = Object.keys(v).filter((key) => key !== "citations");
    return el("div", null, el("dl", { class: "facts" }, ...keys.flatMap((key) =>
      [el("dt", null, key), el("dd", null, value(v[key], `${path}.${key}`))])), cited(v, path));
  }

  function cited(v, path) {
    return Array.isArray(v.citations) ? cite.beside(path, v.citations) : null;
  }

  // An array of objects: a column per property (in the order first seen), one for citations.
  function objects(list, path) {
    const keys = [...new Set(list.flatMap((item) => Object.keys(item)))].filter((key) => key !== "citations");
    const withCitations = list.some((item) => Array.isArray(item.citations));
    const heads = ["", ...keys, ...(withCitations ? ["citations"] : [])];
    const table = tableOf(null, heads, list.map((item, i) => el("tr", { "data-item": i }, el("td", { class: "num" }, i),
      ...keys.map((key) => el("td", { "data-key": key }, key in item ? value(item[key], `${path}[${i}].${key}`) : "")),
      withCitations ? el("td", null, cited(item, `${path}[${i}]`)) : null)));
    table.className = "members output-items";
    return table;
  }

  // A judgment's fields, each by name.
  function detail(fields) {
    return [el("h3", null, "Output fields"), el("dl", { class: "facts", id: "detail-output-fields" },
      ...Object.entries(fields).flatMap(([name, v]) => [el("dt", null, name), el("dd", { "data-field": name }, value(v, name))]))];
  }

  return { summary, detail };
}
