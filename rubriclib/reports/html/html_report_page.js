"use strict";
// Renders the report from the JSON block above. Every text from the data goes through
// textContent (never innerHTML), so a judge's reason stays text whatever it holds.
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const kind = data.kind || "run"; // a run's results; else "goldens" or "calibration"
  const graders = (data.graders || []).map((g) => plain(g.name));
  const rows = data.rows || [];
  const comparison = data.comparison;
  const changes = comparison ? comparison.changes : [];
  const changeOf = new Map(changes.map((c) => [plain(c.row) + "\u0000" + plain(c.grader), c]));

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === "class") node.className = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  function plain(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "object" && "clipped" in value) return value.clipped;
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }
  function text(value, cls) {
    const box = el("div", { class: cls || "text" }, plain(value));
    if (value && typeof value === "object" && "clipped" in value) {
      box.append(el("div", { class: "clip-note" },
        `… first ${value.clipped.length.toLocaleString("en")} of ${value.length.toLocaleString("en")} characters; the full text is in the results file`));
    }
    return box;
  }
  const itemCounts = (counts) => Object.entries(counts).map(([item, n]) => `${item} ${n}`).join(", ") || "none";
  const percent = (v) => (v === null || v === undefined ? "n/a" : (100 * v).toFixed(1) + "%");
  const number = (v) => (v === null || v === undefined ? "n/a" : Number(v).toLocaleString("en"));
  const interval = (i) => (i ? `[${percent(i[0])}, ${percent(i[1])}]` : "");
  const signed = (v) => (v === null ? "n/a" : (v > 0 ? "+" : "") + (100 * v).toFixed(1) + " pts");
  const decimal = (v) => (v === null || v === undefined ? "n/a" : Number(v).toFixed(2));
  const within = (value, i, format) => (i ? `${format(value)} [${format(i.low)}, ${format(i.high)}]` : format(value));
  const cite = citationViews({ el, plain, number, percent });
  const outputs = outputViews({ el, plain, number, tableOf, cite });
  const checks = checklistViews({ data, el, text, number, tableOf, itemCounts });

  function tableOf(id, heads, body) {
    return el("table", id ? { id } : null, el("thead", null, el("tr", null, ...heads.map((h) => el("th", null, h)))),
      el("tbody", null, ...body));
  }
  function facts(list) {
    return el("dl", { class: "facts" }, ...list.flatMap(([k, v]) => [el("dt", null, k), el("dd", { "data-fact": k }, v)]));
  }

  function renderMeta() {
    const parts = [`rubriclib ${data.rubriclib_version}`];
    if (data.eval) parts.push(`eval ${data.eval.name}`);
    if (data.file) {
      parts.push(`${data.file.path} (modified ${data.file.modified})`,
        `${number(data.judgments)} judgments, ${number(data.errors)} errors`);
    }
    if (data.expected !== null && data.expected !== undefined) parts.push(`${number(data.expected)} expected`);
    if (data.against) parts.push(`against ${data.against.path} (modified ${data.against.modified})`);
    if (kind !== "run") {
      const run = data[kind].run;
      parts.push(`judge ${run.judge_model} at ${run.endpoint}`, `started ${run.started}`,
        `${number(run.usage.prompt_tokens)} prompt + ${number(run.usage.completion_tokens)} completion tokens`);
    }
    parts.push(`built ${data.generated}`);
    document.getElementById("meta").textContent = parts.join(" · ");
    const notes = document.getElementById("notes");
    for (const note of data.notes) notes.append(el("p", { class: "note" }, note));
  }

  function renderSummary() {
    const heads = ["grader", "rubric", "judge", "judged", "pass", "fail", "error", "pass rate", "95% interval",
      "mean score", "cached", "prompt tokens", "completion tokens", "citations", "citations verified"];
    const table = document.getElementById("summary");
    table.append(el("thead", null, el("tr", null, ...heads.map((h, i) => el("th", { class: i > 2 ? "num" : "" }, h)))));
    const body = el("tbody");
    for (const g of data.graders) {
      const score = g.mean_score === null ? "n/a" : g.mean_score.toFixed(3);
      body.append(el("tr", { "data-grader": g.name }, el("th", null, g.name), el("td", null, g.rubrics.join(", ")),
        el("td", null, g.models.join(", ")),
        ...[number(g.judged), number(g.pass), number(g.fail), number(g.error), percent(g.pass_rate),
          interval(g.interval), score, number(g.cached), number(g.prompt_tokens), number(g.completion_tokens),
          number(g.citations), cite.verifiedShare(g)]
          .map((v, i) => el("td", { class: "num", "data-column": heads[i + 3] }, v))));
    }
    table.append(body);
    const pairwise = data.graders.filter((g) => g.pairwise);
    if (pairwise.length) {
      document.getElementById("summary-section").append(el("h3", null, "Pairwise (the output against the baseline)"),
        tableOf("pairwise", ["grader", "win", "tie", "loss", "error", "win rate", "position flips", "flip rate"],
          pairwise.map((g) => { const p = g.pairwise; return el("tr", { "data-grader": g.name }, el("th", null, g.name),
            ...[number(p.win), number(p.tie), number(p.loss), number(p.errors), percent(p.win_rate),
              `${number(p.position_flips)} of ${number(p.comparisons)}`, percent(p.flip_rate)]
              .map((v, i) => el("td", { class: "num", "data-column": ["win", "tie", "loss", "error", "win rate", "flips", "flip rate"][i] }, v))); })));
    }
    document.getElementById("summary-section").append(...outputs.summary(data.graders));
    checks.failures(document.getElementById("summary-section"));
    renderGate();
  }

  function renderGate() {
    if (!data.gate) return;
    const section = document.getElementById("summary-section");
    const held = { true: "held", false: "did not hold", null: "undecided (judge errors)" };
    section.append(el("h3", null, "Gate"), el("p", { class: "meta", id: "gate-status" }, data.eval.last_line));
    if (!data.gate.length) return;
    section.append(tableOf("gate", ["condition", "value", ""], data.gate.map((g) =>
      el("tr", { "data-held": String(g.holds) }, el("td", null, g.condition), el("td", { class: "num" }, decimal(g.value)),
        el("td", { class: g.holds === true ? "pass" : g.holds === false ? "fail" : "error" }, held[String(g.holds)])))));
  }

  function renderComparison() {
    if (!comparison) return;
    const section = document.getElementById("comparison");
    section.hidden = false;
    section.append(el("h2", null, `Against ${data.against.path}`),
      el("p", { class: "meta" }, `${number(comparison.matched)} judgments matched by row and grader; ` +
        `${number(comparison.only_new)} only in this run, ${number(comparison.only_old)} only in the other; ` +
        `${number(changes.length)} verdicts changed`));
    const table = el("table", { id: "pass-rate-changes" }, el("thead", null, el("tr", null,
      ...["grader", "matched", "before", "now", "change", "95% interval of the change", ""].map((h) => el("th", null, h)))));
    const body = el("tbody");
    for (const g of comparison.graders) {
      body.append(el("tr", { "data-grader": g.name }, el("th", null, g.name), el("td", { class: "num" }, number(g.matched)),
        el("td", { class: "num" }, percent(g.old_pass_rate)), el("td", { class: "num" }, percent(g.new_pass_rate)),
        el("td", { class: "num" }, signed(g.change)),
        el("td", { class: "num" }, g.interval ? `[${signed(g.interval[0])}, ${signed(g.interval[1])}]` : "n/a"),
        el("td", null, g.within_noise ? "within noise" : "more than noise")));
    }
    table.append(body);
    section.append(table);
    comparison.groups.forEach((group, index) => {
      const kinds = Object.entries(group.kinds).map(([k, n]) => `${k} ${n}`).join(", ");
      const details = el("details", { "data-group": index },
        el("summary", null, `${group.differs}: ${number(group.count)} changed (${kinds})`));
      details.addEventListener("toggle", () => fillGroup(details, index), { once: true });
      section.append(details);
    });
  }

  function fillGroup(details, index) {
    const table = el("table", { class: "sides" }, el("thead", null, el("tr", null,
      ...["row", "grader", "change", "before", "now"].map((h) => el("th", null, h)))));
    const body = el("tbody");
    for (const c of changes) {
      if (c.group !== index) continue;
      body.append(el("tr", null, el("td", { class: "row-id" }, c.row), el("td", null, c.grader), el("td", null, c.kind),
        el("td", null, `${c.old.verdict} · ${c.old.rubric} · ${c.old.model}`, text(c.old.reason)),
        el("td", null, `${c.new.verdict} · ${c.new.rubric} · ${c.new.model}`, text(c.new.reason),
          c.citations ? el("div", { class: "meta citations-change" }, c.citations) : null)));
    }
    table.append(body);
    details.append(table);
  }

  // The matrix draws only the rows in view (10,000 table rows take a second to lay out):
  // `shown` holds the indexes the filter, search and sort leave, in order.
  const wrap = document.getElementById("matrix-wrap");
  const tbody = document.querySelector("#matrix tbody");
  const OVERSCAN = 15;
  let rowHeight = 29;
  const failedCount = rows.map((row) => row.cells.filter((c) => c && c.verdict === "fail").length);
  const has = (row, verdict) => row.cells.some((c) => c && c.verdict === verdict);
  const changed = (row) => Boolean(row.changed && row.changed.some(Boolean));
  // Votes or panel members of one judgment that did not all give the same verdict.
  const split = (c) => Boolean(c) && ["votes", "panel"].some((key) => c[key] && new Set(c[key].map((m) => m.verdict)).size > 1);
  const disagreements = (row) => row.cells.some(split);
  const tests = { all: () => true, fails: (r) => has(r, "fail"), errors: (r) => has(r, "error"), changed, disagreements };
  let filter = "all";
  let haystacks = null;
  let order = rows.map((_, index) => index);
  let shown = order;
  let drawn = null;

  function rowElement(index) {
    const row = rows[index];
    const tr = document.createElement("tr");
    tr.className = "data";
    tr.dataset.index = index;
    const id = document.createElement("td");
    id.className = "row-id";
    id.textContent = plain(row.id);
    id.title = plain(row.id);
    tr.append(id);
    row.cells.forEach((c, column) => {
      const td = document.createElement("td");
      td.className = "cell " + (c ? c.verdict : "none") + (row.changed && row.changed[column] ? " changed" : "");
      td.dataset.column = column;
      td.textContent = c ? (c.label !== undefined ? `${c.label} (${c.verdict})` : c.verdict) : "—";
      tr.append(td);
    });
    const failed = document.createElement("td");
    failed.className = "num";
    failed.textContent = failedCount[index];
    tr.append(failed);
    return tr;
  }

  function spacer(height) {
    const tr = document.createElement("tr");
    tr.className = "spacer";
    const td = document.createElement("td");
    td.colSpan = graders.length + 2;
    td.style.height = height + "px";
    tr.append(td);
    return tr;
  }

  function draw() {
    const first = Math.max(0, Math.floor(wrap.scrollTop / rowHeight) - OVERSCAN);
    const last = Math.min(shown.length, first + Math.ceil(wrap.clientHeight / rowHeight) + 2 * OVERSCAN);
    if (drawn && drawn[0] === first && drawn[1] === last && drawn[2] === shown) return;
    drawn = [first, last, shown];
    const fragment = document.createDocumentFragment();
    fragment.append(spacer(first * rowHeight));
    for (let i = first; i < last; i++) fragment.append(rowElement(shown[i]));
    fragment.append(spacer((shown.length - last) * rowHeight));
    tbody.replaceChildren(fragment);
  }

  function renderMatrix() {
    document.querySelector("#matrix thead").append(el("tr", null, el("th", null, "row"),
      ...graders.map((g) => el("th", null, g)), el("th", { class: "num" }, "failed")));
    const filters = document.getElementById("filters");
    for (const name of ["all", "fails", "errors", "changed", "disagreements"]) {
      if (name === "changed" && !comparison) continue;
      const count = rows.filter(tests[name]).length;
      const button = el("button", { type: "button", "data-filter": name, "aria-pressed": String(name === filter) },
        `${name} (${number(count)})`);
      button.addEventListener("click", () => { filter = name; applyFilter(); });
      filters.append(button);
    }
    tbody.addEventListener("click", (event) => {
      const td = event.target.closest("td.cell");
      if (td) openDetail(Number(td.parentElement.dataset.index), Number(td.dataset.column));
    });
    let pending = false;
    wrap.addEventListener("scroll", () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; draw(); });
    });
    document.getElementById("search").addEventListener("input", applyFilter);
    document.getElementById("sort").addEventListener("change", applySort);
    applyFilter();
    const sample = tbody.querySelector("tr.data");
    if (sample && sample.offsetHeight && sample.offsetHeight !== rowHeight) {
      rowHeight = sample.offsetHeight;
      drawn = null;
      draw();
    }
  }

  function haystack(row) {
    const parts = [plain(row.id), plain(row.output), JSON.stringify(row.metadata)];
    for (const c of row.cells) if (c) parts.push(plain(c.reason));
    return parts.join("\n").toLowerCase();
  }

  function applyFilter() {
    for (const button of document.querySelectorAll("#filters button")) {
      button.setAttribute("aria-pressed", String(button.dataset.filter === filter));
    }
    const query = document.getElementById("search").value.trim().toLowerCase();
    if (query && !haystacks) haystacks = rows.map(haystack);
    const test = tests[filter];
    shown = order.filter((index) => test(rows[index]) && (!query || haystacks[index].includes(query)));
    document.getElementById("shown").textContent = `${number(shown.length)} of ${number(rows.length)} rows`;
    wrap.scrollTop = 0;
    draw();
  }

  function applySort() {
    order = rows.map((_, index) => index);
    if (document.getElementById("sort").value === "failed") {
      order.sort((a, b) => failedCount[b] - failedCount[a] || a - b);
    }
    applyFilter();
  }

  function members(title, list) {
    const table = el("table", { class: "members" }, el("thead", null, el("tr", null,
      ...["", "verdict", "score", "reason"].map((h) => el("th", null, h)))));
    const body = el("tbody");
    for (const m of list) {
      const verdict = m.given ? `${m.given} (${m.verdict})` : m.verdict;
      body.append(el("tr", null, el("td", null, m.label), el("td", { class: m.verdict }, verdict),
        el("td", { class: "num" }, m.score === null || m.score === undefined ? "" : m.score), el("td", null, text(m.reason))));
    }
    table.append(body);
    return [el("h3", null, title), table];
  }

  // The messages a judgment sent, each a list of indexes into data.messages (shared texts);
  // each citation beside the block it quotes (added to `placed`).
  function sentMessages(messages, citations, placed) {
    const shown = [el("h3", null, "Messages sent to the judge")];
    if (!messages || !messages.sent) {
      const why = messages ? messages.unavailable
        : "a results file holds no row's input or context; `rubriclib report --eval EVAL_FILE` re-renders them from the eval's rubrics and rows";
      return [...shown, el("p", { class: "meta", id: "detail-messages" }, `Not available: ${why}.`)];
    }
    const box = el("div", { id: "detail-messages" });
    const orders = ["the output as Response A", "A and B swapped: the baseline as Response A"];
    messages.sent.forEach((request, n) => {
      const list = el("div", { class: "request", "data-request": n });
      if (messages.sent.length > 1) list.append(el("h4", null, `Request ${n + 1}: ${orders[n]}`));
      request.forEach(([role, pieces], m) => {
        const values = pieces.map((i) => data.messages[i]);
        const cited = cite.citedPieces(messages, n, m, citations, placed);
        const message = el("div", { class: "text message", "data-role": role }, ...cite.pieces(values, cited));
        for (const v of values) {
          if (v && typeof v === "object" && "clipped" in v) {
            message.append(el("div", { class: "clip-note" }, `… a part cut at ${number(v.clipped.length)} of ${number(v.length)} characters`));
          }
        }
        list.append(el("h4", null, role), message);
      });
      box.append(list);
    });
    return [...shown, box];
  }

  function openDetail(index, column) {
    const row = rows[index];
    const c = row.cells[column];
    const panel = document.getElementById("detail");
    const close = el("button", { type: "button", class: "close" }, "close");
    const placed = new Set(); // citations shown beside a block of the messages
    close.addEventListener("click", () => { panel.hidden = true; });
    panel.replaceChildren(close, el("h2", null, `${plain(row.id)} · ${plain(graders[column])}`));
    if (!c) {
      panel.append(el("p", null, "No judgment of this row by this grader in the results file."));
    } else {
      const score = c.score === null ? "none" : c.score + (c.raw_score !== undefined ? ` (raw ${c.raw_score})` : "");
      const facts = [["rubric", data.rubrics[c.rubric]], ["judge", data.models[c.model]], ["score", score],
        ["attempts", c.attempts], ["latency", c.latency_ms === null ? "" : `${number(c.latency_ms)} ms`],
        ["tokens", `${number(c.tokens[0])} prompt + ${number(c.tokens[1])} completion`], ["cached", c.cached ? "yes" : "no"]];
      if (c.label !== undefined) facts.unshift(["label", `${c.label} (${c.verdict})`]);
      if (c.pairwise) facts.push(["pairwise", `winner ${c.pairwise.winner}` + (c.pairwise.position_flip ? ", position flip" : "")]);
      if (c.citations) facts.push(["citations", cite.tally(c.citations)]);
      panel.append(el("p", null, el("span", { class: "badge " + c.verdict, id: "detail-verdict" }, c.verdict)),
        el("h3", null, "Reason"), Object.assign(text(c.reason), { id: "detail-reason" }),
        el("dl", null, ...facts.flatMap(([k, v]) => [el("dt", null, k), el("dd", null, v)])));
      if (c.checklist) panel.append(...checks.items(c.checklist));
      if (c.output_fields) panel.append(...outputs.detail(c.output_fields));
      for (const [key, title] of [["votes", "Votes"], ["panel", "Panel judges"], ["turns", "Turns"]]) {
        if (c[key]) panel.append(...members(title, c[key]));
      }
      if (c.citations) panel.append(...cite.listed(c.citations));
      panel.append(...sentMessages(c.messages, c.citations || [], placed));
      const change = changeOf.get(plain(row.id) + "\u0000" + plain(graders[column]));
      if (change) {
        panel.append(el("h3", null, `Before (${change.kind})`),
          el("p", null, `${change.old.verdict} · ${change.old.rubric} · ${change.old.model}`), text(change.old.reason));
        if (change.citations) panel.append(el("p", { class: "meta", id: "detail-citations-change" }, change.citations));
      }
    }
    if (row.output !== undefined) panel.append(el("h3", null, "Output"), cite.output(text(row.output), row.output, c, placed));
    if (row.metadata && Object.keys(row.metadata).length) panel.append(el("h3", null, "Metadata"), text(row.metadata));
    panel.hidden = false;
  }

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") document.getElementById("detail").hidden = true;
  });
  renderMeta();
  if (kind === "run") {
    renderSummary();
    renderComparison();
    renderMatrix();
  } else {
    document.getElementById("summary-section").hidden = true;
    document.getElementById("matrix-section").hidden = true;
    const views = agreementViews({ data, el, text, tableOf, facts, within, percent, decimal, number, itemCounts });
    views[kind](document.getElementById("agreement"));
  }
  document.body.dataset.ready = "true";
})();
