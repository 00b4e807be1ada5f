// Notifications pages: the channel form shows the settings of the chosen
// type only (and the warning of skipping TLS verification only while that
// is ticked), the rule form the scope panel chosen. Without this script
// every section shows and the server reads those of the type (scope)
// chosen.
(function () {
  "use strict";

  function setupTypes(form) {
    var type = document.getElementById("ch-type");
    var panels = form.querySelectorAll("[data-type-panel]");
    if (!type) {
      return;
    }
    function update() {
      panels.forEach(function (p) {
        var types = p.getAttribute("data-type-panel").split(" ");
        p.hidden = types.indexOf(type.value) < 0;
      });
    }
    type.addEventListener("change", update);
    update();
  }

  // The warning of "skip TLS verification" shows only while it is ticked.
  function setupSkipVerify() {
    var box = document.getElementById("ch-skip-verify");
    var warning = document.getElementById("ch-skip-warning");
    if (!box || !warning) {
      return;
    }
    function update() {
      warning.hidden = !box.checked;
    }
    box.addEventListener("change", update);
    update();
  }

  function setupScope(form) {
    var radios = form.querySelectorAll('input[name="scope"]');
    var panels = form.querySelectorAll("[data-scope-panel]");
    function update() {
      var chosen = "";
      radios.forEach(function (r) {
        if (r.checked) {
          chosen = r.value;
        }
      });
      panels.forEach(function (p) {
        p.hidden = p.getAttribute("data-scope-panel") !== chosen;
      });
    }
    radios.forEach(function (r) {
      r.addEventListener("change", update);
    });
    update();
  }

  function init() {
    var channel = document.getElementById("channel-form");
    if (channel) {
      setupTypes(channel);
      setupSkipVerify();
    }
    var rule = document.getElementById("rule-form");
    if (rule) {
      setupScope(rule);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
