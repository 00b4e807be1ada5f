// Device version page: the "Copy" button puts the configuration text on
// the clipboard. Without JavaScript the button stays hidden; the text can
// still be selected or downloaded. Diff page: on a narrow screen a diff
// shown side by side only because no view was asked for is shown unified.
(function () {
  "use strict";

  function narrowDiff() {
    var table = document.querySelector("#diff-table[data-view-auto]");
    var unified = document.getElementById("diff-view-unified");
    if (table && unified && window.matchMedia("(max-width: 640px)").matches) {
      window.location.replace(unified.href);
    }
  }

  function setup() {
    narrowDiff();
    var button = document.getElementById("version-copy");
    var status = document.getElementById("version-copy-status");
    if (!button || !status) {
      return;
    }
    // navigator.clipboard exists only on HTTPS and localhost; an appliance
    // reached over plain HTTP on its LAN address falls back to
    // execCommand, which works there.
    if (!(navigator.clipboard && window.isSecureContext) && !document.queryCommandSupported("copy")) {
      return;
    }
    button.hidden = false;
    var label = button.textContent;
    var timer = 0;

    // Success shows on the button (and is read out from the status
    // region); a failure, which says what to do, shows beside it.
    function say(text, failed) {
      status.textContent = text;
      status.classList.toggle("device-copy-error", !!failed);
      status.classList.toggle("visually-hidden", !failed);
      button.textContent = failed ? label : text;
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        button.textContent = label;
        status.textContent = "";
        status.classList.add("visually-hidden");
      }, failed ? 8000 : 2000);
    }

    // The text: the page's own when it shows all of it, else the full
    // text from the server.
    function text() {
      var url = button.getAttribute("data-copy-url");
      if (url) {
        return fetch(url, { credentials: "same-origin" }).then(function (res) {
          if (!res.ok) {
            throw new Error(res.statusText);
          }
          return res.text();
        });
      }
      var source = document.getElementById(button.getAttribute("data-copy-source"));
      return Promise.resolve(source ? source.textContent : "");
    }

    function fallbackCopy(value) {
      var area = document.createElement("textarea");
      area.value = value;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } finally {
        document.body.removeChild(area);
      }
      if (!ok) {
        throw new Error("copy refused");
      }
    }

    button.addEventListener("click", function () {
      text().then(function (value) {
        if (navigator.clipboard && window.isSecureContext) {
          return navigator.clipboard.writeText(value);
        }
        fallbackCopy(value);
      }).then(function () {
        say(button.getAttribute("data-copied"), false);
      }, function () {
        say(button.getAttribute("data-copy-failed"), true);
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
