// CoMMET review: keep the scroll position across saves, and keyboard shortcuts (listed on the item page).
"use strict";
(function () {
  var key = "commet-scroll:" + location.pathname;
  document.addEventListener("submit", function () {
    try { sessionStorage.setItem(key, String(window.scrollY)); } catch (e) { /* storage off: the anchor still helps */ }
  }, true);
  window.addEventListener("load", function () {
    var saved = null;
    try { saved = sessionStorage.getItem(key); sessionStorage.removeItem(key); } catch (e) { saved = null; }
    if (saved !== null && document.querySelector(".flash")) { window.scrollTo(0, parseInt(saved, 10) || 0); }
  });

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

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) { return; }
    var digit = /^Digit([1-5])$/.exec(event.code || "");
    if (digit) {
      var picture = activePicture();
      if (!picture) { return; }
      var radio = picture.querySelector('input[type=radio][data-key="' + digit[1] + '"][value="' + (event.shiftKey ? "fail" : "pass") + '"]');
      if (radio) { radio.checked = true; radio.focus({ preventScroll: true }); event.preventDefault(); }
      return;
    }
    if (event.shiftKey) { return; }
    var actions = { a: "accept", r: "reject", n: "next-open", j: "next-item", k: "prev-item" };
    var id = actions[event.key];
    if (id) { event.preventDefault(); go(id); }
  });
})();
