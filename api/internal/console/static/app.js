// The seckill merchant console: plain JavaScript against the gateway's merchant API
// (docs/API.md). No build step, no dependencies. State is kept in `state` (also read by
// the console's browser test through window.consoleState).
"use strict";

const state = {
  token: sessionStorage.getItem("seckill-merchant-token") || "",
  page: 1,
  size: 10,
  total: 0,
  watching: null,   // activity id
  history: [],      // {t, redis: {remaining, locked, sold} | null, db: {available, locked, sold}}
  rate: 0,
  pollTimer: null,
  reconcileTimer: null,
  // Reconciliation reads every order of the activity: on demand ("Reconcile now") and every
  // 30 s while watching, not on every poll.
  reconcileEveryMs: 30000,
  reconciled: 0,    // reconciliations answered since the watch began
  editing: null,    // the activity being edited (sale day)
  watched: null,    // the watched activity as last read
};
window.consoleState = state;

const $ = (sel) => document.querySelector(sel);

function show(text, isError) {
  const m = $("#message");
  m.textContent = text;
  m.className = "message " + (isError ? "error" : "ok");
}

// api calls the gateway; a non-2xx answer becomes an Error carrying the API's code word
// and message ({"code", "msg"}), shown as is.
async function api(method, path, body) {
  const opts = { method, headers: { "Authorization": "Bearer " + state.token } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, opts);
  } catch (e) {
    throw new Error("the gateway did not answer: " + e.message);
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    const code = data && data.code ? data.code : "HTTP " + resp.status;
    const msg = data && data.msg ? data.msg : text;
    const err = new Error(code + ": " + msg);
    err.code = code;
    throw err;
  }
  return data;
}

async function guarded(fn) {
  try {
    await fn();
  } catch (e) {
    show(e.message, true);
  }
}

function fmtTime(unix) {
  const d = new Date(unix * 1000);
  return d.toLocaleString();
}

function toUnix(localValue) {
  return Math.floor(new Date(localValue).getTime() / 1000);
}

function toLocalInput(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) +
    "T" + pad(date.getHours()) + ":" + pad(date.getMinutes());
}

// ---- activities ----

