// Labeller view: paints Python's state; document text only ever goes in as text nodes.
const cp2u = (text, cp) => Array.from(text).slice(0, cp).join("").length;  // code points -> UTF-16
const u2cp = (text, u) => Array.from(text.slice(0, u)).length;             // UTF-16 -> code points

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render({ model, el: root }) {
  const box = el("div", "wb-lab");
  box.tabIndex = 0;
  const progress = el("div", "wb-progress");
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
  cat.placeholder = "category (c)";
  const list = el("datalist");
  list.id = "wb-cats-" + Math.random().toString(36).slice(2);
  cat.setAttribute("list", list.id);
  const buttons = el("div", "wb-buttons");
  const warn = el("div", "wb-warn"), status = el("div", "wb-status");
  const cmd = (c, extra) => model.send({ cmd: c, ...(extra || {}) });
  for (const [name, key, c] of [["add span", "a", "add_span"], ["save", "s", "save"],
      ["unanswerable", "u", "unanswerable"], ["skip", "k", "skip"], ["undo", "z", "undo"]]) {
    const b = el("button", "wb-btn-" + c, `${name} (${key})`);
    b.onclick = () => { pushCategory(); cmd(c); };
    buttons.append(b);
  }
  box.append(progress, q, search, cols, title, doc, sugg, cat, list, buttons, warn, status);
  root.append(box);

  const pushCategory = () => { model.set("category", cat.value); model.save_changes(); };
  search.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); cmd("search", { query: search.value }); box.focus(); }
    ev.stopPropagation();
  });
  cat.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { pushCategory(); box.focus(); }
    ev.stopPropagation();
  });
  cat.addEventListener("change", pushCategory);

  let hitIndex = -1;
  const allHits = () => [...model.get("bm25_hits"), ...model.get("dense_hits")];
  function paintHits() {
    for (const [pane, name, hits] of [[bm, "BM25", model.get("bm25_hits")],
        [de, "dense", model.get("dense_hits")]]) {
      pane.replaceChildren(el("b", "", name));
      hits.forEach((h) => {
        const row = el("div", "wb-hit", `${h.rank}. ${h.title} (${h.score}) ${h.snippet}`);
        row.dataset.chunk = h.chunk_id;
        row.onclick = () => cmd("open", { doc_id: h.doc_id, start: h.start, end: h.end });
        pane.append(row);
      });
    }
  }
  function paintDoc() {
    const text = model.get("doc_text");
    title.textContent = model.get("doc_title") ? `${model.get("doc_title")} (${model.get("doc_id")})` : "";
    // boundaries in code points: the hit's chunk and the kept spans of this document
    const marks = [];
    const hl = model.get("highlight");
    if (hl.length === 2) marks.push([hl[0], hl[1], "wb-hl"]);
    for (const s of model.get("spans")) if (s[0] === model.get("doc_id")) marks.push([s[1], s[2], "wb-span"]);
    const cuts = [...new Set([0, Array.from(text).length, ...marks.flatMap((m) => [m[0], m[1]])])].sort((a, b) => a - b);
    const nodes = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [a, b] = [cuts[i], cuts[i + 1]];
      const piece = text.slice(cp2u(text, a), cp2u(text, b));
      const cls = marks.filter((m) => m[0] <= a && b <= m[1]).map((m) => m[2]).join(" ");
      nodes.push(cls ? el("span", cls, piece) : document.createTextNode(piece));
    }
    doc.replaceChildren(...nodes);
    if (hl.length === 2) { const first = doc.querySelector(".wb-hl"); if (first && first.scrollIntoView) first.scrollIntoView({ block: "nearest" }); }
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
    const text = model.get("doc_text");
    const a = u2cp(text, offsetIn(r.startContainer, r.startOffset));
    const b = u2cp(text, offsetIn(r.endContainer, r.endOffset));
    if (b > a) { model.set("selection", [model.get("doc_id"), a, b]); model.save_changes(); }
  });
  function paintSuggestions() {
    const on = new Set(model.get("must_mention"));
    sugg.replaceChildren(el("span", "", "must mention: "));
    model.get("suggestions").forEach((s, i) => {
      const chip = el("span", "wb-chip" + (on.has(s) ? " on" : ""), `${i + 1}: ${s}`);
      chip.dataset.text = s;
      chip.onclick = () => cmd("mention", { text: s });
      sugg.append(chip);
    });
  }
  function paintRest() {
    progress.textContent = model.get("progress");
    q.textContent = model.get("current_qid") ? `${model.get("current_qid")}: ${model.get("question")}` : "";
    list.replaceChildren(...model.get("categories").map((c) => { const o = el("option"); o.value = c; return o; }));
    if (document.activeElement !== cat) cat.value = model.get("category");
    warn.replaceChildren(...model.get("warnings").map((w) => el("div", "", "⚠ " + w)));
    status.textContent = model.get("status");
  }
  box.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    const map = { a: "add_span", s: "save", u: "unanswerable", k: "skip", z: "undo" };
    if (k === "/") { ev.preventDefault(); search.focus(); }
    else if (k === "c") { ev.preventDefault(); cat.focus(); }
    else if (map[k]) { ev.preventDefault(); pushCategory(); cmd(map[k]); }
    else if (/^[1-9]$/.test(k)) { const s = model.get("suggestions")[Number(k) - 1]; if (s) cmd("mention", { text: s }); }
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
  on(["doc_text", "doc_id", "highlight", "spans"], paintDoc);
  on(["suggestions", "must_mention"], paintSuggestions);
  on(["progress", "question", "current_qid", "categories", "category", "warnings", "status"], paintRest);
  on(["query"], () => { if (document.activeElement !== search) search.value = model.get("query"); });
  paintHits(); paintDoc(); paintSuggestions(); paintRest();
}

export default { render };
