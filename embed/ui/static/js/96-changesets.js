// A change set's page follows the set while it may move on by itself
// (waiting for approval, approved, running): every 2 seconds, while the
// page is shown, it asks GET /api/change-sets/{id} for the state of the
// set and of each device (already in the page's language) and writes
// each device's state and stage, and the counts, in place. When the
// set's own state changes, what the page shows changes with it (the
// forms, each device's result, the backups), so it loads itself again.
// It stops once the set has ended, after MAX_MS, or when the session or
// the permission is gone. Without this script the page is the same, as
// of when it was loaded.
(function () {
  "use strict";

  var POLL_MS = 2000;
  var MAX_BACKOFF_MS = 30000;
  var MAX_MS = 6 * 60 * 60 * 1000;

  // The badge of each device state, as the page draws it (labels.go).
  var BADGES = {
    pending: "device-badge-off",
    queued: "device-badge-running",
    running: "device-badge-running",
    succeeded: "device-badge-ok",
    failed: "device-badge-bad",
    skipped: "device-badge-off",
    interrupted: "device-badge-bad"
  };
  var ORDER = ["pending", "queued", "running", "succeeded", "failed", "skipped", "interrupted"];

  function badge(state, text) {
    var span = document.createElement("span");
    span.className = "device-badge " + (BADGES[state] || "device-badge-bad");
    span.textContent = text;
    return span;
  }

  function setup() {
    var box = document.getElementById("changeset-status");
    if (!box || !box.hasAttribute("data-live") || !window.backupd) {
      return;
    }
    var url = box.getAttribute("data-api");
    var state = box.getAttribute("data-state");
    var counts = document.getElementById("changeset-counts");
    var started = Date.now();
    var failures = 0;
    var timer = 0;

    function schedule(ms) {
      window.clearTimeout(timer);
      if (Date.now() - started < MAX_MS) {
        timer = window.setTimeout(poll, ms);
      }
    }

    function showTargets(targets) {
      var labels = {};
      targets.forEach(function (t) {
        labels[t.state] = t.state_text;
        var row = document.querySelector('#changeset-targets tr[data-target="' + t.id + '"]');
        if (!row) {
          return;
        }
        var stage = row.querySelector('[data-role="stage"]');
        if (stage) {
          stage.textContent = t.stage_text || "";
        }
        if (row.getAttribute("data-state") === t.state) {
          return;
        }
        row.setAttribute("data-state", t.state);
        var old = row.querySelector('[data-role="state"]');
        if (old) {
          var b = badge(t.state, t.state_text);
          b.setAttribute("data-role", "state");
          old.replaceWith(b);
        }
      });
      return labels;
    }

    function showCounts(byState, labels) {
      if (!counts) {
        return;
      }
      counts.querySelectorAll("li[data-state]").forEach(function (li) {
        var s = li.getAttribute("data-state");
        if (labels[s] === undefined) {
          labels[s] = li.querySelector(".device-badge").textContent;
        }
      });
      var items = [];
      ORDER.forEach(function (s) {
        if (!byState[s]) {
          return;
        }
        var li = document.createElement("li");
        li.setAttribute("data-state", s);
        li.appendChild(badge(s, labels[s] || s));
        li.appendChild(document.createTextNode(" "));
        var n = document.createElement("span");
        n.className = "cs-count";
        n.textContent = String(byState[s]);
        li.appendChild(n);
        items.push(li);
      });
      counts.replaceChildren.apply(counts, items);
    }

    function poll() {
      if (document.hidden) {
        document.addEventListener("visibilitychange", poll, { once: true });
        return;
      }
      window.backupd.api("GET", url).then(function (data) {
        failures = 0;
        if (data.state !== state) {
          // The notice of the form that led here has been read.
          var next = new URL(window.location.href);
          next.searchParams.delete("done");
          window.location.replace(next.toString());
          return;
        }
        showCounts(data.counts || {}, showTargets(data.targets || []));
        if (data.live) {
          schedule(POLL_MS);
        }
      }).catch(function (err) {
        failures++;
        // Signed out, the permission taken away, or the set gone:
        // reloading is the only way on.
        if (err.status === 401 || err.status === 403 || err.status === 404) {
          return;
        }
        schedule(Math.min(POLL_MS * Math.pow(2, failures), MAX_BACKOFF_MS));
      });
    }
    schedule(POLL_MS);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
