// A restore's page follows the restore while it is open: every 2
// seconds, while the page is shown, it asks GET /api/restores/{id} for
// its state and stage (already in the page's language) and writes the
// stage in place. When the state changes, what the page shows changes
// with it (the preview, the forms, the result), so it loads itself
// again. It stops once the restore has ended, after MAX_MS, or when the
// session or the permission is gone. Without this script the page is the
// same, as of when it was loaded.
(function () {
  "use strict";

  var POLL_MS = 2000;
  var MAX_BACKOFF_MS = 30000;
  var MAX_MS = 2 * 60 * 60 * 1000;

  function setup() {
    var box = document.getElementById("restore-status");
    if (!box || !box.hasAttribute("data-open") || !window.backupd) {
      return;
    }
    var url = box.getAttribute("data-api");
    var state = box.getAttribute("data-state");
    var stateEl = document.getElementById("restore-state");
    var stageEl = document.getElementById("restore-stage");
    var started = Date.now();
    var failures = 0;
    var timer = 0;

    function schedule(ms) {
      window.clearTimeout(timer);
      if (Date.now() - started < MAX_MS) {
        timer = window.setTimeout(poll, ms);
      }
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
        if (stateEl) {
          stateEl.textContent = data.state_text;
        }
        if (stageEl) {
          stageEl.textContent = data.stage_text || "";
        }
        if (data.open) {
          schedule(POLL_MS);
        }
      }).catch(function (err) {
        failures++;
        // Signed out, the permission taken away, or the restore gone:
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
