// Jobs page: live counts, progress and queue. Every 2 seconds while the
// page is visible it asks GET /api/jobs for what the page shows and puts
// the answer in place: the figures, the progress bar and, on the
// "queued and running" list, the rows (updated, added, removed, in the
// server's order, without disturbing a row that did not change). The
// server sends every text already translated and formatted. Cancel
// buttons send DELETE /api/jobs/{id} instead of reloading the page.
// Without this script the page is the same list with a Refresh link.
(function () {
  "use strict";

  var POLL_MS = 2000;
  var MAX_BACKOFF_MS = 30000;

  function setup() {
    var table = document.getElementById("jobs-table");
    var tbody = document.getElementById("jobs-rows");
    if (!table || !tbody || !window.backupd) {
      return;
    }
    var view = table.getAttribute("data-view");
    var device = table.getAttribute("data-device");
    var page = table.getAttribute("data-page");
    var live = document.getElementById("jobs-live");
    var progress = document.getElementById("job-progress");
    var since = progress ? progress.getAttribute("data-since") : "";
    var cancelTemplate = document.getElementById("job-cancel-template");
    var retryTemplate = document.getElementById("job-retry-template");
    var errorBox = document.getElementById("jobs-error");
    var withFinished = view !== "active";
    var timer = 0;
    var busy = false;
    var failures = 0;
    var stopped = false;

    function setLive(state) {
      if (!live) {
        return;
      }
      live.hidden = false;
      live.setAttribute("data-live", state);
      live.textContent = live.getAttribute("data-text-" + state) || "";
    }

    function apiURL() {
      var q = new URLSearchParams();
      q.set("state", view);
      if (device && device !== "0") {
        q.set("device", device);
      }
      if (page && page !== "1") {
        q.set("page", page);
      }
      if (since) {
        q.set("since", since);
      }
      return "/api/jobs?" + q.toString();
    }

    function schedule(ms) {
      window.clearTimeout(timer);
      if (!stopped) {
        timer = window.setTimeout(poll, ms);
      }
    }

    function poll() {
      if (document.hidden) {
        setLive("paused");
        return; // visibilitychange starts it again
      }
      if (busy) {
        return;
      }
      busy = true;
      window.backupd.api("GET", apiURL()).then(function (data) {
        failures = 0;
        setLive("live");
        apply(data);
      }).catch(function (err) {
        failures++;
        setLive("failed");
        // Signed out, or the permission was taken away: reloading is
        // the only way on.
        if (err.status === 401 || err.status === 403) {
          stopped = true;
        }
      }).then(function () {
        busy = false;
        schedule(failures ? Math.min(POLL_MS * Math.pow(2, failures), MAX_BACKOFF_MS) : POLL_MS);
      });
    }

    function num(n) {
      return Number(n).toLocaleString("en-US");
    }

    function apply(data) {
      Object.keys(data.counts).forEach(function (key) {
        var el = document.querySelector('#job-counts [data-count="' + key + '"]');
        if (el) {
          el.textContent = num(data.counts[key]);
        }
      });
      applyProgress(data.progress);
      var asOf = document.getElementById("jobs-as-of");
      if (asOf) {
        asOf.textContent = data.as_of_text;
        asOf.setAttribute("datetime", data.as_of);
      }
      var total = document.getElementById("jobs-total");
      if (total) {
        total.textContent = data.pager_text;
      }
      // Finished lists stay put while they are read; only the queue moves.
      if (view === "active") {
        applyRows(data.items);
      }
    }

    // A finished batch's figures stay shown until another batch starts.
    function applyProgress(p) {
      if (!progress || !p) {
        return;
      }
      progress.hidden = false;
      document.getElementById("job-progress-text").textContent = p.text;
      var bar = document.getElementById("job-progress-bar");
      bar.max = Math.max(p.total, 1);
      bar.value = p.done;
      since = p.complete ? "" : String(p.since);
    }

    function applyRows(items) {
      var keep = {};
      items.forEach(function (it, i) {
        var tr = tbody.querySelector('tr[data-job-id="' + it.id + '"]') || newRow(it);
        fill(tr, it);
        var at = tbody.children[i];
        if (at !== tr) {
          tbody.insertBefore(tr, at || null);
        }
        keep[String(it.id)] = true;
      });
      Array.prototype.slice.call(tbody.children).forEach(function (tr) {
        if (!keep[tr.getAttribute("data-job-id")]) {
          tr.remove();
        }
      });
      var empty = document.getElementById("jobs-empty");
      if (empty) {
        empty.hidden = items.length > 0;
      }
    }

    function cell(tr, tag, field, className) {
      var td = document.createElement(tag);
      if (className) {
        td.className = className;
      }
      if (field) {
        td.setAttribute("data-field", field);
      }
      tr.appendChild(td);
      return td;
    }

    // newRow builds a row as the server writes one.
    function newRow(it) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-job-id", String(it.id));
      var th = cell(tr, "th");
      th.scope = "row";
      var a = document.createElement("a");
      a.setAttribute("data-field", "device");
      th.appendChild(a);
      cell(tr, "td", "trigger");
      var state = document.createElement("span");
      state.setAttribute("data-field", "state");
      cell(tr, "td").appendChild(state);
      cell(tr, "td", "attempt", "nowrap");
      if (!withFinished) {
        cell(tr, "td", "queued", "nowrap");
      }
      cell(tr, "td", "started", "nowrap");
      if (withFinished) {
        cell(tr, "td", "finished", "nowrap");
      }
      cell(tr, "td", "duration", "num nowrap");
      cell(tr, "td", "result", "job-result");
      if (cancelTemplate) {
        cell(tr, "td", "action");
      }
      return tr;
    }

    function setText(tr, field, text) {
      var el = tr.querySelector('[data-field="' + field + '"]');
      if (el && el.textContent !== text) {
        el.textContent = text;
      }
      return el;
    }

    function fill(tr, it) {
      tr.setAttribute("data-state", it.state);
      var dev = setText(tr, "device", it.device_name);
      dev.setAttribute("href", it.device_url);
      setText(tr, "trigger", it.trigger_text);
      setText(tr, "state", it.state_text).className = "job-state state-" + it.state;
      setText(tr, "attempt", it.attempt_text);
      setText(tr, "queued", it.queued_text);
      setText(tr, "started", it.started_text);
      setText(tr, "finished", it.finished_text);
      setText(tr, "duration", it.duration_text);
      fillResult(tr.querySelector('[data-field="result"]'), it);
      fillAction(tr.querySelector('[data-field="action"]'), it);
    }

    // The result and action cells are rebuilt only when they change, so
    // that a focused button or link stays where it is.
    function fillResult(td, it) {
      var sig = [it.result_url || "", it.result_text, it.result_bad].join("\n");
      if (td.getAttribute("data-sig") === sig) {
        return;
      }
      td.setAttribute("data-sig", sig);
      td.textContent = "";
      var el;
      if (it.result_url) {
        el = document.createElement("a");
        el.href = it.result_url;
      } else {
        el = document.createElement("span");
        el.className = it.result_bad ? "error-text" : "muted";
      }
      el.textContent = it.result_text;
      td.appendChild(el);
    }

    function fillAction(td, it) {
      if (!td) {
        return;
      }
      var form = td.querySelector("form");
      if (it.cancel_url) {
        if (form && form.getAttribute("action") === it.cancel_url) {
          return;
        }
        td.textContent = "";
        var clone = cancelTemplate.content.cloneNode(true);
        clone.querySelector("form").setAttribute("action", it.cancel_url);
        td.appendChild(clone);
        return;
      }
      if (it.retry && retryTemplate) {
        var id = String(it.device_id);
        if (form && form.classList.contains("job-retry") && form.querySelector('input[name="id"]').value === id) {
          return;
        }
        td.textContent = "";
        var retry = retryTemplate.content.cloneNode(true);
        retry.querySelector('input[name="id"]').value = id;
        td.appendChild(retry);
        return;
      }
      td.textContent = "";
    }

    function showError(message) {
      if (!errorBox) {
        return;
      }
      errorBox.textContent = (errorBox.getAttribute("data-text-cancel-failed") || "{msg}").replace("{msg}", message);
      errorBox.hidden = false;
    }

    // Cancel without leaving the page. The base script has already asked
    // for a confirmation (data-confirm) and disabled the button.
    document.addEventListener("submit", function (e) {
      var form = e.target;
      if (e.defaultPrevented || !form.classList || !form.classList.contains("job-cancel")) {
        return;
      }
      var m = /^\/jobs\/(\d+)\/cancel$/.exec(form.getAttribute("action") || "");
      if (!m) {
        return;
      }
      e.preventDefault();
      if (errorBox) {
        errorBox.hidden = true;
      }
      window.backupd.api("DELETE", "/api/jobs/" + m[1]).catch(function (err) {
        showError(err.message);
        var button = form.querySelector("button");
        if (button) {
          button.disabled = false;
          button.removeAttribute("data-busy");
        }
      }).then(function () {
        schedule(0);
      });
    });

    document.addEventListener("visibilitychange", function () {
      if (document.hidden) {
        setLive("paused");
      } else {
        schedule(0);
      }
    });

    setLive(document.hidden ? "paused" : "live");
    schedule(POLL_MS);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
