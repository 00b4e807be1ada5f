// Notifications pages: the channel form shows the settings of the chosen
// type only, the rule form the scope panel chosen. Without this script
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
