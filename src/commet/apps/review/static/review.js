// CoMMET review: nothing typed is lost and nothing moves when a form is sent; keyboard shortcuts (listed on the
// item page), a verdict by key asked for first; on the calibration label page r, w, u, z and b label at once.
"use strict";
(function () {
  var revision = document.getElementById("revision");
  var scrollKey = "commet-scroll:" + location.pathname, draftKey = "commet-draft:" + location.pathname;

  function remember(key, value) {
    try { sessionStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* storage off: the server keeps what it can */ }
  }

  function recall(key) {
    var value = null;
    try { value = JSON.parse(sessionStorage.getItem(key) || "null"); sessionStorage.removeItem(key); } catch (e) { value = null; }
    return value;
  }

  // ---------------------------------------------------------------- what was typed
  // A field is named by its form's action and its name (a radio also by its value): the same on the next page.
  function fieldKey(field) {
    var form = field.form;
    return (form ? form.getAttribute("action") : "") + "|" + field.name + (field.type === "radio" ? "|" + field.value : "");
  }

  // a button is named by where it sends its form and what it says: the same on the next page
  function buttonKey(button) {
    return [button.getAttribute("formaction") || (button.form && button.form.getAttribute("action")), button.name,
            button.value, button.textContent.trim()].join("|");
  }

  function typedState(field) {
    if (!field.name || /^(hidden|password|file|submit|button|reset)$/.test(field.type)) { return null; }
    if (field.type === "radio" || field.type === "checkbox") {
      return field.checked !== field.defaultChecked ? { checked: field.checked } : null;
    }
    if (field.tagName === "SELECT") {
      for (var i = 0; i < field.options.length; i++) {
        if (field.options[i].selected !== field.options[i].defaultSelected) { return { value: field.value }; }
      }
      return null;
    }
    return field.value !== field.defaultValue ? { value: field.value } : null;
  }

  // the fields a submission hands to the server (a button may send only some of its form's: data-sends)
  function sentBy(form, button) {
    var prefixes = button && button.dataset.sends ? button.dataset.sends.split(" ") : null;
    var sent = {};
    Array.prototype.forEach.call(form.elements, function (field) {
      if (field.name && (!prefixes || prefixes.some(function (p) { return field.name.indexOf(p) === 0; }))) {
        sent[fieldKey(field)] = true;
      }
    });
    return sent;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target, button = event.submitter;
    if (form.method === "dialog") { return; }
    // keep the button pressed where it is on screen (else the part of the page around it)
    var anchor = (button && button.closest("[id]")) || form.closest("[id]") || document.getElementById("main");
    remember(scrollKey, { id: anchor.id, top: anchor.getBoundingClientRect().top, y: window.scrollY,
                          button: button ? buttonKey(button) : null, buttonTop: button ? button.getBoundingClientRect().top : 0 });
    // and everything typed on the page, to be put back if the action is refused (or into the other forms)
    var typed = {};
    document.querySelectorAll("main input, main textarea, main select").forEach(function (field) {
      var state = typedState(field);
      if (state) { typed[fieldKey(field)] = state; }
    });
    remember(draftKey, { revision: revision ? revision.textContent : null, typed: typed, sent: sentBy(form, button) });
  }, true);

  function restoreTyped() {
    var draft = recall(draftKey);
    if (!draft || !revision || draft.revision !== revision.textContent || !document.getElementById("said")) { return; }
    var refused = document.querySelector(".flash.refused") !== null;
    document.querySelectorAll("main input, main textarea, main select").forEach(function (field) {
      var key = fieldKey(field), state = draft.typed[key];
      if (!state || (!refused && draft.sent[key])) { return; }  // what a saved action sent is on the page now
      if ("checked" in state) { field.checked = state.checked; } else { field.value = state.value; }
      var details = field.closest("details");
      if (details) { details.open = true; }
    });
  }

  function restorePlace() {
    var spot = recall(scrollKey), said = document.getElementById("said");
    if (!spot || !said) { return; }
    var button = Array.prototype.find.call(document.querySelectorAll("main button"), function (b) {
      return spot.button !== null && buttonKey(b) === spot.button;
    });
    var anchor = document.getElementById(spot.id);
    if (button && button.offsetParent !== null) { window.scrollBy(0, button.getBoundingClientRect().top - spot.buttonTop); }
    else if (anchor && anchor.id !== "main") { window.scrollBy(0, anchor.getBoundingClientRect().top - spot.top); }
    else { window.scrollTo(0, spot.y); }
    var box = said.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) { said.scrollIntoView({ block: "nearest" }); }
    if (button && button.offsetParent !== null) { button.focus({ preventScroll: true }); }
    return spot;
  }

  restoreTyped();
  // now (the page shows at the form's #anchor until then) and once pictures have loaded and moved things
  var spot = restorePlace();
  if (spot) {
    window.addEventListener("load", function () { remember(scrollKey, spot); restorePlace(); });
  }

  // ---------------------------------------------------------------- shortcuts
  function activePicture() {
    // the picture whose checks are nearest the middle of the window
    var best = null, bestDistance = Infinity, middle = window.innerHeight / 2;
    document.querySelectorAll(".picture[data-picture]").forEach(function (el) {
      if (!el.querySelector(".checks")) { return; }
      var box = el.getBoundingClientRect();
      var distance = Math.abs((box.top + box.bottom) / 2 - middle);
      if (box.bottom >= 0 && box.top <= window.innerHeight && distance < bestDistance) { best = el; bestDistance = distance; }
    });
    return best;
  }

  function go(id) { var link = document.getElementById(id); if (link) { link.click(); } }

  // a verdict by key is asked for first: the decision comes into view, and Enter (or the button) confirms it
  var dialog = document.getElementById("confirm");
  var VERDICTS = {
    accept: ["Accept this item?", "Accept means the text and every picture are free of errors; the picture checks " +
             "set above are saved with it.", "✓ Accept", "accept"],
    reject: ["Reject this item?", "The note above, if any, is saved with the rejection.", "✗ Reject", "reject"]
  };

  function ask(id) {
    var button = document.getElementById(id);
    if (!button) { return; }
    if (!dialog || typeof dialog.showModal !== "function") {
      if (window.confirm(VERDICTS[id][0])) { button.form.requestSubmit(button); }
      return;
    }
    var words = VERDICTS[id], yes = document.getElementById("confirm-yes");
    document.getElementById("confirm-title").textContent = words[0].replace("this item", document.querySelector("h1").textContent);
    document.getElementById("confirm-text").textContent = words[1];
    yes.textContent = words[2];
    yes.className = words[3];
    document.getElementById("decide").scrollIntoView({ block: "center" });
    dialog.returnValue = "";
    dialog.onclose = function () { if (dialog.returnValue === "yes") { button.form.requestSubmit(button); } };
    dialog.showModal();
    yes.focus();
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || (dialog && dialog.open)) { return; }
    var typing = target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
      (target.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(target.type)));
    if (typing) { return; }
    var digit = /^Digit([1-5])$/.exec(event.code || "");
    if (digit) {
      var picture = activePicture();
      if (!picture) { return; }
      var radio = picture.querySelector('input[type=radio][data-key="' + digit[1] + '"][value="' + (event.shiftKey ? "fail" : "pass") + '"]');
      if (radio) { radio.checked = true; radio.focus({ preventScroll: true }); event.preventDefault(); }
      return;
    }
    if (event.shiftKey) { return; }
    if (document.getElementById("label-panel")) {  // labelling: one key per label, undo and back
      var labelKeys = { r: "right", w: "wrong", u: "unsure", z: "undo", b: "back", ArrowLeft: "back" };
      if (labelKeys[event.key]) { event.preventDefault(); go(labelKeys[event.key]); }
      return;
    }
    if (event.key === "a" || event.key === "r") { event.preventDefault(); ask(event.key === "a" ? "accept" : "reject"); return; }
    var actions = { n: "next-open", j: "next-item", k: "prev-item" };
    var id = actions[event.key];
    if (id) { event.preventDefault(); go(id); }
  });
  // shortcuts are live from here on (the script is deferred); tests and assistive scripts can wait for it
  document.documentElement.dataset.keys = "on";
})();
