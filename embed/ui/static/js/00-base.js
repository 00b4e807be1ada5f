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

  function init() {
    setupNav();
    setupConfirm();
    setupSubmitOnce();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
