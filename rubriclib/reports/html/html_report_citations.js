"use strict";
// A judgment's citations in its detail panel: each shown beside the block it quotes (in the
// messages sent, or the row's output), the quoted span highlighted when verified, and all of
// them listed with who gave each. Called by html_report_page.js (one inline script) with its
// helpers, which turn every text into a text node, never markup.
function citationViews({ el, plain, number, percent }) {
  const why = (c) => (c.found_in ? `found in ${plain(c.found_in)}` : c.note ? plain(c.note) : "");

  // The summary's cell: verified citations and their share, "-" when none were given.
  const verifiedShare = (g) => (g.citations ? `${number(g.citations_verified)} (${percent(g.citations_share)})` : "-");
  const tally = (list) => `${number(list.filter((c) => c.status === "verified").length)} of ${number(list.length)} verified`;

  function badge(c) {
    return el("span", { class: "badge " + (c.status === "verified" ? "pass" : "fail"), "data-status": c.status }, c.status);
  }

  // A block's text (as the page keeps it: maybe clipped) with the verified citations' spans
  // highlighted; a span past the part kept is left unmarked, never an error.
  function highlighted(id, value, list) {
    const characters = Array.from(plain(value)); // code points, as the spans count them
    const spans = list.filter((c) => Array.isArray(c.shown))
      .map((c) => [Math.min(c.shown[0], characters.length), Math.min(c.shown[1], characters.length)])
      .filter(([start, end]) => end > start)
      .sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const [start, end] of spans) {
      const last = merged[merged.length - 1];
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    const block = el("span", { class: "cited", "data-block": id });
    let at = 0;
    for (const [start, end] of merged) {
      block.append(characters.slice(at, start).join(""), el("mark", null, characters.slice(start, end).join("")));
      at = end;
    }
    block.append(characters.slice(at).join(""));
    return block;
  }

  // One citation on a line: its status, who gave it, the quote and why it did not verify.
  function line(c, length) {
    const parts = [badge(c), " "];
    if (c.by) parts.push(el("span", { class: "by" }, plain(c.by)), ": ");
    parts.push(el("q", null, plain(c.quote)));
    let note = why(c);
    if (Array.isArray(c.shown) && length !== undefined && c.shown[0] >= length) note = "the quoted part is past the text kept in the page";
    if (note) parts.push(el("span", { class: "why" }, ` (${note})`));
    return el("div", { class: "citation", "data-status": c.status }, ...parts);
  }

  // The citations of one block, shown beside it.
  function beside(id, list, value) {
    const length = value === undefined ? undefined : Array.from(plain(value)).length;
    return el("div", { class: "citations", "data-block": id },
      el("div", { class: "meta" }, `Citations of ${id}: ${tally(list)}`), ...list.map((c) => line(c, length)));
  }

  // Every citation of the judgment, by block; those whose block the page shows are beside it too.
  function listed(list) {
    const table = el("table", { class: "members", id: "detail-citations" }, el("thead", null, el("tr", null,
      ...["block", "status", "by", "quote", ""].map((h) => el("th", null, h)))));
    const body = el("tbody");
    for (const c of list) {
      body.append(el("tr", { "data-block": c.block === null ? "" : c.block, "data-status": c.status },
        el("td", null, c.block === null ? "none" : plain(c.block)), el("td", null, badge(c)), el("td", null, plain(c.by)),
        el("td", null, el("q", null, plain(c.quote))), el("td", null, why(c))));
    }
    table.append(body);
    return [el("h3", null, `Citations (${tally(list)})`), table];
  }

  // The citations of the blocks of message `m` of request `n` (messages.blocks), by piece:
  // [block id, citations]; on a pairwise page, A and B only in the order they were given in.
  function citedPieces(messages, n, m, citations, placed) {
    const pieces = new Map();
    for (const [id, [message, piece]] of Object.entries((messages.blocks || [])[n] || {})) {
      if (message !== m) continue;
      const list = citations.filter((c) => c.block === id && (c.request || 0) === n &&
        !(messages.sent.length > 1 && (id === "A" || id === "B") && c.request === undefined));
      if (!list.length) continue;
      pieces.set(piece, [id, list]);
      for (const c of list) placed.add(c);
    }
    return pieces;
  }

  // A message's text piece by piece (`values`), each cited block's citations beside it.
  function pieces(values, cited) {
    if (!cited.size) return [values.map(plain).join("")];
    return values.flatMap((value, index) => {
      const found = cited.get(index);
      return found ? [highlighted(found[0], value, found[1]), beside(found[0], found[1], value)] : [plain(value)];
    });
  }

  // The row's output (`box`, its text shown), with the output's citations the messages did not
  // show (`placed`) beside it.
  function output(box, value, cell, placed) {
    const list = ((cell && cell.citations) || []).filter((c) => c.block === "output" && !placed.has(c));
    if (list.length) box.firstChild.replaceWith(highlighted("output", value, list), beside("output", list, value));
    return Object.assign(box, { id: "detail-output" });
  }

  return { verifiedShare, tally, highlighted, beside, listed, citedPieces, pieces, output };
}
