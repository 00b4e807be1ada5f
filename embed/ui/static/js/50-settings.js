// Schedules page: the target choices that apply show, the preview of the
// next runs follows the cron field as it is typed, and devices can be
// found by name. Without this script the form still works: every choice
// shows, and the Preview button asks the server.
(function () {
  "use strict";

  // debounce runs fn once typing has paused for ms.
  function debounce(fn, ms) {
    var timer = null;
    return function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(fn, ms);
    };
  }

  // Only the panel of the chosen target shows.
  function setupTargets(form) {
    var radios = form.querySelectorAll('input[name="target"]');
    var panels = form.querySelectorAll("[data-target-panel]");
    function update() {
      var chosen = "";
      radios.forEach(function (r) {
        if (r.checked) {
          chosen = r.value;
        }
      });
      panels.forEach(function (p) {
        p.hidden = p.getAttribute("data-target-panel") !== chosen;
      });
    }
    radios.forEach(function (r) {
      r.addEventListener("change", update);
    });
    update();
  }

  // The preview asks the server for the next runs of what is typed; an
  // answer to an older question is dropped.
  function setupPreview(form) {
    var box = document.getElementById("schedule-preview");
    var cron = document.getElementById("sched-cron");
    var tz = document.getElementById("sched-tz");
    if (!box || !cron || !tz) {
      return;
    }
    var desc = document.getElementById("preview-description");
    var runs = document.getElementById("preview-runs");
    var error = document.getElementById("preview-error");
    var zone = document.getElementById("preview-zone");
    var zoneName = document.getElementById("preview-zone-name");
    var asked = 0;
    function show(data) {
      desc.textContent = data.description || "";
      desc.hidden = !data.description;
      error.hidden = true;
      runs.textContent = "";
      data.runs.forEach(function (run) {
        var li = document.createElement("li");
        var t = document.createElement("time");
        t.setAttribute("datetime", run.at);
        t.textContent = run.text;
        li.appendChild(t);
        runs.appendChild(li);
      });
      zoneName.textContent = data.timezone;
      zone.hidden = false;
    }
    function fail(message) {
      desc.hidden = true;
      runs.textContent = "";
      zone.hidden = true;
      error.textContent = (box.getAttribute("data-invalid") || "{}").replace("{}", message);
      error.hidden = false;
    }
    var refresh = debounce(function () {
      var n = ++asked;
      var url = box.getAttribute("data-url") + "?cron=" + encodeURIComponent(cron.value) +
        "&tz=" + encodeURIComponent(tz.value);
      window.backupd.api("GET", url).then(function (data) {
        if (n === asked) {
          show(data);
        }
      }, function (err) {
        if (n === asked) {
          fail(err.message);
        }
      });
    }, 350);
    cron.addEventListener("input", refresh);
    tz.addEventListener("input", refresh);
    tz.addEventListener("change", refresh);
  }

  // The device search adds names to the device list; it never lists more
  // than the server's first few matches.
  function setupDeviceSearch() {
    var wrap = document.getElementById("sched-device-search");
    var input = document.getElementById("sched-device-q");
    var list = document.getElementById("sched-device-results");
    var names = document.getElementById("sched-devices");
    if (!wrap || !input || !list || !names || names.disabled) {
      return;
    }
    wrap.hidden = false;
    var asked = 0;
    function has(name) {
      var want = name.toLowerCase();
      return names.value.split(/[\n,]/).some(function (n) {
        return n.trim().toLowerCase() === want;
      });
    }
    function add(name) {
      if (has(name)) {
        return;
      }
      var v = names.value.replace(/\s+$/, "");
      names.value = v ? v + "\n" + name : name;
    }
    function render(items) {
      list.textContent = "";
      if (items.length === 0) {
        var none = document.createElement("li");
        none.textContent = list.getAttribute("data-empty");
        list.appendChild(none);
        return;
      }
      items.forEach(function (d) {
        var li = document.createElement("li");
        var label = document.createElement("span");
        label.textContent = d.name + " ";
        var host = document.createElement("span");
        host.className = "muted";
        host.textContent = d.host;
        label.appendChild(host);
        var button = document.createElement("button");
        button.type = "button";
        button.className = "link-button";
        button.textContent = list.getAttribute("data-add");
        button.setAttribute("aria-label", list.getAttribute("data-add") + " " + d.name);
        button.addEventListener("click", function () {
          add(d.name);
          button.disabled = true;
        });
        button.disabled = has(d.name);
        li.appendChild(label);
        li.appendChild(button);
        list.appendChild(li);
      });
    }
    var search = debounce(function () {
      var q = input.value.trim();
      var n = ++asked;
      if (q === "") {
        list.textContent = "";
        return;
      }
      window.backupd.api("GET", wrap.getAttribute("data-url") + "?q=" + encodeURIComponent(q)).then(function (data) {
        if (n === asked) {
          render(data.items);
        }
      }, function () {
        if (n === asked) {
          list.textContent = "";
        }
      });
    }, 250);
    input.addEventListener("input", search);
    // Enter in the search box must not submit the schedule.
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
      }
    });
  }

  function init() {
    var form = document.getElementById("schedule-form");
    if (!form) {
      return;
    }
    setupTargets(form);
    setupPreview(form);
    setupDeviceSearch();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