async function loadActivities() {
  const list = await api("GET", "/v1/admin/activities?page=" + state.page + "&size=" + state.size);
  state.total = list.total;
  const rows = $("#activity-rows");
  rows.textContent = "";
  for (const a of list.activities) {
    const tr = document.createElement("tr");
    tr.dataset.id = a.activity_id;
    for (const v of [a.activity_id, a.name, a.sku_id, a.stock, fmtTime(a.start_time), fmtTime(a.end_time), a.per_user_limit,
      a.price]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const warm = document.createElement("button");
    warm.textContent = "Warm up";
    warm.className = "warm";
    warm.onclick = () => guarded(() => warmup(a.activity_id));
    const watch = document.createElement("button");
    watch.textContent = "Watch";
    watch.className = "watch";
    watch.onclick = () => startWatch(a);
    td.append(warm, " ", watch, " ", editButton(a));
    tr.appendChild(td);
    rows.appendChild(tr);
  }
  const pages = Math.max(1, Math.ceil(list.total / state.size));
  $("#page-info").textContent = "page " + list.page + " of " + pages + " (" + list.total + " activities)";
  $("#prev").disabled = state.page <= 1;
  $("#next").disabled = state.page >= pages;
}

// activityBody is what create and edit both send, from a form with create's fields (stock
// aside: create sends it, an edit leaves it out).
function activityBody(f) {
  return {
    sku_id: Number(f.get("sku_id")),
    name: String(f.get("name")),
    start_time: toUnix(f.get("start_time")),
    end_time: toUnix(f.get("end_time")),
    per_user_limit: Number(f.get("per_user_limit")),
    pay_timeout_seconds: Number(f.get("pay_timeout_seconds")),
    draw_seconds: Number(f.get("draw_seconds")),
    price: Number(f.get("price")),
  };
}

async function createActivity(form) {
  const f = new FormData(form);
  const body = { ...activityBody(f), stock: Number(f.get("stock")) };
  const a = await api("POST", "/v1/admin/activities", body);
  show("created activity " + a.activity_id + " (" + a.name + ", stock " + a.stock + ")", false);
  state.page = 1;
  await loadActivities();
}

async function warmup(id) {
  const r = await api("POST", "/v1/admin/activities/" + id + "/warmup");
  show("activity " + id + (r.warmed ? " warmed up" : " was already warm") + ": remaining " + r.remaining, false);
  if (state.watching === id) await poll();
}

async function adjust(id, delta) {
  const r = await api("POST", "/v1/admin/activities/" + id + "/stock", { delta });
  show("activity " + id + ": stock " + (delta > 0 ? "+" : "") + delta + ", total " + r.total +
    ", remaining " + r.remaining, false);
  await poll();
  setTimeout(() => guarded(loadAdjustments), 1500); // the history is MySQL's, once the writer applied it
}

// ---- the live sale ----

function startWatch(a) {
  stopWatch();
  state.watching = a.activity_id;
  state.history = [];
  state.rate = 0;
  $("#watch").hidden = false;
  $("#watch-title").textContent = "#" + a.activity_id + " " + a.name;
  poll();
  reconcile();
  state.pollTimer = setInterval(() => poll(), 1000);
  state.reconcileTimer = setInterval(() => reconcile(), state.reconcileEveryMs);
  state.reconciled = 0;
  guarded(loadAdjustments);
}

function stopWatch() {
  clearInterval(state.pollTimer);
  clearInterval(state.reconcileTimer);
  state.watching = null;
  $("#watch").hidden = true;
}

async function poll() {
  const id = state.watching;
  if (!id) return;
  let a;
  try {
    a = await api("GET", "/v1/admin/activities/" + id);
  } catch (e) {
    show(e.message, true);
    return;
  }
  if (state.watching !== id) return;
  const point = { t: Date.now() / 1000, redis: a.redis, db: a.db };
  const prev = state.history[state.history.length - 1];
  state.history.push(point);
  if (state.history.length > 600) state.history.shift();
  // Reservations/s: units leaving remaining per second (reservations minus stock coming
  // back from cancels and expiries), from the last two samples.
  if (prev && prev.redis && point.redis && point.t > prev.t) {
    const taken = (point.redis.locked + point.redis.sold) - (prev.redis.locked + prev.redis.sold);
    state.rate = Math.max(0, taken) / (point.t - prev.t);
  }
  const r = a.redis;
  $("#redis-remaining").textContent = r ? r.remaining : "not warm";
  $("#redis-locked").textContent = r ? r.locked : "-";
  $("#redis-sold").textContent = r ? r.sold : "-";
  $("#db-available").textContent = a.db.available;
  $("#db-locked").textContent = a.db.locked;
  $("#db-sold").textContent = a.db.sold;
  $("#rate").textContent = state.rate.toFixed(1);
  // The opening draw (absent for an activity without one), live as the poll goes.
  const d = a.draw;
  $("#draw-status").textContent = d ? d.status + " (" + d.seconds + " s window)" : "none";
  $("#draw-entries").textContent = d ? d.entries : "-";
  $("#draw-winners").textContent = d ? d.winners : "-";
  showSaleDay(a);
  draw();
}

async function reconcile() {
  const id = state.watching;
  if (!id) return;
  let r;
  try {
    r = await api("GET", "/v1/admin/activities/" + id + "/reconcile");
  } catch (e) {
    show(e.message, true);
    return;
  }
  const s = $("#reconcile-status");
  s.textContent = r.status;
  s.className = "status-" + r.status;
  $("#reconcile-inflight").textContent = r.in_flight;
  $("#reconcile-at").textContent = new Date().toLocaleTimeString();
  state.reconciled += 1;
  const ul = $("#reconcile-diffs");
  ul.textContent = "";
  for (const d of r.diffs.slice(0, 10)) {
    const li = document.createElement("li");
    li.textContent = d;
    ul.appendChild(li);
  }
}

const series = [
  { label: "redis remaining", color: "#1f77b4", get: (p) => p.redis && p.redis.remaining, dash: [] },
  { label: "redis locked", color: "#ff7f0e", get: (p) => p.redis && p.redis.locked, dash: [] },
  { label: "redis sold", color: "#2ca02c", get: (p) => p.redis && p.redis.sold, dash: [] },
  { label: "mysql available", color: "#1f77b4", get: (p) => p.db.available, dash: [6, 4] },
  { label: "mysql locked", color: "#ff7f0e", get: (p) => p.db.locked, dash: [6, 4] },
  { label: "mysql sold", color: "#2ca02c", get: (p) => p.db.sold, dash: [6, 4] },
];

function draw() {
  const c = $("#chart");
  const g = c.getContext("2d");
  const w = c.width, h = c.height, pad = 40;
  g.clearRect(0, 0, w, h);
  const pts = state.history;
  if (pts.length === 0) return;
  let maxV = 1;
  for (const p of pts) for (const s of series) { const v = s.get(p); if (v != null) maxV = Math.max(maxV, v); }
  const t0 = pts[0].t, t1 = Math.max(pts[pts.length - 1].t, t0 + 1);
  const x = (t) => pad + (w - 2 * pad) * (t - t0) / (t1 - t0);
  const y = (v) => h - pad - (h - 2 * pad) * v / maxV;
  g.strokeStyle = "#ccc";
  g.setLineDash([]);
  g.beginPath(); g.moveTo(pad, pad / 2); g.lineTo(pad, h - pad); g.lineTo(w - pad / 2, h - pad); g.stroke();
  g.fillStyle = "#666";
  g.font = "11px sans-serif";
  g.fillText(String(maxV), 4, pad);
  g.fillText("0", 4, h - pad);
  g.fillText(Math.round(t1 - t0) + " s", w - pad - 20, h - pad + 16);
  for (const s of series) {
    g.strokeStyle = s.color;
    g.setLineDash(s.dash);
    g.lineWidth = 2;
    g.beginPath();
    let started = false;
    for (const p of pts) {
      const v = s.get(p);
      if (v == null) { started = false; continue; }
      if (!started) { g.moveTo(x(p.t), y(v)); started = true; } else { g.lineTo(x(p.t), y(v)); }
    }
    g.stroke();
  }
  state.drawn = pts.length;
}

// ---- sale day: edit before the start, end now, stock history, reconcile on demand ----

// editButton is the list row's "Edit" button: offered only before the activity's start (the
// gateway answers 409 STARTED after, which is shown like any error).
function editButton(a) {
  const b = document.createElement("button");
  b.textContent = "Edit";
  b.className = "edit";
  b.disabled = a.start_time <= Date.now() / 1000;
  b.title = b.disabled ? "the sale has started: it can no longer be edited" : "edit before the start";
  b.onclick = () => openEdit(a);
  return b;
}

function openEdit(a) {
  state.editing = a;
  const f = $("#edit-form");
  f.sku_id.value = a.sku_id;
  f.name.value = a.name;
  f.start_time.value = toLocalInput(new Date(a.start_time * 1000));
  f.end_time.value = toLocalInput(new Date(a.end_time * 1000));
  f.per_user_limit.value = a.per_user_limit;
  f.pay_timeout_seconds.value = a.pay_timeout_seconds;
  f.draw_seconds.value = a.draw_seconds || 0;
  f.price.value = a.price || 0;
  $("#edit-title").textContent = "#" + a.activity_id + " " + a.name;
  $("#edit").hidden = false;
}

function closeEdit() {
  state.editing = null;
  $("#edit").hidden = true;
}

// saveEdit sends PUT /v1/admin/activities/{id} with create's fields (stock left out: it
// changes with "Adjust stock").
async function saveEdit(form) {
  const a = state.editing;
  if (!a) return;
  const e = await api("PUT", "/v1/admin/activities/" + a.activity_id, activityBody(new FormData(form)));
  show("edited activity " + e.activity_id + " (" + e.name + ", starts " + fmtTime(e.start_time) +
    ", limit " + e.per_user_limit + ", price " + e.price + ")", false);
  closeEdit();
  await loadActivities();
}

// askEnd opens the confirmation dialog; only its "End the sale" button ends the sale.
function askEnd() {
  if (!state.watching) return;
  $("#end-question").textContent = "End the sale of activity #" + state.watching + " now?";
  $("#end-dialog").showModal();
}

async function endNow() {
  $("#end-dialog").close();
  const id = state.watching;
  if (!id) return;
  const a = await api("POST", "/v1/admin/activities/" + id + "/end");
  show("activity " + id + " ended at " + fmtTime(a.end_time), false);
  await poll();
  await loadActivities();
}

// loadAdjustments shows the watched activity's stock history (GET .../adjustments, newest
// first, as MySQL holds it).
async function loadAdjustments() {
  const id = state.watching;
  if (!id) return;
  const r = await api("GET", "/v1/admin/activities/" + id + "/adjustments");
  if (state.watching !== id) return;
  const rows = $("#adjustment-rows");
  rows.textContent = "";
  for (const j of r.adjustments) {
    const tr = document.createElement("tr");
    for (const v of [fmtTime(j.created_at), (j.delta > 0 ? "+" : "") + j.delta, j.total]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    rows.appendChild(tr);
  }
  if (r.adjustments.length === 0) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 3;
    td.textContent = "no stock changes";
    tr.appendChild(td);
    rows.appendChild(tr);
  }
}

// showSaleDay shows the watched activity's price and end, from each poll.
function showSaleDay(a) {
  state.watched = a;
  $("#watch-price").textContent = a.price;
  $("#watch-end").textContent = fmtTime(a.end_time) + (a.end_time <= Date.now() / 1000 ? " (ended)" : "");
  $("#end-button").disabled = a.end_time <= Date.now() / 1000;
}

function wireSaleDay() {
  $("#edit-form").onsubmit = (ev) => { ev.preventDefault(); guarded(() => saveEdit(ev.target)); };
  $("#edit-cancel").onclick = closeEdit;
  $("#end-button").onclick = askEnd;
  $("#end-confirm").onclick = () => guarded(endNow);
  $("#end-keep").onclick = () => $("#end-dialog").close();
  $("#reconcile-button").onclick = () => guarded(reconcile);
  $("#adjustments-refresh").onclick = () => guarded(loadAdjustments);
}

// ---- wiring ----

function init() {
  $("#token").value = state.token;
  const now = new Date();
  $("#create-form").start_time.value = toLocalInput(now);
  $("#create-form").end_time.value = toLocalInput(new Date(now.getTime() + 3600 * 1000));
  $("#save-token").onclick = () => {
    state.token = $("#token").value.trim();
    sessionStorage.setItem("seckill-merchant-token", state.token);
    guarded(async () => { await loadActivities(); show("token accepted: " + state.total + " activities", false); });
  };
  $("#refresh").onclick = () => guarded(loadActivities);
  $("#prev").onclick = () => { state.page = Math.max(1, state.page - 1); guarded(loadActivities); };
  $("#next").onclick = () => { state.page += 1; guarded(loadActivities); };
  $("#create-form").onsubmit = (ev) => { ev.preventDefault(); guarded(() => createActivity(ev.target)); };
  $("#warm-button").onclick = () => guarded(() => warmup(state.watching));
  $("#adjust-button").onclick = () => guarded(() => adjust(state.watching, Number($("#delta").value)));
  $("#stop-watch").onclick = stopWatch;
  wireSaleDay();
  if (state.token) guarded(loadActivities);
  state.ready = true;
}

init();
