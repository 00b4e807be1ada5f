// Devices page: select every device of the page for "Back up selected"
// and count the selection; in the device form, offer only the templates of
// the chosen platform and show the login method's default port. Without
// this file the page works the same, minus these conveniences.
(function () {
  "use strict";

  // The rows may be replaced while a backup is followed (backupd:live),
  // so the boxes are looked up at each count.
  function setupSelection() {
    var all = document.getElementById("device-select-all");
    var button = document.getElementById("device-bulk-backup");
    if (!all || !button) {
      return;
    }
    var count = button.querySelector(".devices-selected-count");
    function boxes() {
      return Array.prototype.slice.call(document.querySelectorAll('input[type="checkbox"][form="device-bulk"]'));
    }
    all.hidden = false;
    function update() {
      var list = boxes();
      var n = list.filter(function (b) { return b.checked; }).length;
      button.disabled = n === 0;
      if (count) {
        count.hidden = n === 0;
        count.textContent = "(" + n + ")";
      }
      all.checked = n > 0 && n === list.length;
      all.indeterminate = n > 0 && n < list.length;
    }
    all.addEventListener("change", function () {
      boxes().forEach(function (b) { b.checked = all.checked; });
      update();
    });
    document.addEventListener("change", function (e) {
      if (e.target.matches && e.target.matches('input[type="checkbox"][form="device-bulk"]')) {
        update();
      }
    });
    document.addEventListener("backupd:live", update);
    // Coming back through the history keeps the boxes' state.
    window.addEventListener("pageshow", update);
    update();
  }

  function setupForm() {
    var platform = document.getElementById("d-platform");
    var template = document.getElementById("d-template");
    var login = document.getElementById("d-login");
    var port = document.getElementById("d-port");
    if (platform && template) {
      var syncTemplates = function () {
        var groups = template.querySelectorAll("optgroup[data-platform]");
        groups.forEach(function (g) {
          var match = g.getAttribute("data-platform") === platform.value;
          g.hidden = !match;
          g.disabled = !match;
        });
        var chosen = template.options[template.selectedIndex];
        if (chosen && chosen.parentElement && chosen.parentElement.disabled) {
          template.value = "";
        }
      };
      platform.addEventListener("change", syncTemplates);
      syncTemplates();
    }
    if (login && port) {
      var syncPort = function () {
        var opt = login.options[login.selectedIndex];
        port.placeholder = (opt && opt.getAttribute("data-port")) || "";
      };
      login.addEventListener("change", syncPort);
      syncPort();
    }
  }

  function init() {
    setupSelection();
    setupForm();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
