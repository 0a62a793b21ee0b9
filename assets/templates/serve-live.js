// rtscope serve: a monitor's page follows its windows as they land.
// The server sends an event `windows` (server-sent events, from the
// address in the page's data-events) each time new windows are stored;
// this adds them at the top of the table and reloads the plot. Without
// this script the page shows what was stored when it was loaded. Text
// from the store is only ever set as text (textContent), never parsed.
"use strict";
(function () {
  var root = document.getElementById("live");
  if (!root || !window.EventSource) {
    return;
  }
  var plot = document.getElementById("live-plot");
  var body = document.querySelector("#windows tbody");
  var status = document.getElementById("live-status");
  var keep = parseInt(root.getAttribute("data-rows"), 10) || 20;
  var base = root.getAttribute("data-plot");
  var columns = ["end", "host", "who", "samples", "missed", "p99", "max"];
  var numeric = { end: true, samples: true, missed: true, p99: true, max: true };
  var source = new EventSource(root.getAttribute("data-events"));
  root.setAttribute("data-updates", "0");
  source.addEventListener("windows", function (e) {
    var d = JSON.parse(e.data);
    d.windows.forEach(function (w) {
      var tr = document.createElement("tr");
      columns.forEach(function (k) {
        var td = document.createElement("td");
        td.textContent = w[k];
        if (numeric[k]) {
          td.className = "num";
        }
        tr.appendChild(td);
      });
      body.insertBefore(tr, body.firstChild);
    });
    while (body.rows.length > keep) {
      body.deleteRow(body.rows.length - 1);
    }
    plot.src = base + (base.indexOf("?") < 0 ? "?" : "&") + "v=" + d.last_end_unix_ns;
    plot.hidden = false;
    status.textContent = d.status;
    var n = parseInt(root.getAttribute("data-updates"), 10) + 1;
    root.setAttribute("data-updates", String(n));
  });
  source.addEventListener("failure", function (e) {
    status.textContent = "the store could not be read: " + e.data;
  });
  source.onerror = function () {
    status.textContent = "connection to the server lost: retrying";
  };
})();
