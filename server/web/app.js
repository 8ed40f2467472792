// ctxsel web page: paste candidates, pick a strategy, see where the curve is
// cut and why. Plain JavaScript, no build step, nothing loaded from outside.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const KEY_STORE = "ctxsel-api-key";

  const state = {
    defs: null,          // /v1/strategies
    strategy: "",
    values: {},          // strategy name → {param: input text}, kept across switches
    caps: {},            // cap name → input text
    cands: [],           // parsed candidates, input order
    key: sessionStorage.getItem(KEY_STORE) || "",
    controller: null,    // aborts the request a newer one replaces
    timer: 0,
    seq: 0,              // requests issued; only the newest may render
    zoom: null,          // null: zoom to the cut on long curves; true/false: the reader's choice
    chosen: false,       // the reader chose a strategy or edited a parameter: Ask sends them
    last: null,          // the last response and candidates, to redraw on zoom
  };

  // ---- HTTP -------------------------------------------------------------

  async function api(path, body, signal) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (state.key) headers.Authorization = "Bearer " + state.key;
    const res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (res.status === 401) askForKey();
    return { status: res.status, ok: res.ok, data };
  }

  function askForKey() {
    $("key-button").hidden = false;
    const dlg = $("key-dialog");
    if (!dlg.open) dlg.showModal();
  }

  // ---- formatting -------------------------------------------------------

  const fmtInt = (n) => Number(n).toLocaleString("en-US");
  function fmtScore(x) {
    if (!Number.isFinite(x)) return String(x);
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return x.toExponential(3);
    return x.toFixed(a >= 100 ? 1 : 4);
  }
  const fmtParam = (x) => (Math.abs(x) >= 1e9 ? x.toExponential(2) : String(x));
  const decisionNames = {
    gap: "largest gap", knee: "knee", threshold: "threshold", mass: "probability mass",
    fixed: "fixed k", budget: "token budget", all: "everything", band: "band", spike: "curvature spike",
  };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- parameters -------------------------------------------------------

  // currentDef is the chosen strategy's definition, or the chosen text
  // selector's (selector: true), whose parameters are words in its spec.
  function currentDef() {
    const st = state.defs.strategies.find((s) => s.name === state.strategy);
    if (st) return st;
    const sel = (state.defs.selectors || []).find((s) => s.name === state.strategy);
    return sel && { ...sel, selector: true };
  }

  // selectorInput is a text selector's parameter: any word or number, sent
  // in the spec (evidence:budget=500); empty leaves the selector's default.
  function selectorInput(p, stored) {
    const id = `param-${p.name}`;
    const input = el("input", { id, name: p.name, type: "text", autocomplete: "off", placeholder: p.default, "aria-describedby": `${id}-doc` });
    input.value = stored !== undefined ? stored : "";
    input.dataset.param = p.name;
    input.addEventListener("input", () => {
      state.values[state.strategy][p.name] = input.value;
      state.chosen = true;
      schedule(250);
    });
    return el("div", { class: "param" },
      el("label", { for: id, text: p.name }),
      input,
      el("p", { class: "hint", id: `${id}-doc`, text: `${p.doc} (default ${p.default})` }));
  }

  function paramInput(p, prefix, stored) {
    const id = `${prefix}-${p.name}`;
    let range = "any number";
    if (Math.abs(p.min) < 1e9 && p.max < 1e9) range = `${p.min_exclusive ? "above " : ""}${fmtParam(p.min)} to ${fmtParam(p.max)}`;
    else if (Math.abs(p.min) < 1e9) range = `${p.min_exclusive ? ">" : "≥"} ${fmtParam(p.min)}`;
    const input = el("input", {
      id, name: p.name, type: "number", inputmode: p.integer ? "numeric" : "decimal",
      step: p.integer ? "1" : "any", "aria-describedby": `${id}-doc`,
      min: Math.abs(p.min) < 1e15 ? p.min : undefined,
      max: p.max < 1e9 ? p.max : undefined,
    });
    input.value = stored !== undefined ? stored : String(p.default);
    input.dataset.default = String(p.default);
    input.dataset.param = p.name;
    input.addEventListener("input", () => {
      stored = input.value;
      (prefix === "cap" ? state.caps : state.values[state.strategy])[p.name] = input.value;
      state.chosen = true;
      schedule(250);
    });
    return el("div", { class: "param" },
      el("label", { for: id, text: p.name }),
      input,
      el("p", { class: "hint", id: `${id}-doc`, text: `${p.doc} (default ${fmtParam(p.default)}, ${range})` }));
  }

  function renderParams() {
    const def = currentDef();
    $("strategy-doc").textContent = def.doc;
    const box = $("params");
    box.replaceChildren(el("legend", { text: `Parameters of ${def.name}` }));
    const stored = (state.values[def.name] ||= {});
    if (def.params.length === 0) box.append(el("p", { class: "none", text: "This strategy has no parameters." }));
    const caps = $("caps");
    caps.replaceChildren(caps.querySelector("legend"));
    // A text selector's caps are parameters of its own spec.
    caps.hidden = !!def.selector;
    if (def.selector) {
      for (const p of def.params) box.append(selectorInput(p, stored[p.name]));
      return;
    }
    for (const p of def.params) box.append(paramInput(p, "param", stored[p.name]));
    for (const c of state.defs.caps) {
      // A strategy's own parameter of a cap's name replaces the cap.
      if (def.params.some((p) => p.name === c.name)) continue;
      caps.append(paramInput(c, "cap", state.caps[c.name]));
    }
  }

  // readParams returns the parameters that differ from their defaults, or
  // null when an input does not hold a number.
  function readParams() {
    const params = {};
    let ok = true;
    for (const input of document.querySelectorAll("#params input, #caps input")) {
      clearFieldError(input);
      if (input.value.trim() === "") continue;
      const v = Number(input.value);
      if (!Number.isFinite(v)) {
        setFieldError(input, "not a number");
        ok = false;
        continue;
      }
      if (v !== Number(input.dataset.default)) params[input.dataset.param] = v;
    }
    return ok ? params : null;
  }

  function setFieldError(input, msg) {
    input.setAttribute("aria-invalid", "true");
    const box = input.closest(".param");
    if (box && !box.querySelector(".field-error")) {
      box.append(el("p", { class: "field-error", id: `${input.id}-err`, text: msg }));
      input.setAttribute("aria-describedby", `${input.id}-doc ${input.id}-err`);
    }
  }

  function clearFieldError(input) {
    input.removeAttribute("aria-invalid");
    input.setAttribute("aria-describedby", `${input.id}-doc`);
    input.closest(".param")?.querySelector(".field-error")?.remove();
  }

  // ---- candidates -------------------------------------------------------

  function parseCandidates(text) {
    text = text.trim();
    if (!text) throw new Error("No candidates: paste JSON lines or a JSON array.");
    if (text[0] === "[") {
      const a = JSON.parse(text);
      if (!Array.isArray(a)) throw new Error("Expected a JSON array of candidates.");
      return a;
    }
    try {
      const o = JSON.parse(text);
      if (o && Array.isArray(o.candidates)) return o.candidates;
      if (o && typeof o === "object") return [o];
    } catch (_) { /* JSON lines */ }
    const out = [];
    text.split("\n").forEach((line, i) => {
      if (!line.trim()) return;
      try {
        out.push(JSON.parse(line));
      } catch (e) {
        throw new Error(`Line ${i + 1}: ${e.message}`);
      }
    });
    return out;
  }

  // ranking orders candidate indices as the server does: score descending,
  // ties in input order. It is null when candidates carry no scores.
  function ranking(cands) {
    if (!cands.length || !cands.every((c) => typeof c.score === "number")) return null;
    return cands.map((_, i) => i).sort((a, b) => cands[b].score - cands[a].score || a - b);
  }

  // ---- requests ---------------------------------------------------------

  function schedule(ms) {
    clearTimeout(state.timer);
    state.timer = setTimeout(runSelect, ms);
  }

  function requestBase() {
    const def = currentDef();
    if (def && def.selector) {
      // A text selector is named by its spec, its parameters in it.
      const kv = [...document.querySelectorAll("#params input")]
        .filter((i) => i.value.trim() !== "")
        .map((i) => `${i.dataset.param}=${i.value.trim()}`);
      return { strategy: kv.length ? `${def.name}:${kv.join(",")}` : def.name, order: $("order").value };
    }
    const params = readParams();
    if (params === null) return null;
    const body = { strategy: state.strategy, params, order: $("order").value };
    return body;
  }

  async function runSelect() {
    clearTimeout(state.timer);
    let cands;
    try {
      cands = parseCandidates($("candidates").value);
    } catch (e) {
      showError({ message: e.message, field: "candidates" });
      return;
    }
    const body = requestBase();
    if (!body || !state.defs) return;
    body.candidates = cands;
    const q = $("question").value.trim();
    if (q) body.query = q;
    const { controller, seq } = newRequest();
    document.querySelector(".results").classList.add("busy");
    try {
      const r = await api("/v1/select", body, controller.signal);
      if (seq !== state.seq) return;
      if (!r.ok) {
        showError(r.data?.error || { message: `HTTP ${r.status}` }, r.status);
        return;
      }
      hideError();
      state.cands = cands;
      $("answer").hidden = true;
      render(r.data, cands);
    } catch (e) {
      if (e.name !== "AbortError") showError({ message: `Request failed: ${e.message}` });
    } finally {
      if (seq === state.seq) document.querySelector(".results").classList.remove("busy");
    }
  }

  // newRequest starts the page's newest request: it cancels a scheduled
  // re-select and aborts the one in flight (a select or an ask), whose
  // answer must not overwrite this one's.
  function newRequest() {
    clearTimeout(state.timer);
    state.controller?.abort();
    const controller = (state.controller = new AbortController());
    return { controller, seq: ++state.seq };
  }

  async function runAsk() {
    const q = $("question").value.trim();
    const note = $("ask-note");
    if (!q) {
      note.textContent = "Type a question first.";
      $("question").focus();
      return;
    }
    // Until the reader picks a strategy, Ask answers as `ctxsel ask` and
    // every other surface do: with the server's default (ctxsel's
    // DefaultStrategy), not the select default the dropdown starts on.
    const body = state.chosen ? requestBase() : { order: $("order").value };
    if (!body) return;
    body.query = q;
    note.textContent = "Asking…";
    $("ask").disabled = true;
    const { controller, seq } = newRequest();
    try {
      const r = await api("/v1/ask", body, controller.signal);
      if (seq !== state.seq) return;
      if (r.status === 501) {
        note.textContent = "This server has no index, so it cannot retrieve: paste candidates below and select instead.";
        return;
      }
      if (!r.ok) {
        note.textContent = "";
        showError(r.data?.error || { message: `HTTP ${r.status}` }, r.status);
        return;
      }
      const ex = r.data.explanation;
      note.textContent = `Retrieved ${ex ? fmtInt(ex.n) : r.data.passages.length} passages from the index` +
        (ex ? `; selected with ${ex.strategy === "selector" ? "a text selector" : ex.strategy}${state.chosen ? "" : " (the default of ask)"}.` : ".");
      hideError();
      const cands = r.data.passages.map((p) => ({ id: p.id, score: p.score, tokens: p.tokens, text: p.text }));
      $("candidates").value = cands.map((c) => JSON.stringify(c)).join("\n");
      $("candidates-note").textContent = "The passages the index returned for the question above.";
      state.cands = cands;
      render(r.data, cands, r.data.passages.flatMap((p, i) => (p.selected ? [i] : [])), askRanks(r.data));
      $("answer").hidden = !r.data.answer;
      $("answer-text").textContent = r.data.answer || "";
    } catch (e) {
      if (e.name !== "AbortError") note.textContent = `Ask failed: ${e.message}`;
      else if (seq === state.seq) note.textContent = "";
    } finally {
      $("ask").disabled = false;
    }
  }

  // askRanks gives each passage of an ask its rank among every candidate
  // the strategy cut: the selection's indices for the selected ones (an
  // index may return only those, and their list positions are not their
  // ranks), the passage's own rank when the index returned every
  // candidate, and null otherwise.
  function askRanks(data) {
    const byID = new Map((data.ids || []).map((id, j) => [String(id), data.indices[j]]));
    const all = data.explanation && data.passages.length === data.explanation.n;
    return data.passages.map((p) => (byID.has(String(p.id)) ? byID.get(String(p.id)) : all ? p.rank : null));
  }

  function showError(err, status) {
    const box = $("error");
    const field = err.field || "";
    box.replaceChildren();
    if (status) box.append(`${status}: `);
    if (field) box.append(el("code", { text: field }), ": ");
    box.append(err.message || "error");
    box.hidden = false;
    if (field.startsWith("params.")) {
      const input = document.querySelector(`#params input[name="${CSS.escape(field.slice(7))}"], #caps input[name="${CSS.escape(field.slice(7))}"]`);
      if (input) setFieldError(input, err.message);
    }
    if (field === "candidates" || field.startsWith("candidates[")) $("candidates").setAttribute("aria-invalid", "true");
  }

  function hideError() {
    $("error").hidden = true;
    $("candidates").removeAttribute("aria-invalid");
  }

  // ---- rendering --------------------------------------------------------

  // render shows a response. selectedIdx are the selected positions in
  // cands: the response's indices for /v1/select; for /v1/ask, where cands
  // are the passages the index returned, their "selected" flags.
  // ranks, for an ask, is each passage's rank among the candidates cut
  // (askRanks); the list then numbers and orders passages by it.
  function render(data, cands, selectedIdx = data.indices, ranks = null) {
    const ex = data.explanation;
    if (!ex) return;
    const order = ranks ? null : ranking(cands);
    const selected = new Set(selectedIdx);
    const goldByRank = order ? order.map((i) => !!cands[i].gold) : null;

    $("selected-count").textContent = fmtInt(data.k);
    $("selected-count").dataset.k = String(data.k);
    $("n-count").textContent = fmtInt(ex.n);
    $("tokens-used").textContent = fmtInt(data.tokens);
    $("tokens-total").textContent = fmtInt(data.total_tokens);
    const share = data.total_tokens > 0 ? (100 * data.tokens) / data.total_tokens : 0;
    $("token-fill").style.width = `${Math.min(100, share)}%`;
    $("token-meter").setAttribute("aria-valuenow", share.toFixed(1));
    $("token-meter").setAttribute("aria-valuetext", `${share.toFixed(1)} % of the tokens`);
    const budget = ex.caps.max_tokens || (ex.strategy === "budget" ? ex.params.tokens : 0);
    const bm = $("token-budget");
    bm.hidden = !(budget > 0 && data.total_tokens > 0);
    if (!bm.hidden) {
      bm.style.left = `${Math.min(100, (100 * budget) / data.total_tokens)}%`;
      bm.title = `budget ${fmtInt(budget)} tokens`;
    }
    $("decision-kind").textContent = `${decisionNames[ex.decision.kind] || ex.decision.kind}${
      ex.caps_applied.length ? ` + ${ex.caps_applied.join(", ")}` : ""}`;
    $("decision-detail").textContent = decisionDetail(ex.decision);

    const reason = $("reason");
    reason.replaceChildren(el("strong", { text: `${ex.strategy}: ` }), ex.reason);
    if (ex.caps_applied.length) reason.append(`; then capped by ${ex.caps_applied.join(", ")} → k = ${data.k}`);
    if (ex.guards && ex.guards.length) reason.append(` [guards: ${ex.guards.join(", ")}]`);
    reason.append(".");

    state.last = { ex, goldByRank, k: data.k };
    drawChart(ex, goldByRank, data.k);
    renderList(data, cands, order, selected, ex, ranks);
  }

  function decisionDetail(d) {
    switch (d.kind) {
      case "gap": return `${fmtScore(d.value)} between ranks ${d.rank} and ${d.rank + 1}`;
      case "knee": return `after rank ${d.rank}`;
      case "threshold": return `score ≥ ${fmtScore(d.value)}`;
      case "mass": return `mass ${fmtScore(d.value)} reached at rank ${d.rank}`;
      case "fixed": return `k = ${fmtInt(d.value)}`;
      case "budget": return `${fmtInt(d.value)} tokens`;
      default: return "";
    }
  }

  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const mag = 10 ** Math.floor(Math.log10(raw));
    const f = raw / mag;
    return (f >= 5 ? 10 : f >= 2 ? 5 : f >= 1 ? 2 : 1) * mag;
  }

  // k is the final selection's size, after every cap (a reader's window
  // included), which the label shows; ex.k may be the count before.
  function drawChart(ex, goldByRank, k = ex.k) {
    const chart = $("chart");
    for (const node of [...chart.childNodes]) {
      if (node.nodeName !== "title" && node.nodeName !== "desc") node.remove();
    }
    const W = 800, H = 340, m = { l: 56, r: 20, t: 34, b: 46 };
    const c = ex.curve;
    const n = c.n;
    if (!n) {
      chart.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, "No candidates"));
      return;
    }
    // On a long curve the band can be a sliver at the left: zoom to the
    // ranks around the cut unless the reader says otherwise.
    const end0 = ex.band.end;
    const zoomable = n > 120 && end0 < n / 4;
    const zoom = zoomable && (state.zoom === null ? true : state.zoom);
    $("zoom").checked = zoom;
    $("zoom").closest("label").hidden = !zoomable;
    const last = zoom ? Math.min(n - 1, Math.max(40, Math.ceil(end0 * 3))) : n - 1;
    const all = c.ranks || c.scores.map((_, i) => i);
    const keep = all.map((r, i) => [r, c.scores[i]]).filter(([r]) => r <= last);
    const ranks = keep.map(([r]) => r);
    const scores = keep.map(([, s]) => s);
    let lo = Math.min(...scores), hi = Math.max(...scores);
    if (hi - lo < 1e-12) { lo -= 0.5; hi += 0.5; }
    const pad = (hi - lo) * 0.08;
    lo -= pad; hi += pad;
    const pw = W - m.l - m.r, ph = H - m.t - m.b;
    const step = last > 0 ? pw / last : 0;
    const x = (r) => (last > 0 ? m.l + r * step : m.l + pw / 2);
    const xb = (r) => Math.max(m.l, Math.min(m.l + pw, x(r - 0.5))); // boundary before rank r
    const y = (s) => m.t + ((hi - s) / (hi - lo)) * ph;
    const g = (cls) => chart.appendChild(svg("g", { class: cls }));

    // grid and axes
    const grid = g("grid");
    const ys = niceStep(hi - lo, 5);
    const yTicks = g("axis y-axis");
    for (let v = Math.ceil(lo / ys) * ys; v <= hi + 1e-12; v += ys) {
      grid.append(svg("line", { x1: m.l, x2: m.l + pw, y1: y(v), y2: y(v) }));
      yTicks.append(svg("text", { x: m.l - 8, y: y(v) + 4, "text-anchor": "end" }, Number(v.toPrecision(6)).toString()));
    }
    const xs = Math.max(1, niceStep(Math.max(1, last), 8));
    const xTicks = g("axis x-axis");
    xTicks.append(svg("line", { x1: m.l, x2: m.l + pw, y1: m.t + ph, y2: m.t + ph }));
    for (let r = 0; r <= last; r += xs) {
      xTicks.append(svg("line", { x1: x(r), x2: x(r), y1: m.t + ph, y2: m.t + ph + 5 }));
      xTicks.append(svg("text", { x: x(r), y: m.t + ph + 18, "text-anchor": "middle" }, String(r)));
    }
    chart.append(svg("text", { x: m.l + pw / 2, y: H - 6, "text-anchor": "middle", class: "axis-title" },
      last < n - 1 ? `rank (0 = best) — ranks 0–${last} of ${fmtInt(n)}` : "rank (0 = best)"));
    chart.append(svg("text", { x: 14, y: m.t + ph / 2, "text-anchor": "middle", class: "axis-title",
      transform: `rotate(-90 14 ${m.t + ph / 2})` }, "similarity score"));

    // the selected band, then the gap search window above the plot
    const start = ex.band.start, end = ex.band.end;
    const band = svg("rect", { id: "selected-region", class: "band", x: xb(start), y: m.t,
      width: Math.max(0, xb(end) - xb(start)), height: ph, "data-start": start, "data-end": end });
    band.append(svg("title", {}, `selected band: ranks ${start}–${end - 1} (${end - start} passages)`));
    chart.append(band);
    if (end > start) {
      chart.append(svg("line", { class: "band-edge", x1: xb(start), x2: xb(start), y1: m.t, y2: m.t + ph }));
    }
    const d = ex.decision;
    if (d.search_from !== undefined && d.search_to !== undefined && d.search_to > d.search_from && d.search_from <= last) {
      const x1 = x(d.search_from), x2 = x(Math.min(d.search_to, last));
      const win = svg("rect", { class: "search", x: x1, y: m.t - 14, width: Math.max(2, x2 - x1), height: 5, rx: 2 });
      win.append(svg("title", {}, `gap search window: gap indices ${d.search_from}–${d.search_to - 1}`));
      chart.append(win);
      chart.append(svg("text", { class: "search-label", x: x2, y: m.t - 18, "text-anchor": "end" }, "gap search"));
    }

    // the curve, its selected stretch, and the points
    const pts = ranks.map((r, i) => `${x(r).toFixed(1)},${y(scores[i]).toFixed(1)}`);
    chart.append(svg("polyline", { class: "curve", points: pts.join(" ") }));
    const selPts = ranks.map((r, i) => [r, pts[i]]).filter(([r]) => r >= start && r < end).map(([, p]) => p);
    if (selPts.length > 1) chart.append(svg("polyline", { class: "curve-sel", points: selPts.join(" ") }));
    const shown = ranks.length;
    const radius = shown > 600 ? 1.4 : shown > 200 ? 2.2 : shown > 80 ? 3 : 3.8;
    const dots = g("points");
    ranks.forEach((r, i) => {
      const sel = r >= start && r < end;
      const gold = goldByRank && goldByRank[r];
      const dot = svg("circle", { cx: x(r), cy: y(scores[i]), r: gold ? radius + 1 : radius,
        class: `pt${sel ? " sel" : ""}${gold ? " gold" : ""}` });
      dot.append(svg("title", {}, `rank ${r}: score ${fmtScore(scores[i])}${sel ? ", selected" : ""}${gold ? ", gold evidence" : ""}`));
      dots.append(dot);
    });

    // what decided the cut
    const scoreAt = (rank) => {
      const i = ranks.indexOf(rank);
      return i >= 0 ? scores[i] : undefined;
    };
    if (d.kind === "gap" && d.above !== undefined && d.below !== undefined) {
      const gx = x(d.rank + 0.5);
      const mk = svg("g", { id: "decision-marker", "data-kind": "gap" });
      mk.append(svg("line", { class: "gap", x1: gx, x2: gx, y1: y(d.above), y2: y(d.below) }));
      mk.append(svg("line", { class: "gap", x1: gx - 5, x2: gx + 5, y1: y(d.above), y2: y(d.above) }));
      mk.append(svg("line", { class: "gap", x1: gx - 5, x2: gx + 5, y1: y(d.below), y2: y(d.below) }));
      mk.append(svg("text", { class: "gap-label", x: gx + 8, y: (y(d.above) + y(d.below)) / 2 + 4 },
        `gap ${fmtScore(d.value)}`));
      mk.append(svg("title", {}, `largest gap: ${fmtScore(d.above)} → ${fmtScore(d.below)} between ranks ${d.rank} and ${d.rank + 1}`));
      chart.append(mk);
    } else if (d.kind === "knee" && d.rank >= 0) {
      const s = d.above !== undefined ? d.above : scoreAt(d.rank);
      if (s !== undefined) {
        const mk = svg("g", { id: "decision-marker", "data-kind": "knee" });
        mk.append(svg("circle", { class: "knee", cx: x(d.rank), cy: y(s), r: radius + 6 }));
        mk.append(svg("text", { class: "gap-label", x: x(d.rank) + radius + 10, y: y(s) - 8 }, "knee"));
        chart.append(mk);
      }
    } else if (d.kind === "threshold" && d.value >= lo && d.value <= hi) {
      const mk = svg("g", { id: "decision-marker", "data-kind": "threshold" });
      mk.append(svg("line", { class: "threshold", x1: m.l, x2: m.l + pw, y1: y(d.value), y2: y(d.value) }));
      mk.append(svg("text", { class: "gap-label", x: m.l + pw - 4, y: y(d.value) - 6, "text-anchor": "end" },
        `min ${fmtScore(d.value)}`));
      chart.append(mk);
    }

    // the cut: between the last selected rank and the first one left out
    const cx = xb(ex.cut);
    const cut = svg("g", { id: "cut-marker", "data-cut": ex.cut });
    cut.append(svg("line", { class: "cut", x1: cx, x2: cx, y1: m.t - 4, y2: m.t + ph }));
    const right = cx > m.l + pw - 90;
    cut.append(svg("text", { class: "cut-label", x: right ? cx - 6 : cx + 6, y: m.t + 12,
      "text-anchor": right ? "end" : "start" }, `cut · k = ${k}`));
    cut.append(svg("title", {}, `cut after rank ${ex.cut - 1}`));
    chart.append(cut);
  }

  // highlighted is text from byte offset `from` on, the UTF-8 byte spans
  // marked: the sentences a pruning selector kept.
  function highlighted(text, spans, from) {
    const bytes = utf8.encode(text);
    const part = (a, b) => utf8dec.decode(bytes.subarray(a, b));
    const out = [];
    let last = from;
    for (const [a, b] of spans) {
      const s = Math.max(a, from);
      if (b <= s) continue;
      if (s > last) out.push(part(last, s));
      out.push(el("mark", { class: "kept", text: part(s, b) }));
      last = b;
    }
    if (last < bytes.length) out.push(part(last, bytes.length));
    return out;
  }
  const utf8 = new TextEncoder();
  const utf8dec = new TextDecoder();

  function renderList(data, cands, order, selected, ex, ranks) {
    const list = $("passages");
    list.replaceChildren();
    // What a pruning selector kept of each selected passage, by id.
    const evidence = new Map();
    (data.evidence || []).forEach((e, j) => evidence.set(String(data.ids[j]), e));
    const item = (i, rank, score) => {
      const cd = cands[i] || {};
      const sel = selected.has(i);
      const text = typeof cd.text === "string" ? cd.text : "";
      const nl = text.indexOf("\n");
      const title = nl > 0 && nl < 120 ? text.slice(0, nl) : "";
      const body = title ? text.slice(nl + 1) : text;
      const tokens = typeof cd.tokens === "number" ? `${fmtInt(cd.tokens)} tok` : "";
      const ev = sel ? evidence.get(String(cd.id)) : undefined;
      const head = el("div", {},
        title ? el("span", { class: "title", text: title }) : null,
        el("span", { class: "pid", text: `${title ? " · " : ""}${cd.id ?? ""}` }),
        sel ? el("span", { class: "badge in", text: "selected" }) : null,
        cd.gold ? el("span", { class: "badge gold", text: "gold" }) : null);
      let content = body ? el("p", { class: "text", text: body }) : null;
      let why = null;
      if (ev && text) {
        const from = title ? utf8.encode(title).length + 1 : 0;
        content = el("p", { class: "text pruned" }, ...highlighted(text, ev.spans, from));
        why = el("p", { class: "hint why", text: `sent ${fmtInt(ev.tokens)} of ${fmtInt(ev.passage_tokens)} tokens: ${ev.why}` });
      }
      return el("li", { class: `passage${sel ? " selected" : ""}`, "data-id": String(cd.id ?? ""), "aria-current": sel ? "true" : undefined },
        el("span", { class: "rank", text: `#${rank}` }),
        el("div", {}, head, content, why),
        el("div", { class: "meta" }, el("span", { class: "score", text: fmtScore(score) }), el("span", { class: "tok", text: tokens })));
    };
    if (ranks) {
      // An ask: the passages by their rank among every candidate, those of
      // unknown rank (not selected, from an index that returned a subset)
      // last.
      const byRank = cands.map((_, i) => i).sort((a, b) => (ranks[a] ?? Infinity) - (ranks[b] ?? Infinity) || a - b);
      let cutShown = false;
      for (const i of byRank) {
        const r = ranks[i];
        if (!cutShown && (r === null || r >= ex.band.end) && list.childElementCount > 0) {
          list.append(el("li", { class: "cut-row", "aria-hidden": "true", text: `cut · k = ${data.k}` }));
          cutShown = true;
        }
        list.append(item(i, r === null ? "–" : r, cands[i].score));
      }
      $("list-hint").textContent = `(${fmtInt(data.k)} selected of ${fmtInt(ex.n)}, highlighted)`;
      return;
    }
    if (!order) {
      // Scores were computed by the server (vectors or texts): list the selection.
      data.indices.forEach((i, j) => list.append(item(i, j, data.scores[j])));
      $("list-hint").textContent = "(the selection; the server computed the scores)";
      return;
    }
    const limit = Math.min(order.length, Math.max(ex.band.end + 8, 16));
    for (let r = 0; r < limit; r++) {
      if (r === ex.band.end && r > 0) list.append(el("li", { class: "cut-row", "aria-hidden": "true", text: `cut · k = ${data.k}` }));
      list.append(item(order[r], r, cands[order[r]].score));
    }
    if (limit < order.length) list.append(el("li", { class: "more", text: `… ${fmtInt(order.length - limit)} more below` }));
    $("list-hint").textContent = `(${fmtInt(data.k)} selected, highlighted${data.evidence ? "; the sentences sent are marked" : ""})`;
  }

  // ---- start ------------------------------------------------------------

  async function loadDemo() {
    const res = await fetch("/assets/demo.json");
    const demo = await res.json();
    $("candidates").value = demo.candidates.map((c) => JSON.stringify(c)).join("\n");
    $("question").value = demo.question;
    $("candidates-note").textContent =
      `Demo: ${demo.candidates.length} passages for the question above — ${demo.source}. "gold" marks the evidence.`;
  }

  async function loadStrategies() {
    const r = await api("/v1/strategies");
    if (!r.ok) {
      $("server-status").textContent = r.status === 401 ? "API key needed" : `error ${r.status}`;
      $("server-status").className = "status bad";
      return false;
    }
    state.defs = r.data;
    const sel = $("strategy");
    sel.replaceChildren(...r.data.strategies.map((s) => el("option", { value: s.name, text: s.name })));
    if (r.data.selectors && r.data.selectors.length) {
      // Text selectors read the question and the passages' texts: the
      // evidence selector keeps sentences, highlighted in the list.
      sel.append(el("optgroup", { label: "text selectors (read the question and texts)" },
        ...r.data.selectors.map((s) => el("option", { value: s.name, text: s.name }))));
    }
    // Both defaults' parameters fill their inputs: the select default's
    // (the strategy the page starts on) and ask's (the evidence selector's
    // budget, which it cannot run without).
    const fill = (spec) => {
      const [name, args] = spec.split(":");
      const stored = (state.values[name] ||= {});
      for (const kv of (args || "").split(",").filter(Boolean)) {
        const [k, v] = kv.split("=");
        if (stored[k] === undefined) stored[k] = v;
      }
      return name;
    };
    if (r.data.default) fill(r.data.default);
    if (!state.strategy) {
      // The page selects: it starts from /v1/select's default.
      state.strategy = fill(r.data.select_default || r.data.default);
    }
    sel.value = state.strategy;
    renderParams();
    return true;
  }

  async function start() {
    $("controls").addEventListener("submit", (e) => { e.preventDefault(); runSelect(); });
    $("strategy").addEventListener("change", (e) => { state.strategy = e.target.value; state.chosen = true; renderParams(); runSelect(); });
    $("order").addEventListener("change", () => runSelect());
    $("candidates").addEventListener("input", () => schedule(600));
    $("ask").addEventListener("click", runAsk);
    $("question").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); runAsk(); } });
    $("demo").addEventListener("click", async () => { await loadDemo(); runSelect(); });
    $("key-button").addEventListener("click", askForKey);
    $("zoom").addEventListener("change", (e) => {
      state.zoom = e.target.checked;
      if (state.last) drawChart(state.last.ex, state.last.goldByRank, state.last.k);
    });
    $("candidates").addEventListener("input", () => { $("candidates-note").textContent = ""; });
    $("key-dialog").addEventListener("close", async () => {
      if ($("key-dialog").returnValue !== "ok") return;
      state.key = $("key-input").value.trim();
      sessionStorage.setItem(KEY_STORE, state.key);
      if (await loadStrategies()) { setStatus(); runSelect(); }
    });

    try {
      const h = await fetch("/healthz");
      $("server-status").textContent = h.ok ? "server ok" : `server ${h.status}`;
      $("server-status").className = h.ok ? "status ok" : "status bad";
    } catch (_) {
      $("server-status").textContent = "server unreachable";
      $("server-status").className = "status bad";
    }
    await loadDemo();
    if (await loadStrategies()) runSelect();
  }

  function setStatus() {
    $("server-status").textContent = "server ok";
    $("server-status").className = "status ok";
  }

  start();
})();
