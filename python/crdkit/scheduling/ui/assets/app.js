// The scheduler's live page. The server sends the snapshot whole once ("full"), then only what
// changed ("delta", see crdkit/scheduling/ui/delta.py: this file applies it the same way).
// At 1,024 nodes a re-render of the grid per update would cost the browser most of a second,
// so the grid is built once per node set and only the cells of changed nodes are touched.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  let state = null;             // the snapshot as last applied
  let receivedAt = 0;           // Date.now() when it came, to age its times between updates
  let nodeKeys = new Map();     // node name -> its NodeView as JSON, to skip unchanged cells
  let cells = new Map();        // node name -> its cell element
  let selected = null;          // the gang whose nodes are lit

  // A job's colour: a hue from a hash of its name, so it is the same on every page and update.
  const colours = new Map();
  function colour(job) {
    let c = colours.get(job);
    if (c === undefined) {
      let h = 0x811c9dc5;  // FNV-1a
      for (let i = 0; i < job.length; i++) {
        h ^= job.charCodeAt(i);
        h = Math.imul(h, 0x01000193) >>> 0;
      }
      // Hue from the low bits; three lightness and two saturation bands from others, so that
      // two jobs of near hues still differ at a glance.
      const light = [36, 50, 64][(h >>> 9) % 3], saturation = [62, 82][(h >>> 13) % 2];
      c = `hsl(${h % 360}, ${saturation}%, ${light}%)`;
      colours.set(job, c);
    }
    return c;
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- times -------------------------------------------------------------------------------

  function now() {  // the scheduler's clock, moved on by the time since the last update
    return state ? state.time + (Date.now() - receivedAt) / 1000 : Date.now() / 1000;
  }

  function span(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    if (seconds < 60) return `${seconds}s`;
    const m = Math.floor(seconds / 60), s = seconds % 60;
    if (m < 60) return s ? `${m}m ${s}s` : `${m}m`;
    const h = Math.floor(m / 60);
    return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  }

  function ago(at) { return span(now() - at); }

  function until(at) {
    const left = at - now();
    return left <= 0 ? "next pass" : `in ${span(left)}`;
  }

  // Relative times tick every second without another update: cells carry their instant.
  function tick() {
    for (const td of document.querySelectorAll("[data-since]")) td.textContent = ago(+td.dataset.since);
    for (const td of document.querySelectorAll("[data-until]")) td.textContent = until(+td.dataset.until);
    if (state) $("clock").textContent = new Date(now() * 1000).toLocaleTimeString();
  }

  // --- topology ----------------------------------------------------------------------------

  function sameLayout(a, b) {
    if (!a || a.nodes.length !== b.nodes.length) return false;
    if (JSON.stringify(a.levels) !== JSON.stringify(b.levels)) return false;
    for (let i = 0; i < a.nodes.length; i++) {
      if (a.nodes[i].name !== b.nodes[i].name || a.nodes[i].capacity !== b.nodes[i].capacity) return false;
      if (a.nodes[i].path.join("\u0000") !== b.nodes[i].path.join("\u0000")) return false;
    }
    return true;
  }

  // Nested boxes, one per domain of each level, in the nodes' (topology) order.
  function buildTopology(snapshot) {
    const root = $("topology");
    const fragment = document.createDocumentFragment();
    const depth = snapshot.levels.length;
    let open = [];  // [{key, children}] of the domains the previous node was in
    cells = new Map();
    nodeKeys = new Map();
    for (const node of snapshot.nodes) {
      let level = 0;
      while (level < open.length && open[level].key === node.path[level]) level++;
      open = open.slice(0, level);
      for (; level < depth; level++) {
        const innermost = level === depth - 1 ? " innermost" : "";
        const box = el("div", { class: `domain depth-${level}${innermost}`, "data-level": snapshot.levels[level] });
        box.appendChild(el("div", { class: "domain-label" }, node.path[level] || "(none)"));
        const children = el("div", { class: "domain-children" });
        box.appendChild(children);
        (level === 0 ? fragment : open[level - 1].children).appendChild(box);
        open.push({ key: node.path[level], children });
      }
      const cell = el("div", { class: "node", "data-node": node.name });
      for (let i = 0; i < node.capacity; i++) cell.appendChild(el("span", { class: "gpu" }));
      (depth ? open[depth - 1].children : fragment).appendChild(cell);
      cells.set(node.name, cell);
      updateNode(node);
    }
    root.replaceChildren(fragment);
  }

  function updateNode(node) {
    const key = JSON.stringify(node);
    if (nodeKeys.get(node.name) === key) return;
    nodeKeys.set(node.name, key);
    const cell = cells.get(node.name);
    if (!cell) return;
    const squares = cell.children;
    let i = 0;
    const jobs = [];
    for (const share of node.jobs) {
      jobs.push(`${share.job}: ${share.amount}`);
      for (let n = 0; n < share.amount && i < squares.length; n++, i++) {
        squares[i].dataset.job = share.job;
        squares[i].style.backgroundColor = colour(share.job);
      }
    }
    for (; i < squares.length; i++) {
      delete squares[i].dataset.job;
      squares[i].style.backgroundColor = "";
    }
    cell.classList.toggle("held", !!node.held);
    cell.classList.toggle("down", !node.ready);
    if (node.held) cell.dataset.held = node.held; else delete cell.dataset.held;
    const lines = [`${node.name} (${node.path.filter(Boolean).join(" / ")})`];
    lines.push(jobs.length ? jobs.join("\n") : "idle");
    if (node.held) lines.push(`held for ${node.held} by a reservation`);
    if (!node.ready) lines.push("not ready");
    cell.title = lines.join("\n");
    cell.dataset.jobs = node.jobs.map((s) => s.job).join(" ");
    if (selected) light(cell, node);
  }

  function light(cell, node) {
    const lit = node.held === selected || node.jobs.some((s) => s.job === selected);
    cell.classList.toggle("lit", lit);
  }

  function select(gang) {
    selected = selected === gang ? null : gang;
    $("topology").classList.toggle("focus", selected !== null);
    for (const node of state.nodes) light(cells.get(node.name), node);
    for (const tr of document.querySelectorAll("tr[data-gang]")) {
      tr.classList.toggle("selected", tr.dataset.gang === selected);
    }
  }

  // --- the line ----------------------------------------------------------------------------

  function td(text, attrs) { return el("td", attrs, text); }

  function renderGangs() {
    const waiting = document.createDocumentFragment();
    const running = document.createDocumentFragment();
    for (const g of state.gangs) {
      const tr = el("tr", { "data-gang": g.gang });
      if (g.gang === selected) tr.classList.add("selected");
      tr.addEventListener("click", () => select(g.gang));
      const name = td("");
      const swatch = el("span", { class: "swatch" });
      swatch.style.backgroundColor = colour(g.gang);
      name.append(swatch, g.gang);
      if (g.state === "waiting") {
        tr.append(td(g.position === null ? "–" : String(g.position), { class: "num" }), name,
          td(g.queue || ""), td(String(g.priority), { class: "num" }),
          td(String(g.pods), { class: "num" }), td(String(g.gpus), { class: "num" }),
          td(ago(g.since), { "data-since": String(g.since) }));
        if (g.never_fits) {
          tr.append(td("never (does not fit)", { class: "unknown", title: g.reason }));
        } else if (g.expected_start === null) {
          tr.append(td("unknown", { class: "unknown", title: g.expected_note || "unknown" }));
        } else {
          tr.append(td(until(g.expected_start), { "data-until": String(g.expected_start) }));
        }
        tr.append(td(g.reserved || ""), td(g.reason, { class: "reason", title: g.reason }));
        waiting.appendChild(tr);
      } else {
        tr.append(name, td(g.queue || ""), td(String(g.priority), { class: "num" }),
          td(String(g.pods), { class: "num" }), td(String(g.gpus), { class: "num" }),
          td(ago(g.since), { "data-since": String(g.since) }));
        running.appendChild(tr);
      }
    }
    document.querySelector("#waiting tbody").replaceChildren(waiting);
    document.querySelector("#running tbody").replaceChildren(running);
    $("omitted").textContent = state.omitted ? `(${state.omitted} more not shown)` : "";
  }

  function renderQueues() {
    $("queues-section").hidden = state.queues.length === 0;
    const box = document.createDocumentFragment();
    for (const q of state.queues) {
      const grid = el("div", { class: "quota", "data-queue": q.name });
      const share = q.share === null ? "" : ` · share ${q.share.toFixed(1)}%`;
      grid.appendChild(el("div", { title: q.parent ? `in ${q.parent}` : "a root queue" }, q.name));
      grid.appendChild(el("div", { class: "label" }, `${q.pending} pending · ${q.admitted} admitted${share}`));
      grid.appendChild(el("div"));
      for (const r of q.resources) {
        grid.appendChild(el("div", { class: "label" }, `${r.flavor} ${r.resource}`));
        const bar = el("div", { class: "bar", title: `${r.used} used of ${r.nominal} nominal, ${r.borrowed} borrowed` });
        const whole = Math.max(r.nominal, r.used, 1);
        const used = el("div", { class: "used" });
        used.style.width = `${(100 * Math.min(r.used, r.nominal)) / whole}%`;
        const borrowed = el("div", { class: "borrowed" });
        borrowed.style.left = used.style.width;
        borrowed.style.width = `${(100 * Math.max(0, r.used - r.nominal)) / whole}%`;
        bar.append(used, borrowed);
        grid.appendChild(bar);
        grid.appendChild(el("div", { class: "label" }, `${r.used} / ${r.nominal}`));
      }
      box.appendChild(grid);
    }
    $("queues").replaceChildren(box);
  }

  // --- charts ------------------------------------------------------------------------------

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function renderTimeline() {
    const W = 600, H = 150, L = 40, B = 16;
    const points = state.timeline;
    const chart = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, "data-points": String(points.length) });
    if (points.length) {
      const t0 = points[0].t, t1 = Math.max(points[points.length - 1].t, t0 + 1);
      const top = Math.max(1, ...points.map((p) => p.total));
      const x = (t) => L + ((W - L - 4) * (t - t0)) / (t1 - t0);
      const y = (v) => H - B - ((H - B - 6) * v) / top;
      chart.append(svg("line", { class: "axis", x1: L, y1: y(0), x2: W, y2: y(0) }),
        svg("line", { class: "axis", x1: L, y1: y(top), x2: W, y2: y(top) }),
        svg("text", { x: 2, y: y(top) + 3 }, String(top)), svg("text", { x: 2, y: y(0) }, "0"),
        svg("text", { x: L, y: H - 3 }, `${span(t1 - t0)} ago`), svg("text", { x: W - 30, y: H - 3 }, "now"));
      for (const kind of ["bound", "held"]) {
        const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p[kind]).toFixed(1)}`).join(" ");
        const path = svg("polyline", { class: kind, points: line });
        path.appendChild(svg("title", {}, kind === "held" ? "GPUs on nodes reservations hold" : "GPUs of fully bound gangs"));
        chart.appendChild(path);
      }
      const last = points[points.length - 1];
      chart.appendChild(svg("text", { x: L + 4, y: 10 },
        `bound ${last.bound} · held ${last.held} · total ${last.total} ${state.resource}`));
    }
    $("timeline").replaceChildren(chart);
  }

  // Each recorded start: how late (above the line) or early it came against its first promise.
  function renderStarts() {
    const W = 600, H = 110, L = 40;
    const starts = state.starts;
    const chart = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, "data-points": String(starts.length) });
    if (starts.length) {
      const t0 = starts[0].actual, t1 = Math.max(starts[starts.length - 1].actual, t0 + 1);
      const worst = Math.max(1, ...starts.map((s) => Math.abs(s.actual - s.promised)));
      const x = (t) => L + ((W - L - 8) * (t - t0)) / (t1 - t0) + 4;
      const y = (late) => H / 2 - ((H / 2 - 8) * late) / worst;
      chart.append(svg("line", { class: "axis", x1: L, y1: H / 2, x2: W, y2: H / 2 }),
        svg("text", { x: 2, y: 10 }, `+${span(worst)}`), svg("text", { x: 2, y: H / 2 + 3 }, "on time"),
        svg("text", { x: 2, y: H - 3 }, `−${span(worst)}`));
      for (const s of starts) {
        const late = s.actual - s.promised;
        // "kept" is the scheduler's word (placed in the first pass at or after the promise);
        // the height is how far off it was.
        const kept = s.kept === undefined ? late <= 0 : s.kept;
        const dot = svg("circle", { class: kept ? "kept" : "late", cx: x(s.actual).toFixed(1), cy: y(late).toFixed(1), r: 3 });
        const off = late > 0 ? `late by ${span(late)}` : `early by ${span(-late)}`;
        dot.appendChild(svg("title", {}, `${s.gang}: ${off}${kept ? ", promise kept" : ""}`));
        chart.appendChild(dot);
      }
    } else {
      chart.appendChild(svg("text", { x: L, y: H / 2 }, "no start with a promise yet"));
    }
    $("starts").replaceChildren(chart);
  }

  // --- applying what the server sends --------------------------------------------------------

  function renderHeader() {
    document.body.dataset.seq = String(state.seq);
    $("title").textContent = state.scheduler;
    const waiting = state.gangs.filter((g) => g.state === "waiting").length;
    $("summary").textContent = `${state.nodes.length} nodes · ${waiting} waiting · seq ${state.seq}`;
    tick();
  }

  function full(snapshot) {
    const rebuild = !sameLayout(state, snapshot);
    state = snapshot;
    receivedAt = Date.now();
    if (rebuild) buildTopology(state); else state.nodes.forEach(updateNode);
    renderGangs();
    renderQueues();
    renderTimeline();
    renderStarts();
    renderHeader();
  }

  function slide(items, moved) { return items.slice(moved.drop).concat(moved.add); }

  function delta(change) {
    const omittedChanged = change.omitted !== state.omitted;
    state.seq = change.seq;
    state.time = change.time;
    state.omitted = change.omitted;
    receivedAt = Date.now();
    if (change.nodes) {
      const index = new Map(state.nodes.map((n, i) => [n.name, i]));
      for (const node of change.nodes) {
        state.nodes[index.get(node.name)] = node;
        updateNode(node);
      }
    }
    if (change.gangs) state.gangs = change.gangs;
    if (change.queues) { state.queues = change.queues; renderQueues(); }
    if (change.timeline) { state.timeline = slide(state.timeline, change.timeline); renderTimeline(); }
    if (change.starts) { state.starts = slide(state.starts, change.starts); renderStarts(); }
    if (change.gangs || omittedChanged) renderGangs();
    renderHeader();
  }

  function status(text, kind) {
    const s = $("status");
    s.textContent = text;
    s.className = `status ${kind}`;
  }

  function connect() {
    const source = new EventSource("/ui/events");
    source.addEventListener("open", () => status("live", "live"));
    source.addEventListener("full", (e) => full(JSON.parse(e.data)));
    source.addEventListener("delta", (e) => { if (state) delta(JSON.parse(e.data)); });
    // EventSource reconnects by itself (the server asks for 2 s); the first event of a new
    // stream is the snapshot whole, so nothing missed while away is lost.
    source.addEventListener("error", () => status("reconnecting…", "lost"));
  }

  window.crdkitUi = { colour, state: () => state };
  setInterval(tick, 1000);
  connect();
})();
