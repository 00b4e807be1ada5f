// backupd web interface: small progressive enhancements. Every page works
// without this file; nothing here is inline (the CSP allows only this
// origin's scripts).
(function () {
  "use strict";

  var root = document.documentElement;
  root.classList.add("js");

  // The navigation folds behind a button on narrow screens.
  function setupNav() {
    var toggle = document.querySelector(".nav-toggle");
    var nav = document.getElementById("sidenav");
    if (!toggle || !nav) {
      return;
    }
    toggle.hidden = false;
    function setOpen(open) {
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      nav.classList.toggle("open", open);
    }
    toggle.addEventListener("click", function () {
      setOpen(toggle.getAttribute("aria-expanded") !== "true");
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && toggle.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        toggle.focus();
      }
    });
  }

  // Forms with data-confirm ask before they submit.
  function setupConfirm() {
    document.addEventListener("submit", function (e) {
      var form = e.target;
      var msg = form.getAttribute && form.getAttribute("data-confirm");
      if (msg && !window.confirm(msg)) {
        e.preventDefault();
      }
    });
  }

  // A submitted form's button is disabled until the answer comes, so a
  // double click does not send it twice.
  function setupSubmitOnce() {
    document.addEventListener("submit", function (e) {
      if (e.defaultPrevented) {
        return;
      }
      var button = e.submitter;
      if (button && button.form === e.target) {
        window.setTimeout(function () {
          button.disabled = true;
          button.setAttribute("data-busy", "");
        }, 0);
      }
    });
    // Coming back through the history shows the page as it was left.
    window.addEventListener("pageshow", function (e) {
      if (e.persisted) {
        document.querySelectorAll("button[data-busy]").forEach(function (b) {
          b.disabled = false;
          b.removeAttribute("data-busy");
        });
      }
    });
  }

  // backupd.api calls the internal /api/ with the session's CSRF token and
  // returns a promise of the parsed JSON (or null for 204). Errors reject
  // with the error envelope's message.
  function api(method, url, body) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    var headers = { "Accept": "application/json" };
    if (meta) {
      headers["X-CSRF-Token"] = meta.getAttribute("content");
    }
    var init = { method: method, headers: headers, credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (res) {
      if (res.status === 204) {
        return null;
      }
      return res.json().then(function (data) {
        if (!res.ok) {
          var err = new Error((data && data.error && data.error.message) || res.statusText);
          err.status = res.status;
          err.code = data && data.error && data.error.code;
          throw err;
        }
        return data;
      });
    });
  }

  window.backupd = { api: api };

  // A table wider than its box: the box's classes more-left and
  // more-right say which edges have more to scroll to (the stylesheet
  // shades them), kept up to date as it scrolls and as its size changes.
  var wrapSizes = window.ResizeObserver ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { markWrap(entry.target); });
  }) : null;

  function markWrap(wrap) {
    var max = wrap.scrollWidth - wrap.clientWidth;
    wrap.classList.toggle("more-left", max > 1 && wrap.scrollLeft > 1);
    wrap.classList.toggle("more-right", max > 1 && wrap.scrollLeft < max - 1);
  }

  function setupTableWraps() {
    document.querySelectorAll(".table-wrap:not([data-watched])").forEach(function (wrap) {
      wrap.setAttribute("data-watched", "");
      wrap.addEventListener("scroll", function () { markWrap(wrap); }, { passive: true });
      if (wrapSizes) {
        wrapSizes.observe(wrap);
      }
      markWrap(wrap);
    });
  }

  // Parts of a page marked data-live (each with an id) follow a backup
  // that is queued or running, marked data-job. While one is, and the
  // page is shown, the page asks the server for itself every
  // LIVE_POLL_MS and puts in place each part that changed, so a row or a
  // summary goes from "queued" to "running" to the backup's result with
  // no reload. It stops when no part names an active job, after
  // LIVE_MAX_MS, or after LIVE_MAX_FAILURES failed asks in a row.
  // Checkboxes and radio buttons keep what the user chose. A
  // "backupd:live" event tells other scripts that parts were replaced.
  var LIVE_POLL_MS = 2000;
  var LIVE_MAX_MS = 30 * 60 * 1000;
  var LIVE_MAX_FAILURES = 5;

  function keepChoices(old, fresh) {
    old.querySelectorAll('input[type="checkbox"], input[type="radio"]').forEach(function (box) {
      if (!box.name) {
        return;
      }
      var same = fresh.querySelector('input[name="' + CSS.escape(box.name) + '"][value="' + CSS.escape(box.value) + '"]');
      if (same && (box.type === "checkbox" || box.checked)) {
        same.checked = box.checked;
      }
    });
  }

  function setupLive() {
    if (!document.querySelector("[data-live][id] [data-job], [data-live][id][data-job]")) {
      return;
    }
    var started = Date.now();
    var failures = 0;
    var timer = 0;
    // What the server last sent of each part: other scripts mark parts
    // (a table's scroll edges), which must not count as a change.
    var sent = {};
    document.querySelectorAll("[data-live][id]").forEach(function (part) {
      sent[part.id] = part.outerHTML;
    });

    function schedule(ms) {
      window.clearTimeout(timer);
      if (Date.now() - started < LIVE_MAX_MS) {
        timer = window.setTimeout(poll, ms);
      }
    }

    function apply(html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var replaced = 0;
      document.querySelectorAll("[data-live][id]").forEach(function (part) {
        var next = doc.getElementById(part.id);
        if (!next || !next.hasAttribute("data-live") || next.outerHTML === sent[part.id]) {
          return;
        }
        sent[part.id] = next.outerHTML;
        var fresh = document.importNode(next, true);
        keepChoices(part, fresh);
        part.replaceWith(fresh);
        replaced++;
      });
      if (replaced) {
        document.dispatchEvent(new CustomEvent("backupd:live"));
      }
      return !!doc.querySelector("[data-live][id] [data-job], [data-live][id][data-job]");
    }

    function poll() {
      if (document.hidden) {
        document.addEventListener("visibilitychange", poll, { once: true });
        return;
      }
      fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (res) {
        if (!res.ok) {
          throw new Error(res.statusText);
        }
        return res.text();
      }).then(function (html) {
        failures = 0;
        if (apply(html)) {
          schedule(LIVE_POLL_MS);
        }
      }).catch(function () {
        failures++;
        if (failures < LIVE_MAX_FAILURES) {
          schedule(LIVE_POLL_MS * Math.pow(2, failures));
        }
      });
    }
    schedule(LIVE_POLL_MS);
  }

  function init() {
    setupNav();
    setupConfirm();
    setupSubmitOnce();
    setupLive();
    setupTableWraps();
    document.addEventListener("backupd:live", setupTableWraps);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
