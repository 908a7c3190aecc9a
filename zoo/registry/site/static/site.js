// zoo site: sorts and filters the table of every build. It reads only the page itself; the
// fragment (#sort=time, #sort=-sram, #q=mnist) chooses the order and the filter, so a link keeps them.
(function () {
  "use strict";
  var table = document.getElementById("builds");
  if (!table) { return; }
  var body = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var input = document.getElementById("filter");
  var shown = document.getElementById("shown");
  var state = { sort: "", q: "" };

  function value(row, i, numeric) {
    var cell = row.cells[i];
    var raw = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
    if (!numeric) { return raw.toLowerCase(); }
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function sort(spec) {
    var descending = spec.charAt(0) === "-";
    var key = descending ? spec.slice(1) : spec;
    var i = heads.findIndex(function (h) { return h.getAttribute("data-key") === key; });
    if (i < 0) { return false; }
    var numeric = heads[i].getAttribute("data-type") === "num";
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, n) { r.setAttribute("data-n", n); });
    rows.sort(function (a, b) {
      var x = value(a, i, numeric), y = value(b, i, numeric);
      var tie = a.getAttribute("data-n") - b.getAttribute("data-n");  // ties keep their order
      if (x === null || y === null) { return x === y ? tie : (x === null ? 1 : -1); }  // unknowns last
      if (x === y) { return tie; }
      var order = x < y ? -1 : 1;
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
    heads[i].setAttribute("aria-sort", descending ? "descending" : "ascending");
    state.sort = spec;
    return true;
  }

  function filter(q) {
    var words = q.toLowerCase().split(/\s+/).filter(Boolean);
    var rows = body.rows, visible = 0;
    for (var n = 0; n < rows.length; n++) {
      var text = rows[n].textContent.toLowerCase();
      var keep = words.every(function (w) { return text.indexOf(w) >= 0; });
      rows[n].hidden = !keep;
      if (keep) { visible++; }
    }
    shown.textContent = visible + " of " + rows.length + " builds shown";
    state.q = q;
  }

  function remember() {
    var parts = [];
    if (state.sort) { parts.push("sort=" + encodeURIComponent(state.sort)); }
    if (state.q) { parts.push("q=" + encodeURIComponent(state.q)); }
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
  }

  function fromFragment() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (params.get("sort")) { sort(params.get("sort")); }
    var q = params.get("q") || "";
    input.value = q;
    filter(q);
  }

  heads.forEach(function (h) {
    h.querySelector("button").addEventListener("click", function () {
      var key = h.getAttribute("data-key");
      sort(state.sort === key ? "-" + key : key);
      remember();
    });
  });
  input.addEventListener("input", function () { filter(input.value); remember(); });
  window.addEventListener("hashchange", fromFragment);
  fromFragment();
})();
