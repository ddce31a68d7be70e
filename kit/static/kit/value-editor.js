// Business memory values edited as a form built from their shape: text, numbers, yes/no,
// lists you can add to and reorder, nested groups. The JSON textarea stays the field the
// page submits (and what shows without JavaScript): every change to the form is written
// back into it. Shapes a form cannot show well (very deep or very large) stay JSON.
// Served from Kit itself, as the Content-Security-Policy asks: no inline script or style.
(function () {
  "use strict";

  var MAX_DEPTH = 6;
  var MAX_NODES = 400;
  // Paths are written as the server writes them (Python's str.isidentifier, json.dumps),
  // so a problem it finds inside the value lands beside the part it is about.
  var IDENTIFIER = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;
  // Numbers JavaScript cannot hold exactly (past 2^53, or more than 15 digits): a form
  // would change them, so such values stay JSON.
  var NUMBER_OR_STRING = /"(?:[^"\\]|\\.)*"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else if (attrs[name] !== null && attrs[name] !== undefined) node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function kindOf(value) {
    if (Array.isArray(value)) return "list";
    if (value === null) return "empty";
    if (typeof value === "object") return "group";
    if (typeof value === "boolean") return "yesno";
    if (typeof value === "number") return "number";
    return "text";
  }

  function size(value, depth) {
    // [nodes, deepest level] of a value.
    var kind = kindOf(value);
    if (kind !== "list" && kind !== "group") return [1, depth];
    var items = kind === "list" ? value : Object.keys(value).map(function (k) { return value[k]; });
    return items.reduce(function (found, item) {
      var inner = size(item, depth + 1);
      return [found[0] + inner[0], Math.max(found[1], inner[1])];
    }, [1, depth]);
  }

  function asciiJson(text) {
    return JSON.stringify(text).replace(/[^\x20-\x7e]/g, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }

  function childPath(path, key) {
    if (typeof key === "number") return path + "[" + key + "]";
    return IDENTIFIER.test(key) ? path + "." + key : path + "[" + asciiJson(key) + "]";
  }

  function inexact(json) {
    // A number the form would write back differently: past 2^53, more digits than a
    // double holds, or a whole number stored as a decimal (1.0 would come back as 1).
    var match;
    NUMBER_OR_STRING.lastIndex = 0;
    while ((match = NUMBER_OR_STRING.exec(json))) {
      if (match[1] && String(Number(match[1])) !== match[1]) return match[1];
    }
    return null;
  }

  function blank(like) {
    // A new list item shaped like the last one: same keys, empty leaves.
    switch (kindOf(like)) {
      case "list": return [];
      case "group":
        var copy = {};
        Object.keys(like).forEach(function (k) { copy[k] = blank(like[k]); });
        return copy;
      case "number": return 0;
      case "yesno": return false;
      default: return "";
    }
  }

  function Editor(textarea) {
    this.textarea = textarea;
    this.errors = JSON.parse(textarea.getAttribute("data-errors") || "{}");
    this.label = textarea.getAttribute("aria-label") || "Value";
    this.root = el("div", { "class": "value-editor", "data-path": "value" });
    this.note = el("p", { "class": "hint value-editor-note", hidden: "" });
    this.toggle = el("button", { type: "button", "class": "button small", "data-toggle-json": "" });
    textarea.parentNode.insertBefore(this.note, textarea);
    textarea.parentNode.insertBefore(this.root, textarea);
    textarea.parentNode.insertBefore(this.toggle, this.root);
    var self = this;
    this.toggle.addEventListener("click", function () { self.asForm(!self.formShown); });
    this.touched = false;
    if (textarea.form) {
      textarea.form.addEventListener("submit", function (event) {
        // An untouched form sends the value as it came, byte for byte.
        if (!self.formShown || !self.touched) return;
        // A new field's name is not part of the value: a refusal there stops no save.
        self.root.querySelectorAll("[data-new-field]").forEach(function (name) { name.setCustomValidity(""); });
        self.write();
        var bad = self.root.querySelector(":invalid");
        if (bad) {
          event.preventDefault();
          bad.reportValidity();
          bad.focus();
        }
      });
    }
    this.root.addEventListener("input", function () { self.write(); });
    this.root.addEventListener("change", function () { self.write(); });
    this.root.addEventListener("keydown", function (event) {
      // Enter in a field of the form never sends the page half-edited: in a new field's
      // name it adds the field; Ctrl+Enter (Cmd+Enter) saves.
      if (event.key !== "Enter" || event.target.tagName !== "INPUT") return;
      event.preventDefault();
      if (event.ctrlKey || event.metaKey) {
        if (textarea.form) textarea.form.requestSubmit();
      } else if (event.target.hasAttribute("data-new-field")) {
        event.target.parentNode.querySelector("[data-add-field]").click();
      }
    });
    this.asForm(true);
  }

  Editor.prototype.asForm = function (wanted) {
    var value;
    if (wanted) {
      try {
        value = JSON.parse(this.textarea.value);
      } catch (error) {
        return this.say("The JSON below does not parse (" + error.message + "): fix it, or edit it as JSON.", false);
      }
      var lossy = inexact(this.textarea.value);
      if (lossy) {
        return this.say("This value holds the number " + lossy.slice(0, 40) + ", which a form cannot keep exactly: edit it as JSON.", false);
      }
      var measured = size(value, 0);
      if (measured[0] > MAX_NODES || measured[1] > MAX_DEPTH) {
        return this.say("This value is too large or too deep to show as a form: edit it as JSON.", false);
      }
    }
    this.formShown = wanted;
    this.root.replaceChildren();
    if (wanted) {
      this.root.appendChild(this.build(value, "value", this.label));
      this.note.hidden = true;
    }
    this.root.hidden = !wanted;
    this.textarea.hidden = wanted;
    this.toggle.textContent = wanted ? "Edit as JSON" : "Edit as a form";
  };

  Editor.prototype.say = function (message, keep) {
    this.note.textContent = message;
    this.note.hidden = false;
    this.formShown = false;
    this.root.hidden = true;
    this.textarea.hidden = false;
    this.toggle.textContent = "Edit as a form";
    return keep;
  };

  Editor.prototype.write = function () {
    this.touched = true;
    if (this.formShown) this.textarea.value = JSON.stringify(this.read(this.root.firstChild), null, 2);
  };

  Editor.prototype.problems = function (path) {
    var found = (this.errors[path] || []).concat(this.errors[path + " (key)"] || []);
    if (!found.length) return null;
    return el("ul", { "class": "errorlist" }, found.map(function (m) { return el("li", { text: m }); }));
  };

  Editor.prototype.build = function (value, path, label, numbered) {
    var kind = kindOf(value);
    var node;
    if (kind === "group") node = this.group(value, path, label);
    else if (kind === "list") node = this.list(value, path, label);
    else node = this.leaf(value, path, label, kind, numbered);
    node.setAttribute("data-kind", kind);
    node.setAttribute("data-path", path);
    var problems = this.problems(path);
    if (problems) node.appendChild(problems);
    return node;
  };

  Editor.prototype.leaf = function (value, path, label, kind, numbered) {
    var id = "ve-" + Math.random().toString(36).slice(2);
    var input;
    if (kind === "yesno") {
      input = el("input", { type: "checkbox", id: id });
      input.checked = value;
    } else if (kind === "number") {
      input = el("input", { type: "number", step: "any", id: id, value: String(value) });
    } else if (kind === "empty") {
      input = el("input", { type: "text", id: id, value: "", placeholder: "empty", readonly: "" });
    } else if (value.length > 80 || value.indexOf("\n") >= 0) {
      input = el("textarea", { id: id, rows: String(Math.min(8, 2 + Math.floor(value.length / 80))) });
      input.value = value;
    } else {
      input = el("input", { type: "text", id: id, value: value });
    }
    input.setAttribute("data-input", "");
    // A list's items are numbered by the list itself: their labels are for screen readers.
    var caption = el("label", { "for": id, text: label, "class": numbered ? "sr-only" : null });
    return el("div", { "class": "ve-leaf" }, [caption, input]);
  };

  Editor.prototype.group = function (value, path, label) {
    var self = this;
    var fields = el("div", { "class": "ve-fields" });
    Object.keys(value).forEach(function (key) { fields.appendChild(self.field(key, value[key], path)); });
    var name = el("input", { type: "text", placeholder: "new field name", "data-new-field": "", "aria-label": "New field name in " + label });
    var type = el("select", { "aria-label": "Type of the new field" }, [
      el("option", { value: "text", text: "text" }), el("option", { value: "number", text: "number" }),
      el("option", { value: "yesno", text: "yes/no" }), el("option", { value: "list", text: "list" }),
      el("option", { value: "group", text: "group" })
    ]);
    var add = el("button", { type: "button", "class": "button small", "data-add-field": "", text: "Add field" });
    name.addEventListener("input", function () { name.setCustomValidity(""); });
    add.addEventListener("click", function () {
      var key = name.value.trim();
      var taken = Array.prototype.some.call(fields.children, function (row) {
        return row.getAttribute("data-key") === key;
      });
      name.setCustomValidity(taken ? "There is a field named " + key + " already." : "");
      if (taken) return name.reportValidity();
      if (!key) return name.focus();
      var starts = { text: "", number: 0, yesno: false, list: [""], group: {} }[type.value];
      var added = self.field(key, starts, path);
      fields.appendChild(added);
      name.value = "";
      self.write();
      var first = added.querySelector("[data-input]");
      if (first) first.focus();
    });
    return el("fieldset", { "class": "ve-group" }, [
      el("legend", { text: label }), fields, el("div", { "class": "ve-add" }, [name, type, add])
    ]);
  };

  Editor.prototype.field = function (key, value, path) {
    var self = this;
    var row = el("div", { "class": "ve-field", "data-key": key }, [this.build(value, childPath(path, key), key)]);
    var remove = el("button", { type: "button", "class": "button small", "aria-label": "Remove " + key, text: "Remove" });
    remove.addEventListener("click", function () {
      // Focus stays where the member was: the next field, the one before, or "new field".
      var near = row.nextElementSibling || row.previousElementSibling;
      var group = row.parentNode.parentNode;
      row.remove();
      self.write();
      (near ? near.querySelector("[data-input], button") : group.querySelector(":scope > .ve-add > [data-new-field]")).focus();
    });
    row.appendChild(el("div", { "class": "ve-controls" }, [remove]));
    return row;
  };

  Editor.prototype.list = function (value, path, label) {
    var self = this;
    var items = el("ol", { "class": "ve-items" });
    var box = el("fieldset", { "class": "ve-list" }, [el("legend", { text: label }), items]);
    value.forEach(function (item, index) { items.appendChild(self.item(item, path, index, label)); });
    var add = el("button", { type: "button", "class": "button small", "data-add-item": "", text: "Add to " + label });
    add.addEventListener("click", function () {
      var last = self.read(items.lastElementChild ? items.lastElementChild.firstChild : null);
      var index = items.children.length;
      var added = self.item(index ? blank(last) : "", path, index, label);
      items.appendChild(added);
      self.renumber(items, path, label);
      self.write();
      var first = added.querySelector("[data-input]");
      if (first) first.focus();
    });
    box.appendChild(add);
    return box;
  };

  Editor.prototype.item = function (value, path, index, label) {
    var self = this;
    var row = el("li", { "class": "ve-item" }, [
      this.build(value, childPath(path, index), label + " " + (index + 1), true)
    ]);
    function move(step) {
      var items = row.parentNode;
      var other = step < 0 ? row.previousElementSibling : row.nextElementSibling;
      if (!other) return;
      items.insertBefore(row, step < 0 ? other : other.nextElementSibling);
      self.renumber(items, path, label);
      self.write();
      row.querySelector(step < 0 ? "[data-up]" : "[data-down]").focus();
    }
    var up = el("button", { type: "button", "class": "button small", "data-up": "", "aria-label": "Move up", text: "↑" });
    var down = el("button", { type: "button", "class": "button small", "data-down": "", "aria-label": "Move down", text: "↓" });
    var remove = el("button", { type: "button", "class": "button small", "data-remove": "", "aria-label": "Remove", text: "Remove" });
    up.addEventListener("click", function () { move(-1); });
    down.addEventListener("click", function () { move(1); });
    remove.addEventListener("click", function () {
      var items = row.parentNode;
      var near = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      self.renumber(items, path, label);
      self.write();
      (near ? near.querySelector("[data-remove]") : items.parentNode.querySelector(":scope > [data-add-item]")).focus();
    });
    row.appendChild(el("div", { "class": "ve-controls" }, [up, down, remove]));
    return row;
  };

  Editor.prototype.renumber = function (items, path, label) {
    Array.prototype.forEach.call(items.children, function (row, index) {
      var node = row.firstChild;
      node.setAttribute("data-path", childPath(path, index));
      var caption = node.querySelector(":scope > label, :scope > legend");
      if (caption) caption.textContent = label + " " + (index + 1);
    });
  };

  Editor.prototype.read = function (node) {
    if (!node) return "";
    var self = this;
    var kind = node.getAttribute("data-kind");
    if (kind === "group") {
      // No prototype: a field named __proto__ is a field like any other.
      var value = Object.create(null);
      node.querySelectorAll(":scope > .ve-fields > .ve-field").forEach(function (row) {
        value[row.getAttribute("data-key")] = self.read(row.firstChild);
      });
      return value;
    }
    if (kind === "list") {
      return Array.prototype.map.call(node.querySelector(":scope > .ve-items").children, function (row) {
        return self.read(row.firstChild);
      });
    }
    var input = node.querySelector("[data-input]");
    if (kind === "yesno") return input.checked;
    if (kind === "empty") return null;
    if (kind === "number") {
      var number = Number(input.value);
      input.setCustomValidity(input.value.trim() === "" || isNaN(number) ? "A number, please." : "");
      return isNaN(number) ? input.value : number;
    }
    return input.value;
  };

  document.querySelectorAll("textarea[data-value-editor]").forEach(function (textarea) {
    new Editor(textarea);
  });
})();
