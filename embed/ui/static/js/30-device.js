// Device version page: the "Copy" button puts the configuration text on
// the clipboard. Without JavaScript the button stays hidden; the text can
// still be selected or downloaded. Diff page: on a narrow screen a diff
// shown side by side only because no view was asked for is shown unified,
// and a gap of unchanged lines between changes opens on a click.
(function () {
  "use strict";

  function narrowDiff() {
    var table = document.querySelector("#diff-table[data-view-auto]");
    var unified = document.getElementById("diff-view-unified");
    if (table && unified && window.matchMedia("(max-width: 640px)").matches) {
      window.location.replace(unified.href);
    }
  }

  // A gap opens GAP_STEP lines at a time, those nearest a change first:
  // the end of a gap before a change, the start of the one after the last.
  var GAP_STEP = 200;

  function setupGaps() {
    var table = document.getElementById("diff-table");
    if (!table || !table.getAttribute("data-lines") || !window.backupd) {
      return;
    }
    var unified = table.classList.contains("device-diff-unified");
    var label = table.getAttribute("data-gap-label") || "{n}";

    function cell(cls, text) {
      var td = document.createElement("td");
      td.className = cls;
      td.textContent = text;
      return td;
    }

    function row(line, oldNo) {
      var tr = document.createElement("tr");
      var cls = "diff-ctx" + (line.noise ? " diff-noise" : "");
      if (unified) {
        tr.append(cell("device-ln", oldNo), cell("device-ln", line.no), cell(cls, line.text));
      } else {
        tr.append(cell("device-ln", oldNo), cell(cls, line.text), cell("device-ln", line.no), cell(cls, line.text));
      }
      return tr;
    }

    function open(gap, button) {
      var count = Number(gap.getAttribute("data-count"));
      var from = Number(gap.getAttribute("data-new"));
      var old = Number(gap.getAttribute("data-old"));
      var last = !gap.nextElementSibling;
      var take = Math.min(count, GAP_STEP);
      var start = last ? from : from + count - take;
      var text = gap.querySelector(".device-gap-text");
      button.disabled = true;
      window.backupd.api("GET", table.getAttribute("data-lines") + "?start=" + start + "&count=" + take).then(function (data) {
        var rows = document.createDocumentFragment();
        data.lines.forEach(function (line) {
          rows.append(row(line, old + line.no - from));
        });
        var left = count - take;
        if (last) {
          gap.before(rows);
          gap.setAttribute("data-new", String(from + take));
          gap.setAttribute("data-old", String(old + take));
        } else {
          gap.after(rows);
        }
        if (left <= 0 || data.lines.length < take) {
          gap.remove();
          return;
        }
        gap.setAttribute("data-count", String(left));
        text.textContent = label.replace("{n}", left.toLocaleString("en-US"));
        button.disabled = false;
      }).catch(function (err) {
        text.textContent = err.message;
        button.disabled = false;
      });
    }

    table.querySelectorAll("tr.device-gap").forEach(function (gap) {
      var button = gap.querySelector(".device-gap-open");
      button.hidden = false;
      button.addEventListener("click", function () { open(gap, button); });
    });
  }

  function setup() {
    narrowDiff();
    setupGaps();
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
