// Users, roles and API keys: copy a shown-once secret to the clipboard,
// and grey out the part of a form that the chosen radio button does not
// use. The inventory source form shows the fields of the chosen kind
// only. All these forms work without this (the secret can be selected,
// the server ignores the unused fields, the kind links ask the server
// for the form of another kind).
(function () {
  "use strict";

  // Buttons with data-copy="id" copy that element's text.
  function setupCopy() {
    var buttons = document.querySelectorAll("button[data-copy]");
    if (!buttons.length || !navigator.clipboard || !window.isSecureContext) {
      return;
    }
    buttons.forEach(function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      var status = button.parentNode.querySelector(".admin-copy-status");
      if (!source) {
        return;
      }
      button.hidden = false;
      var timer = 0;
      function say(text, failed) {
        if (!status) {
          return;
        }
        status.textContent = text;
        status.classList.toggle("admin-copy-failed", !!failed);
        window.clearTimeout(timer);
        timer = window.setTimeout(function () { status.textContent = ""; }, 4000);
      }
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          say(button.getAttribute("data-copied"), false);
        }, function () {
          say(button.getAttribute("data-copy-failed"), true);
          var range = document.createRange();
          range.selectNodeContents(source);
          var sel = window.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
        });
      });
    });
  }

  // Blocks with data-enabled-by="radio-id" take part only while that
  // radio button is chosen.
  function setupEnabledBy() {
    var blocks = document.querySelectorAll("[data-enabled-by]");
    if (!blocks.length) {
      return;
    }
    function update() {
      blocks.forEach(function (block) {
        var radio = document.getElementById(block.getAttribute("data-enabled-by"));
        if (!radio) {
          return;
        }
        var on = radio.checked && !radio.disabled;
        block.classList.toggle("admin-off", !on);
        block.querySelectorAll("input, select, textarea").forEach(function (input) {
          if (input.hasAttribute("data-always-disabled")) {
            return;
          }
          input.disabled = !on;
        });
      });
    }
    // Boxes the server disabled stay disabled whatever is chosen.
    blocks.forEach(function (block) {
      block.querySelectorAll("input:disabled, select:disabled, textarea:disabled").forEach(function (input) {
        input.setAttribute("data-always-disabled", "");
      });
    });
    document.addEventListener("change", function (e) {
      if (e.target && e.target.type === "radio") {
        update();
      }
    });
    update();
  }

  // The inventory source form: the kind list takes the place of the
  // kind links, and only the chosen kind's section shows; the others'
  // fields are disabled, so that they are not sent.
  function setupKindPanels() {
    var select = document.getElementById("insync-kind");
    var panels = document.querySelectorAll("[data-kind-panel]");
    if (!select || !panels.length) {
      return;
    }
    var links = document.getElementById("insync-kind-links");
    if (links) {
      links.hidden = true;
    }
    select.hidden = false;
    function update() {
      panels.forEach(function (panel) {
        var on = panel.getAttribute("data-kind-panel") === select.value;
        panel.hidden = !on;
        panel.querySelectorAll("fieldset").forEach(function (fields) {
          fields.disabled = !on;
        });
      });
    }
    select.addEventListener("change", update);
    update();
  }

  function init() {
    setupCopy();
    setupEnabledBy();
    setupKindPanels();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
