// Groups, credentials and templates: conveniences only; the pages work
// without this file.
(function () {
  "use strict";

  // Template form: the default commands shown follow the platform
  // select, and a button copies them into the command box. Commands still
  // holding the previous platform's defaults (untouched) follow too.
  function setupTemplateDefaults() {
    var select = document.getElementById("template-platform");
    var commands = document.getElementById("template-commands");
    var pre = document.getElementById("template-defaults");
    var title = document.getElementById("template-defaults-title");
    var name = document.getElementById("template-defaults-name");
    var none = document.getElementById("template-defaults-none");
    var use = document.getElementById("template-use-defaults");
    if (!select || !commands || !pre || !title || !name || !none || !use) {
      return;
    }
    function chosen() {
      var opt = select.options[select.selectedIndex];
      return {
        name: opt ? opt.getAttribute("data-name") || "" : "",
        defaults: opt ? opt.getAttribute("data-defaults") || "" : ""
      };
    }
    function same(a, b) {
      return a.replace(/\r\n/g, "\n").trim() === b.replace(/\r\n/g, "\n").trim();
    }
    var previous = chosen().defaults;
    function show() {
      var c = chosen();
      var has = c.name !== "";
      name.textContent = c.name;
      pre.textContent = c.defaults;
      title.hidden = !has;
      pre.hidden = !has;
      none.hidden = has;
      use.hidden = !has;
      return c;
    }
    select.addEventListener("change", function () {
      var c = show();
      if (c.defaults && previous && same(commands.value, previous)) {
        commands.value = c.defaults;
      }
      previous = c.defaults;
    });
    use.addEventListener("click", function () {
      commands.value = chosen().defaults;
      commands.focus();
    });
    show();
  }

  // Group tree: after a move up or down the page comes back scrolled to
  // the group (#group-7-up); keep the keyboard on the same button, or on
  // its twin when the group reached an end.
  function setupGroupFocus() {
    var m = /^#group-(\d+)-(up|down)$/.exec(window.location.hash);
    if (!m || !document.getElementById("group-tree")) {
      return;
    }
    function focus() {
      var button = document.getElementById("group-" + m[1] + "-" + m[2]);
      if (button && button.disabled) {
        button = document.getElementById("group-" + m[1] + "-" + (m[2] === "up" ? "down" : "up"));
      }
      if (button && !button.disabled) {
        button.focus();
      }
    }
    // The browser's own scroll to the #fragment moves the focus too (to
    // the page when the target is a disabled button), until the page has
    // loaded: focus after it.
    if (document.readyState === "complete") {
      window.setTimeout(focus, 0);
    } else {
      window.addEventListener("load", function () { window.setTimeout(focus, 0); });
    }
  }

  function init() {
    setupTemplateDefaults();
    setupGroupFocus();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
