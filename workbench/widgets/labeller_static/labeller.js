// Labeller view: paints Python's state; document text only ever goes in as text nodes.
// Offsets: Python counts code points, the DOM counts UTF-16 units; the functions below map
// between them (tests/widgets/test_labeller_js.py runs them under node).

// code points -> UTF-16 units (a count past the end is the end)
export function cp2u(text, cp) {
  let u = 0;
  for (let n = 0; n < cp && u < text.length; n++) {
    const c = text.charCodeAt(u);
    u += c >= 0xd800 && c <= 0xdbff && u + 1 < text.length &&
      (text.charCodeAt(u + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return u;
}

// UTF-16 units -> code points; an offset inside a surrogate pair goes to the pair's start,
// or past it with `up` (a selection's end)
export function u2cp(text, u, up = false) {
  let cp = 0;
  let i = 0;
  while (i < u && i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair && i + 1 === u) return up ? cp + 1 : cp;
    i += pair ? 2 : 1;
    cp += 1;
  }
  return cp;
}

// a DOM selection [uStart, uEnd) in UTF-16 units -> [start, end) in code points, never empty
// unless the selection is
export function toCodePoints(text, uStart, uEnd) {
  const [a, b] = uStart <= uEnd ? [uStart, uEnd] : [uEnd, uStart];
  return [u2cp(text, a, false), u2cp(text, b, true)];
}

// the text cut at every mark's ends: [[piece, "class names"], ...] in order; marks are
// [start, end, cls] in code points
export function pieces(text, marks) {
  const n = u2cp(text, text.length);
  const cuts = [...new Set([0, n, ...marks.flatMap((m) => [Math.max(0, Math.min(n, m[0])),
    Math.max(0, Math.min(n, m[1]))])])].sort((x, y) => x - y);
  const out = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [a, b] = [cuts[i], cuts[i + 1]];
    const cls = marks.filter((m) => m[0] <= a && b <= m[1]).map((m) => m[2]).join(" ");
    out.push([text.slice(cp2u(text, a), cp2u(text, b)), cls]);
  }
  return out;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const KEYS = {
  Enter: ["save"], s: ["save"], u: ["unanswerable"], k: ["skip"], z: ["undo"], a: ["add_span"],
  m: ["mention"], x: ["answer_marked"], "=": ["same_as_last"], r: ["open_skipped"],
  "]": ["grow", { unit: "word", by: 1, side: "end" }],
  "[": ["grow", { unit: "word", by: -1, side: "end" }],
  "}": ["grow", { unit: "sentence", by: 1, side: "end" }],
  "{": ["grow", { unit: "sentence", by: -1, side: "end" }],
  "(": ["grow", { unit: "sentence", by: 1, side: "start" }],
  ")": ["grow", { unit: "sentence", by: -1, side: "start" }],
};

function render({ model, el: root }) {
  const box = el("div", "wb-lab");
  box.tabIndex = 0;
  const top = el("div", "wb-top");
  const progress = el("span", "wb-progress");
  const skipped = el("button", "wb-skipped");
  const goto = el("input", "wb-goto");
  goto.placeholder = "open qid (g)";
  top.append(progress, skipped, goto);
  const q = el("div", "wb-q");
  const search = el("input", "wb-search");
  search.placeholder = "search the corpus (/)";
  const cols = el("div", "wb-cols");
  const bm = el("div", "wb-hits wb-bm25"), de = el("div", "wb-hits wb-dense");
  cols.append(bm, de);
  const title = el("div", "wb-title");
  const doc = el("div", "wb-doc");
  const sugg = el("div", "wb-suggestions");
  const cat = el("input", "wb-category");
  const list = el("datalist");
  list.id = "wb-cats-" + Math.random().toString(36).slice(2);
  cat.setAttribute("list", list.id);
  const buttons = el("div", "wb-buttons");
  const warn = el("div", "wb-warn"), status = el("div", "wb-status");
  const help = el("div", "wb-help", "Enter/s save the selected answer · ] [ word · } { ( ) sentence · " +
    "select inside the answer then m must-mention, x answer · 1-9 suggestion · c category, = same " +
    "as last · u unanswerable · k skip · r skipped queue · g open qid · z undo");
  const cmd = (c, extra) => model.send({ cmd: c, ...(extra || {}) });
  const refocus = () => box.focus({ preventScroll: true });
  for (const [name, key, c] of [["save", "s", "save"], ["unanswerable", "u", "unanswerable"],
      ["skip", "k", "skip"], ["undo", "z", "undo"], ["add span", "a", "add_span"],
      ["must-mention", "m", "mention"], ["same category as last", "=", "same_as_last"]]) {
    const b = el("button", "wb-btn-" + c, `${name} (${key})`);
    b.onclick = () => { commitCategory(); cmd(c); refocus(); };
    buttons.append(b);
  }
  box.append(top, q, search, cols, title, doc, sugg, cat, list, buttons, warn, status, help);
  root.append(box);

  const commitCategory = () => {
    if (cat.value.trim() !== model.get("category")) cmd("category", { value: cat.value });
  };
  const field = (input, onEnter) => input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); onEnter(); refocus(); }
    else if (ev.key === "Escape") refocus();
    ev.stopPropagation();
  });
  field(search, () => cmd("search", { query: search.value }));
  field(cat, commitCategory);
  field(goto, () => { cmd("goto", { qid: goto.value }); goto.value = ""; });
  skipped.onclick = () => { cmd("open_skipped"); refocus(); };

  let hitIndex = -1;
  const allHits = () => [...model.get("bm25_hits"), ...model.get("dense_hits")];
  function paintHits() {
    hitIndex = -1;
    for (const [pane, name, hits] of [[bm, "BM25", model.get("bm25_hits")],
        [de, "dense", model.get("dense_hits")]]) {
      pane.replaceChildren(el("b", "", name));
      hits.forEach((h) => {
        const row = el("div", "wb-hit", `${h.rank}. ${h.title} (${h.score}) ${h.snippet}`);
        row.dataset.chunk = h.chunk_id;
        row.onclick = () => { cmd("open", { doc_id: h.doc_id, start: h.start, end: h.end }); refocus(); };
        pane.append(row);
      });
      if (!hits.length) pane.append(el("div", "wb-nohits", "no hits"));
    }
  }
  function paintDoc() {
    const text = model.get("doc_text"), id = model.get("doc_id");
    title.textContent = model.get("doc_title") ? `${model.get("doc_title")} (${id})` : "";
    const marks = [];
    const hl = model.get("highlight");
    if (hl.length === 2) marks.push([hl[0], hl[1], "wb-hl"]);
    for (const s of model.get("spans")) if (s[0] === id) marks.push([s[1], s[2], "wb-span"]);
    const sel = model.get("selection");
    if (sel.length === 3 && sel[0] === id) marks.push([sel[1], sel[2], "wb-sel"]);
    const mk = model.get("marked");
    if (mk.length === 2) marks.push([mk[0], mk[1], "wb-mark"]);
    doc.replaceChildren(...pieces(text, marks).map(([piece, cls]) =>
      cls ? el("span", cls, piece) : document.createTextNode(piece)));
    const first = doc.querySelector(".wb-sel") || doc.querySelector(".wb-hl");
    if (first && first.scrollIntoView) first.scrollIntoView({ block: "nearest" });
  }
  function offsetIn(node, off) {
    const r = document.createRange();
    r.selectNodeContents(doc);
    r.setEnd(node, off);
    return r.toString().length;
  }
  doc.addEventListener("mouseup", () => {
    const sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return;
    const r = sel.getRangeAt(0);
    if (!doc.contains(r.startContainer) || !doc.contains(r.endContainer)) return;
    const [a, b] = toCodePoints(model.get("doc_text"), offsetIn(r.startContainer, r.startOffset),
      offsetIn(r.endContainer, r.endOffset));
    if (b > a) { cmd("mark", { start: a, end: b }); sel.removeAllRanges(); refocus(); }
  });
  const chipTexts = () => [...new Set([...model.get("must_mention"), ...model.get("suggestions")])];
  function paintSuggestions() {
    const on = new Set(model.get("must_mention"));
    sugg.replaceChildren(el("span", "", "must mention: "));
    chipTexts().forEach((s, i) => {
      const chip = el("span", "wb-chip" + (on.has(s) ? " on" : ""), `${i + 1}: ${s}`);
      chip.dataset.text = s;
      chip.onclick = () => { cmd("toggle", { text: s }); refocus(); };
      sugg.append(chip);
    });
  }
  function paintRest() {
    progress.textContent = model.get("progress");
    skipped.textContent = `skipped (${model.get("skipped").length}) (r)`;
    q.textContent = model.get("current_qid") ? `${model.get("current_qid")}: ${model.get("question")}` : "";
    list.replaceChildren(...model.get("categories").map((c) => { const o = el("option"); o.value = c; return o; }));
    cat.placeholder = "category (c)" + (model.get("last_category") ? `; = same as last: ${model.get("last_category")}` : "");
    if (document.activeElement !== cat) cat.value = model.get("category");
    warn.replaceChildren(...model.get("warnings").map((w) => el("div", "", "⚠ " + w)));
    const origin = model.get("origin") ? ` · answer ${model.get("origin")}` : "";
    status.textContent = `${model.get("status")}${origin} · actions ${model.get("actions")}`;
  }
  box.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "/") { ev.preventDefault(); search.focus(); search.select(); }
    else if (k === "c") { ev.preventDefault(); cat.focus(); }
    else if (k === "g") { ev.preventDefault(); goto.focus(); }
    else if (KEYS[k]) { ev.preventDefault(); cmd(KEYS[k][0], KEYS[k][1]); }
    else if (/^[1-9]$/.test(k)) { const s = chipTexts()[Number(k) - 1]; if (s) cmd("toggle", { text: s }); }
    else if (k === "n" || k === "p") {
      const hits = allHits();
      if (!hits.length) return;
      hitIndex = (hitIndex + (k === "n" ? 1 : hits.length - 1)) % hits.length;
      const h = hits[hitIndex];
      cmd("open", { doc_id: h.doc_id, start: h.start, end: h.end });
    }
  });
  const on = (names, f) => names.forEach((n) => model.on("change:" + n, f));
  on(["bm25_hits", "dense_hits"], paintHits);
  on(["doc_text", "doc_id", "highlight", "spans", "selection", "marked"], paintDoc);
  on(["suggestions", "must_mention"], paintSuggestions);
  on(["progress", "question", "current_qid", "categories", "category", "last_category",
    "warnings", "status", "skipped", "origin", "actions"], paintRest);
  on(["query"], () => { search.value = model.get("query"); });
  search.value = model.get("query");
  paintHits(); paintDoc(); paintSuggestions(); paintRest();
}

export default { render };
