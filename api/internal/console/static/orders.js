// The console's orders table: an activity's orders as MySQL holds them, page by page (GET
// /v1/admin/activities/{id}/orders, 50 a page, "More" follows next_cursor), with a status
// filter, and the same list as a CSV file (Accept: text/csv; the token goes in a header, so
// the file is fetched and handed to the browser as a download). Uses app.js's state, $, api,
// show and guarded. window.consoleOrders is read by the console's browser test.
"use strict";

const orders = { activity: 0, status: "", cursor: "", rows: 0, csvLines: 0 };
window.consoleOrders = orders;

function ordersPath() {
  const q = new URLSearchParams();
  if (orders.status) q.set("status", orders.status);
  return "/v1/admin/activities/" + orders.activity + "/orders" + (q.toString() ? "?" + q : "");
}

function pickOrders() {
  orders.activity = Number($("#orders-activity").value) || state.watching || 0;
  orders.status = $("#orders-status").value;
  if (orders.activity < 1) throw new Error("INVALID_ARGUMENT: give an activity id");
  $("#orders-activity").value = orders.activity;
}

// loadOrders shows the first page (more: the next one, below the rows shown).
async function loadOrders(more) {
  if (!more) {
    pickOrders();
    orders.cursor = "";
    orders.rows = 0;
    $("#order-rows").textContent = "";
  }
  const sep = ordersPath().includes("?") ? "&" : "?";
  const page = await api("GET", ordersPath() + sep + "size=50" +
    (orders.cursor ? "&cursor=" + encodeURIComponent(orders.cursor) : ""));
  const when = (s) => new Date(s * 1000).toLocaleString();
  for (const o of page.orders) {
    const tr = document.createElement("tr");
    for (const v of [o.order_no, o.uid, o.quantity, o.amount, o.status, o.trade_no, when(o.created_at),
      when(o.updated_at)]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    $("#order-rows").appendChild(tr);
  }
  orders.rows += page.orders.length;
  orders.cursor = page.next_cursor;
  $("#orders-more").disabled = !orders.cursor;
  show("activity " + orders.activity + ": " + orders.rows + " orders shown" + (orders.cursor ? " (more)" : ""), false);
}

async function downloadOrders() {
  pickOrders();
  let resp;
  try {
    resp = await fetch(ordersPath(), { headers: { "Authorization": "Bearer " + state.token, "Accept": "text/csv" } });
  } catch (e) {
    throw new Error("the gateway did not answer: " + e.message);
  }
  if (!resp.ok) {
    const data = await resp.json().catch(() => null);
    throw new Error((data && data.code ? data.code : "HTTP " + resp.status) + ": " + (data && data.msg ? data.msg : ""));
  }
  const text = await resp.text(); // a broken export rejects here: no file is offered
  orders.csvLines = text.split("\n").filter((l) => l !== "").length;
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  a.download = "activity-" + orders.activity + "-orders.csv";
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  show("activity " + orders.activity + ": CSV of " + (orders.csvLines - 1) + " orders", false);
}

$("#orders-show").onclick = () => guarded(() => loadOrders(false));
$("#orders-more").onclick = () => guarded(() => loadOrders(true));
$("#orders-csv").onclick = () => guarded(downloadOrders);
