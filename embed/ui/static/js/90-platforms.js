// Platform form: the restore section shows the fields of the chosen
// method only (none for "not supported"), and the hidden ones are
// disabled so the form does not send them. Without this script every
// field shows and the server reads those the chosen method uses.
(function () {
  "use strict";

  function setupRestore() {
    var method = document.getElementById("platform-restore-method");
    var section = document.getElementById("platform-restore");
    if (!method || !section) {
      return;
    }
    var fields = section.querySelectorAll("[data-restore-field]");
    function update() {
      var chosen = method.options[method.selectedIndex];
      fields.forEach(function (f) {
        var need = f.getAttribute("data-restore-field");
        var show = method.value !== "" && (need === "" || chosen.hasAttribute("data-" + need));
        f.hidden = !show;
        f.querySelectorAll("input, textarea").forEach(function (el) {
          el.disabled = !show;
        });
      });
    }
    method.addEventListener("change", update);
    update();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setupRestore);
  } else {
    setupRestore();
  }
})();
