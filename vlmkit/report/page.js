"use strict";
// vlmkit report page: everything is drawn from the JSON block #vlmkit-data (see vlmkit/report/page.py for its keys).
// State lives in the URL fragment (#run=r3&filter=wrong&cat=OCR&q=dog), so a view can be bookmarked or shared.
// Text from results is only ever set as textContent: a model's reply cannot inject markup.
(function () {
  const DATA = JSON.parse(document.getElementById("vlmkit-data").textContent);
  const PAGE = 60;
  const WRONG = new Set(DATA.verdicts.wrong);
  const FILTERS = [["all", "All", "every sample"], ["hit", "Right", "scored right"],
    ["wrong", "Wrong", "answered but not right: a miss, a partial score, or an answer that could not be read"],
    ["unread", "Unread", "the scorer could not read an answer from the reply (a miss)"],
    ["error", "Errors", "the call failed or was not run"]];
  const RUNS = DATA.runs;
  const BY_ID = new Map(RUNS.map((r) => [r.id, r]));
  const state = { run: null, filter: "all", cat: "", q: "", shown: PAGE, diffFilter: "", diffShown: PAGE };

  // -- helpers ---------------------------------------------------------------------------------------------------
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "data") for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = dv;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  // replaceChildren without the nulls that optional parts leave (replaceChildren would print them as "null")
  function put(el, ...kids) { el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false)); }
  const fmtInt = (v) => (v === null || v === undefined ? "" : Number(v).toLocaleString("en-US"));
  const statusClass = (s) => (s === "success" || s === "partial" || s === "failed" ? s : "other");
  const statusBadge = (s) => h("span", { class: "status " + statusClass(s), text: s });
  function fileHref(path) {
    if (/^https?:\/\//.test(path)) return path;
    if (/^[A-Za-z]:[\\/]/.test(path)) return "file:///" + encodeURI(path.replace(/\\/g, "/"));
    return path.startsWith("/") ? "file://" + encodeURI(path) : encodeURI(path);
  }
  // SVG elements need their namespace (h() makes HTML elements)
  function svg(tag, attrs, ...kids) {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    for (const kid of kids) el.append(kid);
    return el;
  }
  // a run's 95% interval (results.json scoring.interval, as `\u00b1half`) and, where the paired test against its
  // dataset's best finished run gives p >= 0.05, a mark saying the gap to the best is inside the noise
  const NOISE = 0.05;
  const inNoise = (r) => r.vs_best_p !== null && r.vs_best_p !== undefined && r.vs_best_p >= NOISE;
  const ciSpan = (r) => (r.ci95 ? h("span", { class: "ci", title: "95% interval (half-width; docs/error_bars.md)", text: " " + r.ci95 }) : null);
  function noiseMark(r) {
    if (!inNoise(r)) return null;
    return h("span", { class: "noise", title: "inside the noise: a paired test against the best run of " + r.dataset + " on the samples both scored gives p = " + Number(r.vs_best_p).toPrecision(4) + " (>= 0.05), so this run is not shown to differ from the best", text: "\u2248 inside the noise" });
  }
  const valueCell = (r) => [r.display || "", ciSpan(r), noiseMark(r)];
  function section(id, title, sub) {
    return h("section", { class: "panel", id: id }, h("h2", {}, title, sub ? h("small", { text: sub }) : null));
  }
  function textBlock(label, text, cls) {
    if (text === undefined || text === null || text === "") return null;
    return h("div", { class: "field" }, h("label", { text: label }), h("div", { class: "text " + (cls || ""), text: text }));
  }

  // A table whose headers sort it. columns: {key, label, sub, num, value(row) for sorting, cell(row) -> td content,
  // cls(row) -> td class, first: "desc"|"asc"}.
  function sortableTable(columns, rows, opts) {
    opts = opts || {};
    let sortKey = opts.sortKey || null, dir = opts.dir || 1;
    const tbody = h("tbody");
    const heads = columns.map((c) => {
      const th = h("th", { class: "sortable" + (c.num ? " num" : ""), title: "sort" }, c.label, c.sub ? h("span", { class: "sub", text: c.sub }) : null);
      th.addEventListener("click", () => {
        if (sortKey === c.key) dir = -dir;
        else { sortKey = c.key; dir = c.first === "desc" ? -1 : 1; }
        draw();
      });
      return th;
    });
    function draw() {
      const col = columns.find((c) => c.key === sortKey);
      const sorted = rows.slice();
      if (col) {
        const val = col.value || ((r) => r[col.key]);
        sorted.sort((a, b) => {
          const x = val(a), y = val(b);
          const xn = x === null || x === undefined || x === "", yn = y === null || y === undefined || y === "";
          if (xn || yn) return xn === yn ? 0 : xn ? 1 : -1; // no value: always last
          return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "en", { numeric: true })) * dir;
        });
      }
      heads.forEach((th, i) => {
        const old = th.querySelector(".dir");
        if (old) old.remove();
        if (columns[i].key === sortKey) th.insertBefore(h("span", { class: "dir", text: dir > 0 ? "\u25b2" : "\u25bc" }), th.querySelector(".sub"));
      });
      put(tbody, ...sorted.map((r) => {
        const tr = h("tr", { class: (opts.rowClass ? opts.rowClass(r) : "") + (opts.onRow ? " clickable" : ""), data: opts.rowData ? opts.rowData(r) : null });
        if (opts.onRow) tr.addEventListener("click", () => opts.onRow(r));
        for (const c of columns) {
          const content = c.cell ? c.cell(r) : r[c.key];
          tr.append(h("td", { class: [c.num ? "num" : "", c.cls ? c.cls(r) : ""].join(" ").trim() || null }, content));
        }
        return tr;
      }));
    }
    draw();
    return h("div", { class: "scroll" }, h("table", { class: "data" }, h("thead", {}, h("tr", {}, heads)), tbody));
  }

  // -- fragment state ----------------------------------------------------------------------------------------------
  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const run = p.get("run");
    state.run = run && BY_ID.has(run) ? run : defaultRun();
    state.filter = p.get("filter") || "all";
    state.cat = p.get("cat") || "";
    state.q = p.get("q") || "";
    state.shown = PAGE;
  }
  function writeHash() {
    const p = new URLSearchParams();
    p.set("run", state.run);
    if (state.filter !== "all") p.set("filter", state.filter);
    if (state.cat) p.set("cat", state.cat);
    if (state.q) p.set("q", state.q);
    history.replaceState(null, "", "#" + p.toString());
  }
  function defaultRun() {
    if (DATA.diff) return DATA.diff.b;
    const withSamples = RUNS.find((r) => r.samples && r.samples.length);
    return (withSamples || RUNS[0] || { id: null }).id;
  }
  function selectRun(id) {
    state.run = id; state.filter = "all"; state.cat = ""; state.q = ""; state.shown = PAGE;
    writeHash();
    drawRun();
    document.getElementById("run").scrollIntoView({ behavior: "smooth", block: "start" });
  }

  // -- leaderboard: models x datasets (latest run of each pair) ---------------------------------------------------
  function drawLeaderboard(app) {
    const sec = section("leaderboard", "Leaderboard", "latest run of each model \u00d7 dataset; \u2605 best finished run per dataset; click a header to sort, a cell to open the run");
    const latest = RUNS.filter((r) => r.latest);
    if (!latest.length) { sec.append(h("p", { class: "empty", text: "No results.json found." })); app.append(sec); return; }
    const datasets = [...new Set(latest.map((r) => r.dataset))].sort();
    const models = [...new Set(latest.map((r) => r.model))].sort();
    const cell = new Map(latest.map((r) => [r.model + "\u0000" + r.dataset, r]));
    const rows = models.map((m) => ({ model: m, runs: Object.fromEntries(datasets.map((d) => [d, cell.get(m + "\u0000" + d)])) }));
    const columns = [{ key: "model", label: "model", cell: (r) => h("b", { text: r.model }) }];
    for (const d of datasets) {
      const named = latest.find((r) => r.dataset === d && r.value !== null) || latest.find((r) => r.dataset === d);
      columns.push({
        key: "d:" + d, label: d, sub: (named.metric || "-") + " \u00b7 " + (named.scale || "no scale"), num: true,
        first: named.hib === false ? "asc" : "desc",
        value: (r) => (r.runs[d] && r.runs[d].value !== null ? r.runs[d].value : null),
        cls: (r) => { const x = r.runs[d]; return !x ? "nodata" : x.value === null ? "nodata" : x.best ? "best" : x.status === "partial" ? "partial" : ""; },
        cell: (r) => {
          const x = r.runs[d];
          if (!x) return "\u2014";
          const a = h("span", { title: x.status + " \u00b7 n " + fmtInt(x.n) + " \u00b7 done " + fmtInt(x.done) + " \u00b7 " + x.completed }, x.display ? valueCell(x) : x.status);
          a.addEventListener("click", (ev) => { ev.stopPropagation(); selectRun(x.id); });
          a.style.cursor = "pointer";
          return a;
        },
      });
    }
    sec.append(sortableTable(columns, rows, { sortKey: "model", dir: 1 }));
    if (DATA.legend.length) sec.append(h("ul", { class: "legend" }, DATA.legend.map((l) => h("li", { text: l }))));
    sec.querySelector("table").id = "board";
    app.append(sec);
  }

  // -- every run, one row each -------------------------------------------------------------------------------------
  function drawRuns(app) {
    const sec = section("runs", "Runs", RUNS.length + " run" + (RUNS.length === 1 ? "" : "s") + "; click one to browse its samples");
    const columns = [
      { key: "model", label: "model" }, { key: "dataset", label: "dataset" }, { key: "metric", label: "metric" },
      { key: "value", label: "value", num: true, first: "desc", cell: valueCell, cls: (r) => (r.value === null ? "nodata" : r.status === "partial" ? "partial" : "") },
      ...(RUNS.some((r) => r.vlmevalkit && r.vlmevalkit.display) ? [{ key: "vlmevalkit", label: "vlmevalkit", num: true, first: "desc",
        value: (r) => (r.vlmevalkit ? r.vlmevalkit.value : null), cell: (r) => (r.vlmevalkit ? r.vlmevalkit.display : ""), cls: (r) => (r.vlmevalkit && r.vlmevalkit.value !== null ? "" : "nodata") }] : []),
      { key: "scale", label: "scale" }, { key: "n", label: "n", num: true, cell: (r) => fmtInt(r.n) },
      { key: "done", label: "done", num: true, cell: (r) => fmtInt(r.done) }, { key: "errors", label: "errors", num: true, cell: (r) => fmtInt(r.errors) },
      { key: "unparsed", label: "unparsed", num: true, cell: (r) => fmtInt(r.unparsed) },
      { key: "status", label: "status", cell: (r) => statusBadge(r.status) }, { key: "completed", label: "completed" },
    ];
    const table = sortableTable(columns, RUNS, { onRow: (r) => selectRun(r.id), rowClass: (r) => (r.latest ? "" : "stale"), rowData: (r) => ({ run: r.id }) });
    table.querySelector("table").id = "runs-table";
    sec.append(table);
    app.append(sec);
  }

  // -- one run: figures, notes, breakdown, samples -----------------------------------------------------------------
  function drawRunShell(app) {
    const sec = section("run", "Run");
    const select = h("select", { id: "run-select", onchange: (ev) => selectRun(ev.target.value) },
      RUNS.map((r) => h("option", { value: r.id, text: r.model + " \u00d7 " + r.dataset + (r.latest ? "" : " (" + r.completed + ")") + " \u2014 " + r.status })));
    sec.append(h("div", { class: "runbar" }, select), h("div", { id: "run-body" }));
    app.append(sec);
  }

  function drawRun() {
    const run = BY_ID.get(state.run);
    const body = document.getElementById("run-body");
    if (!run) { put(body, h("p", { class: "empty", text: "No run." })); return; }
    document.getElementById("run-select").value = run.id;
    document.querySelectorAll("#runs-table tr[data-run]").forEach((tr) => tr.classList.toggle("selected", tr.dataset.run === run.id));
    const stat = (v, label) => h("div", { class: "stat" }, h("b", { text: v === null || v === undefined || v === "" ? "\u2014" : v }), h("span", { text: label }));
    const parts = [
      h("div", { class: "stats" },
        stat(run.display ? run.display + (run.ci95 ? " " + run.ci95 : "") : run.display, (run.metric || "value") + (run.scale ? " \u00b7 " + run.scale : "") + (run.ci95 ? " \u00b7 95% interval" : "")),
        run.vs_best_p === null || run.vs_best_p === undefined ? null : h("div", { class: "stat" + (inNoise(run) ? " noise-stat" : ""), id: "vs-best" },
          h("b", { text: "p = " + Number(run.vs_best_p).toPrecision(4) }),
          h("span", { text: inNoise(run) ? "vs best run: inside the noise (p \u2265 0.05)" : "vs best run: differs (p < 0.05)" })),
        run.vlmevalkit ? stat(run.vlmevalkit.display, "VLMEvalKit " + (run.vlmevalkit.metric || "") + (run.vlmevalkit.differing === null ? "" : " \u00b7 " + fmtInt(run.vlmevalkit.differing) + " rows read differently")) : null,
        stat(fmtInt(run.n), "samples"),
        stat(fmtInt(run.done), "answered"), stat(fmtInt(run.errors), "errors"), stat(fmtInt(run.unparsed), "unparsed"),
        h("div", { class: "stat" }, h("b", {}, statusBadge(run.status)), h("span", { text: "completed " + run.completed })),
      ),
      h("div", { class: "tag", text: run.file, style: "display:inline-block;margin-bottom:6px" }),
    ];
    const errs = Object.entries(run.errors_by_kind || {});
    const vnotes = run.vlmevalkit ? run.vlmevalkit.notes.map((n) => "VLMEvalKit (" + run.vlmevalkit.source + "): " + n) : [];
    const notes = run.notes.concat(vnotes, errs.map(([k, e]) => k + ": " + e.count + " (first at index " + e.first_index + ": " + (e.first_message || "") + ")"));
    if (notes.length) parts.push(h("ul", { class: "notes" }, notes.map((n) => h("li", { text: n }))));
    if (run.breakdown) parts.push(h("h3", { text: "Breakdown" }), breakdownTable(run.breakdown));
    parts.push(h("h3", {}, "Samples ", h("small", { text: "filters are kept in the address (#filter=wrong&cat=...)" })));
    parts.push(h("div", { id: "samples" }));
    put(body, ...parts);
    drawSamples();
  }

  function breakdownTable(b) {
    const bar = (c) => (c[2] === null ? null : h("span", { class: "bar" }, h("i", { style: "width:" + (c[2] * 100).toFixed(1) + "%" })));
    if (b.columns.length === 1) { // one split: a compact list in columns, so that 30 categories fit on a screen
      return h("div", { class: "bd-grid", id: "breakdown", title: "split: " + b.columns[0] }, b.rows.map(([name, cells]) => h("div", { class: "bd-row" + (name === "Overall" ? " overall" : "") },
        h("span", { class: "name", text: name, title: name }), h("span", { class: "num", text: cells[0] ? cells[0][1] : "\u2014" }), cells[0] ? bar(cells[0]) : null)));
    }
    const head = h("tr", {}, h("th", { text: "figure" }), b.columns.map((c) => h("th", { class: "num", text: c })));
    const rows = b.rows.map(([name, cells]) => h("tr", {}, h("td", { text: name }),
      cells.map((c) => h("td", { class: "num" }, c ? [c[1], bar(c)] : "\u2014"))));
    return h("div", { class: "scroll" }, h("table", { class: "data", id: "breakdown" }, h("thead", {}, head), h("tbody", {}, rows)));
  }

  function matches(s, filter) {
    if (filter === "all") return true;
    if (filter === "wrong") return WRONG.has(s.v);
    return s.v === filter;
  }

  function drawSamples() {
    const run = BY_ID.get(state.run);
    const box = document.getElementById("samples");
    if (!run.samples) { put(box, h("p", { class: "empty", text: run.sample_note || "No samples." })); return; }
    const samples = run.samples;
    const inCat = samples.filter((s) => !state.cat || s.c === state.cat);
    const q = state.q.toLowerCase();
    const found = inCat.filter((s) => matches(s, state.filter) && (!q || [s.i, s.q, s.p, s.t, s.x].some((v) => v && String(v).toLowerCase().includes(q))));
    const chips = FILTERS.map(([key, label, tip]) => h("button", {
      class: "chip" + (state.filter === key ? " on" : ""), data: { filter: key }, title: tip,
      onclick: () => { state.filter = key; state.shown = PAGE; writeHash(); drawSamples(); },
    }, label, h("b", { text: fmtInt(inCat.filter((s) => matches(s, key)).length) })));
    const cats = [...new Set(samples.map((s) => s.c).filter(Boolean))].sort();
    const catSelect = cats.length ? h("select", { id: "cat-select", onchange: (ev) => { state.cat = ev.target.value; state.shown = PAGE; writeHash(); drawSamples(); } },
      h("option", { value: "", text: "every category (" + cats.length + ")" }), cats.map((c) => h("option", { value: c, text: c }))) : null;
    if (catSelect) catSelect.value = state.cat;
    const search = h("input", { type: "search", id: "search", placeholder: "search prompt, reply, target\u2026", value: state.q });
    search.addEventListener("change", () => { state.q = search.value; state.shown = PAGE; writeHash(); drawSamples(); });
    const cards = h("div", { class: "cards", id: "cards", data: { count: String(found.length), filter: state.filter } },
      found.slice(0, state.shown).map((s) => card(s)));
    const more = found.length > state.shown ? h("button", { class: "more", onclick: () => { state.shown += PAGE; drawSamples(); } }, "Show " + Math.min(PAGE, found.length - state.shown) + " more") : null;
    put(box,
      h("div", { class: "filters" }, chips, h("span", { class: "grow" }), catSelect, search),
      h("div", { class: "count", id: "sample-count", text: "showing " + fmtInt(Math.min(state.shown, found.length)) + " of " + fmtInt(found.length) + " matching sample" + (found.length === 1 ? "" : "s") + (run.sample_note ? " \u00b7 " + run.sample_note : "") },
        run.all_samples ? [" \u00b7 ", h("a", { href: run.all_samples, id: "all-samples", text: "open every sample (" + run.all_samples.split("/").pop() + ")" })] : null),
      cards, more);
  }

  function thumbs(s) {
    if (!s.m || !s.m.length) return null;
    return h("div", { class: "thumbs" }, s.m.map(([kind, id, path]) => {
      const name = path.split(/[\\/]/).pop();
      if (kind === "image" && id && DATA.images[id]) {
        const img = h("img", { src: DATA.images[id], alt: name, loading: "lazy" });
        const drawn = s.o && kind === "image" && path === firstImage(s) ? clickOverlay(s) : null;
        return h("a", { href: fileHref(path), target: "_blank", title: path }, drawn ? h("span", { class: "shot" }, img, drawn) : img);
      }
      const what = kind !== "image" ? kind : path.startsWith("sha256:") ? "inline image (not kept)" : /^https?:/.test(path) ? "image URL" : "image not found";
      return h("a", { class: "media-missing", href: path.startsWith("sha256:") ? null : fileHref(path), target: "_blank", title: path }, what + ": " + name);
    }));
  }

  const firstImage = (s) => { const m = s.m.find(([kind]) => kind === "image"); return m ? m[2] : null; };
  // GUI grounding: the target box and the click read from the reply, over the screenshot (coordinates are fractions
  // of its width and height, so they hold at any thumbnail size); green where the click hit the box, red otherwise
  function clickOverlay(s) {
    const how = s.v === "hit" ? "hit" : "miss";
    const parts = [svg("title", {}, (s.o.pt ? "click (" + s.o.pt.map((v) => v.toFixed(3)).join(", ") + ")" : "no click read") + (s.o.box ? " \u00b7 target box" : "") + " \u00b7 " + how)];
    if (s.o.box) {
      const [x0, y0, x1, y1] = s.o.box;
      parts.push(svg("rect", { class: "target", x: x0 * 1000, y: y0 * 1000, width: (x1 - x0) * 1000, height: (y1 - y0) * 1000 }));
    }
    if (s.o.pt) {
      const [x, y] = s.o.pt;
      parts.push(svg("line", { class: "cross", x1: x * 1000 - 40, y1: y * 1000, x2: x * 1000 + 40, y2: y * 1000 }),
        svg("line", { class: "cross", x1: x * 1000, y1: y * 1000 - 40, x2: x * 1000, y2: y * 1000 + 40 }),
        svg("circle", { class: "point", cx: x * 1000, cy: y * 1000, r: 12 }));
    }
    return svg("svg", { class: "click " + how, viewBox: "0 0 1000 1000", preserveAspectRatio: "none" }, ...parts);
  }

  // the pictures beside the prompt's text: one glance shows what the model was asked
  function mediaAndPrompt(s) {
    const media = thumbs(s), prompt = textBlock("prompt", s.q, "prompt");
    if (!media) return prompt;
    return h("div", { class: "ask" }, media, h("div", { class: "grow" }, prompt));
  }

  function readAs(s) {
    const items = [];
    const add = (k, v, cls) => { if (v !== undefined && v !== null && v !== "") items.push(h("dt", { text: k }), h("dd", { class: cls || null, text: String(v) })); };
    // a scorer that reads an answer (MCQ, Y/N) sets x; VQA-like scorers compare the whole reply and set none
    add("read as", s.x !== undefined ? s.x : s.v === "unread" ? "\u2014 (nothing read)" : null, "read " + s.v);
    // how the answer was read: by a rule of the scorer (exact, marker, cue, option_text, fuzzy, parsed ...) or a judge
    if (s.h && s.h !== "inference_error") add("how", s.h.startsWith("judge") ? s.h : "rule: " + s.h);
    add("target", s.t);
    if (s.s !== undefined) add("score", Number(s.s).toFixed(2));
    if (s.g !== undefined) add("circular group", s.g ? "all rotations right" : "missed in a rotation");
    return items.length ? h("dl", { class: "kv" }, items) : null;
  }

  // --mcq-mode logits|continuation: each option's share among the options (exp(logprob) renormalised over those with
  // a figure), the chosen option and the target marked (s.l: vlmkit/report/option_bars.py)
  function optionBars(s) {
    if (!s.l || !s.l.b || !s.l.b.length) return null;
    const fig = (v) => (v === null || v === undefined ? null : Number(v).toFixed(3));
    const rows = s.l.b.map(([opt, lp, share, chosen, target, norm]) => h("div", { class: "obar" + (chosen ? " chosen" : "") + (target ? " target" : ""), data: { option: opt } },
      h("span", { class: "olabel", text: opt, title: (chosen ? "chosen" : "") + (chosen && target ? ", " : "") + (target ? "target" : "") }),
      h("span", { class: "otrack" }, share === null ? null : h("i", { style: "width:" + (share * 100).toFixed(1) + "%" })),
      h("span", { class: "ofig", text: lp === null ? "not in the top list" : "log p " + fig(lp) + (share === null ? "" : " \u00b7 " + (share * 100).toFixed(1) + "%") + (norm === null ? "" : " \u00b7 /char " + fig(norm)) })));
    return h("div", { class: "option-bars" }, h("div", { class: "otitle", text: "likelihood: " + s.l.m + (s.l.src ? " (" + s.l.src + ")" : "") + "; bar = share among the options" }), rows);
  }

  function card(s) {
    return h("div", { class: "card " + s.v, data: { verdict: s.v, index: s.i } },
      h("div", { class: "head" }, h("span", { class: "idx", text: "#" + s.i }), h("span", { class: "badge " + s.v, text: s.v }), s.c ? h("span", { class: "tag", text: s.c }) : null),
      mediaAndPrompt(s),
      s.e ? textBlock("error", s.e, "error-text") : textBlock("reply", s.p, "reply"),
      s.r ? h("details", {}, h("summary", { text: "reasoning (" + ((s.k && s.k.r) || s.r.length).toLocaleString("en-US") + " chars" + (s.k && s.k.r ? ", cut" : "") + ")" }), h("div", { class: "text", text: s.r })) : null,
      readAs(s),
      optionBars(s),
      s.j ? h("details", { open: true }, h("summary", { text: "judge's analysis" }), h("div", { class: "text", text: s.j })) : null);
  }

  // -- diff --------------------------------------------------------------------------------------------------------
  function drawDiff(app) {
    const d = DATA.diff;
    if (!d) return;
    const a = BY_ID.get(d.a), b = BY_ID.get(d.b);
    const sec = section("diff", "Changed verdicts", d.changes.length + " of " + fmtInt(d.compared) + " samples changed \u00b7 A: " + a.model + " (" + a.completed + ") \u2192 B: " + b.model + " (" + b.completed + ")");
    sec.append(d.test
      ? h("p", { class: "paired " + (d.test.differs ? "differs" : "noise"), id: "diff-test", data: { p: String(d.test.p_value), differs: String(d.test.differs) } },
        h("b", { text: d.test.differs ? "A and B differ" : "A and B: inside the noise" }), " \u00b7 " + d.test.summary)
      : h("p", { class: "paired", id: "diff-test", text: "no paired test: no sample was scored in both runs" }));
    if (d.notes.length) sec.append(h("ul", { class: "notes" }, d.notes.map((n) => h("li", { text: n }))));
    sec.append(h("div", { id: "diff-body" }));
    app.append(sec);
    drawDiffBody();
  }
  function drawDiffBody() {
    const d = DATA.diff, a = BY_ID.get(d.a), b = BY_ID.get(d.b);
    const ka = new Map((a.samples || []).map((s) => [s.i, s])), kb = new Map((b.samples || []).map((s) => [s.i, s]));
    const list = d.changes.filter((c) => !state.diffFilter || c.from + " \u2192 " + c.to === state.diffFilter);
    const chips = [h("button", { class: "chip" + (!state.diffFilter ? " on" : ""), onclick: () => { state.diffFilter = ""; state.diffShown = PAGE; drawDiffBody(); } }, "all", h("b", { text: fmtInt(d.changes.length) }))]
      .concat(Object.entries(d.counts).sort((x, y) => y[1] - x[1]).map(([t, n]) => {
        const label = t.replace(" -> ", " \u2192 ");
        return h("button", { class: "chip" + (state.diffFilter === label ? " on" : ""), onclick: () => { state.diffFilter = label; state.diffShown = PAGE; drawDiffBody(); } }, label, h("b", { text: fmtInt(n) }));
      }));
    const side = (s, tag) => h("div", {}, h("h4", {}, tag + " ", s ? h("span", { class: "badge " + s.v, text: s.v }) : h("span", { class: "badge absent", text: "absent" })),
      s ? (s.e ? textBlock("error", s.e, "error-text") : textBlock("reply", s.p, "reply")) : null, s ? readAs(s) : null,
      s && s.j ? h("details", {}, h("summary", { text: "judge's analysis" }), h("div", { class: "text", text: s.j })) : null);
    const cards = list.slice(0, state.diffShown).map((c) => {
      const sa = c.ia === undefined ? null : ka.get(c.ia), sb = c.ib === undefined ? null : kb.get(c.ib);
      const ref = sa || sb || { i: c.ia || c.ib, v: c.to };
      return h("div", { class: "card " + c.to, data: { index: ref.i, from: c.from, to: c.to } },
        h("div", { class: "head" }, h("span", { class: "idx", text: "#" + ref.i }), h("span", { class: "badge " + c.from, text: c.from }), "\u2192", h("span", { class: "badge " + c.to, text: c.to }), ref.c ? h("span", { class: "tag", text: ref.c }) : null),
        mediaAndPrompt(ref), h("div", { class: "pair" }, side(sa, "A"), side(sb, "B")));
    });
    const more = list.length > state.diffShown ? h("button", { class: "more", onclick: () => { state.diffShown += PAGE; drawDiffBody(); } }, "Show more") : null;
    put(document.getElementById("diff-body"), h("div", { class: "filters" }, chips), h("div", { class: "cards", id: "diff-cards", data: { count: String(list.length) } }, cards), more);
  }

  // -- score by frame budget: one line chart per video benchmark swept (DATA.frame_curves; vlmkit/report/frame_curve.py)
  const CHART = { w: 640, h: 300, left: 60, right: 44, top: 16, bottom: 44 };
  function niceTicks(lo, hi, count) {
    const step0 = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function curveChart(c) {
    const values = c.series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => typeof v === "number");
    let lo = Math.min(...values), hi = Math.max(...values);
    if (!values.length) { lo = 0; hi = 1; }
    const pad = hi > lo ? (hi - lo) * 0.12 : Math.max(Math.abs(hi) * 0.05, 0.01);
    lo -= pad; hi += pad;
    // budgets on a log scale (8, 16, 32 evenly apart), as frame budgets are usually doubled
    const lx = c.budgets.map((b) => Math.log(b)), x0 = Math.min(...lx), x1 = Math.max(...lx);
    const X = (b) => CHART.left + (x1 > x0 ? (Math.log(b) - x0) / (x1 - x0) : 0.5) * (CHART.w - CHART.left - CHART.right);
    const Y = (v) => CHART.top + (1 - (v - lo) / (hi - lo)) * (CHART.h - CHART.top - CHART.bottom);
    const kids = [];
    for (const t of niceTicks(lo, hi, 5)) {
      kids.push(svg("line", { class: "grid", x1: CHART.left, x2: CHART.w - CHART.right, y1: Y(t), y2: Y(t) }));
      kids.push(svg("text", { class: "tick", x: CHART.left - 6, y: Y(t) + 4, "text-anchor": "end" }, String(+t.toPrecision(6))));
    }
    c.budgets.forEach((b, i) => {
      kids.push(svg("line", { class: "axis", x1: X(b), x2: X(b), y1: CHART.h - CHART.bottom, y2: CHART.h - CHART.bottom + 5 }));
      kids.push(svg("text", { class: "tick", x: X(b), y: CHART.h - CHART.bottom + 18, "text-anchor": "middle" }, c.columns[i]));
    });
    kids.push(svg("line", { class: "axis", x1: CHART.left, x2: CHART.w - CHART.right, y1: CHART.h - CHART.bottom, y2: CHART.h - CHART.bottom }));
    kids.push(svg("text", { class: "label", x: (CHART.left + CHART.w - CHART.right) / 2, y: CHART.h - 6, "text-anchor": "middle" }, c.unit === "fps" ? "frames per second" : "frames per clip"));
    c.series.forEach((s, i) => {
      const pts = s.points.filter((p) => typeof p[1] === "number");
      const cls = "series s" + (i % 8);
      if (pts.length > 1) kids.push(svg("polyline", { class: cls, points: pts.map((p) => X(p[0]) + "," + Y(p[1])).join(" ") }));
      for (const p of pts) {
        const dot = svg("circle", { class: cls + " dot", cx: X(p[0]), cy: Y(p[1]), r: 4, "data-model": s.model, "data-budget": p[0] },
          svg("title", {}, s.model + " \u00b7 " + c.columns[c.budgets.indexOf(p[0])] + ": " + p[2]));
        if (p[3] && BY_ID.has(p[3])) dot.addEventListener("click", () => selectRun(p[3]));
        kids.push(dot);
      }
    });
    return svg("svg", { class: "curve", viewBox: "0 0 " + CHART.w + " " + CHART.h, role: "img", "aria-label": c.title }, ...kids);
  }
  function drawFrameCurves(app) {
    const curves = DATA.frame_curves || [];
    if (!curves.length) return;
    const sec = section("frames", "Score by frame budget", "each video benchmark run at several frame budgets (vlmkit run --nframe 8,16,32); the latest run of each model at each budget; click a point to open its run");
    for (const c of curves) {
      const fig = h("div", { class: "curve-block", data: { benchmark: c.benchmark, unit: c.unit } });
      fig.append(h("h3", { text: c.title }));
      fig.append(h("div", { class: "chart" }, curveChart(c)));
      fig.append(h("ul", { class: "curve-legend" }, c.series.map((s, i) => h("li", {}, h("i", { class: "swatch s" + (i % 8) }), s.model))));
      const columns = [{ key: "model", label: "model", cell: (r) => h("b", { text: r.model }) }].concat(c.budgets.map((b, i) => ({
        key: "b" + i, label: c.columns[i], num: true, first: c.hib === false ? "asc" : "desc",
        value: (r) => { const p = r.points.find((q) => q[0] === b); return p && typeof p[1] === "number" ? p[1] : null; },
        cell: (r) => { const p = r.points.find((q) => q[0] === b); return p ? p[2] : "\u2014"; },
      })));
      fig.append(sortableTable(columns, c.series, { sortKey: "model", dir: 1 }));
      const notes = (c.rules.length ? ["frames sampled by: " + c.rules.join("; ")] : []).concat(c.notes);
      if (notes.length) fig.append(h("ul", { class: "notes" }, notes.map((n) => h("li", { text: n }))));
      sec.append(fig);
    }
    app.append(sec);
  }

  // -- video modes: frames vs video_url vs a local model on the same rows (DATA.video_modes; report/video_modes.py)
  function drawVideoModes(app) {
    const pairs = DATA.video_modes || [];
    if (!pairs.length) return;
    const sec = section("modes", "Video modes", "the same benchmark with the video sent as separate frames, as one video_url part, or to a local model: B - A on the samples both scored, paired test (McNemar on hits)");
    const fmt = (v, digits) => (typeof v === "number" ? (digits ? (v >= 0 ? "+" : "") + v.toFixed(digits) : v.toPrecision(3)) : "");
    const open = (side) => { const a = h("span", { text: side.label }); if (side.run && BY_ID.has(side.run)) { a.className = "link"; a.addEventListener("click", () => selectRun(side.run)); } return a; };
    const columns = [
      { key: "benchmark", label: "benchmark" },
      { key: "a", label: "A", value: (r) => r.a.label, cell: (r) => open(r.a) }, { key: "sa", label: "score A", num: true, value: (r) => r.a.display, cell: (r) => r.a.display },
      { key: "b", label: "B", value: (r) => r.b.label, cell: (r) => open(r.b) }, { key: "sb", label: "score B", num: true, value: (r) => r.b.display, cell: (r) => r.b.display },
      { key: "difference", label: "B - A", num: true, cell: (r) => fmt(r.difference, 4) },
      { key: "discordant", label: "A only / B only", num: true, value: (r) => r.a_only, cell: (r) => (r.a_only === null ? "" : r.a_only + " / " + r.b_only) },
      { key: "p_value", label: "p", num: true, cell: (r) => fmt(r.p_value) },
      { key: "reading", label: "reading", cell: (r) => h("span", { class: "reading", text: r.reading }) },
    ];
    const table = sortableTable(columns, pairs, { rowClass: (r) => (r.p_value !== null && r.p_value < 0.05 ? "differs" : "") });
    table.querySelector("table").id = "modes-table";
    sec.append(table);
    app.append(sec);
  }

  // -- perf runs ---------------------------------------------------------------------------------------------------
  function drawPerf(app) {
    if (!DATA.perf.length) return;
    const sec = section("perf", "Perf runs", DATA.perf.length + " perf_summary.json; latencies in ms, over successful requests");
    for (const p of DATA.perf) {
      sec.append(h("h3", {}, p.model + " \u00b7 " + p.dataset + " ", statusBadge(p.status), " ", h("small", { text: p.completed + " \u00b7 " + p.file })));
      const columns = p.columns.map((c, i) => ({
        key: c, label: c, num: i >= 3 || c === "ok/sent",
        cell: (r) => (typeof r[c] === "number" ? (Math.abs(r[c]) >= 100 ? r[c].toFixed(0) : r[c].toFixed(2)) : r[c] === null ? "" : r[c]),
      }));
      sec.append(sortableTable(columns, p.levels, {}));
      if (p.notes.length) sec.append(h("ul", { class: "notes" }, p.notes.map((n) => h("li", { text: n }))));
      if (p.plots.length) sec.append(h("div", { class: "plots" }, p.plots.map(([name, url]) => h("figure", {},
        h("img", { src: url, alt: name, loading: "lazy", onclick: () => lightbox(url, name) }), h("figcaption", { text: name })))));
    }
    app.append(sec);
  }
  function lightbox(url, caption) {
    const box = document.getElementById("lightbox");
    box.querySelector("img").src = url;
    box.querySelector(".lb-caption").textContent = caption;
    box.hidden = false;
  }
  document.getElementById("lightbox").addEventListener("click", (ev) => { ev.currentTarget.hidden = true; });

  // -- page ----------------------------------------------------------------------------------------------------------
  function drawAll() {
    const app = document.getElementById("app");
    put(app);
    const models = new Set(RUNS.map((r) => r.model)), datasets = new Set(RUNS.map((r) => r.dataset));
    const meta = document.getElementById("meta");
    meta.textContent = RUNS.length + " runs \u00b7 " + models.size + " models \u00b7 " + datasets.size + " datasets \u00b7 generated " + DATA.generated.replace("T", " ").slice(0, 19) + " UTC" + (DATA.sources.length ? " \u00b7 " + DATA.sources.join(", ") : "");
    meta.title = meta.textContent;
    const links = [["leaderboard", "Leaderboard"], ["runs", "Runs"], ["run", "Samples"]];
    if (DATA.diff) links.push(["diff", "Diff"]);
    if ((DATA.frame_curves || []).length) links.push(["frames", "Frames"]);
    if ((DATA.video_modes || []).length) links.push(["modes", "Video modes"]);
    if (DATA.perf.length) links.push(["perf", "Perf"]);
    put(document.getElementById("nav"), ...links.map(([id, label]) => h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); document.getElementById(id).scrollIntoView({ behavior: "smooth" }); } }, label)));
    if (DATA.diff) drawDiff(app);
    drawLeaderboard(app);
    drawRuns(app);
    drawFrameCurves(app);
    drawVideoModes(app);
    if (RUNS.length) { drawRunShell(app); drawRun(); }
    drawPerf(app);
  }

  readHash();
  drawAll();
  // a bookmarked view (#run=...) opens at its run
  if (/(^|[#&])run=/.test(location.hash) && document.getElementById("run")) {
    document.getElementById("run").scrollIntoView();
  }
  window.addEventListener("hashchange", () => { readHash(); if (RUNS.length) drawRun(); });
  // markers for tests and tools/bench_report.py: ms from navigation start to drawn, and to the load event
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-rendered", "1");
  window.addEventListener("load", () => document.body.setAttribute("data-load-ms", String(Math.round(performance.now()))));
})();
