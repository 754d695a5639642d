// CoMMET review: keep the scroll position across saves, and keyboard shortcuts (listed on the item page).
"use strict";
(function () {
  // Saves reload the page; put the part of the page the reviewer was working on back where it was.
  var key = "commet-scroll:" + location.pathname;
  document.addEventListener("submit", function (event) {
    var form = event.target, button = event.submitter;
    var anchor = (button && button.closest("[id]")) || form.closest("[id]") || document.getElementById("main");
    var spot = { id: anchor.id, top: anchor.getBoundingClientRect().top, y: window.scrollY };
    try { sessionStorage.setItem(key, JSON.stringify(spot)); } catch (e) { /* storage off: the #anchor still helps */ }
  }, true);
  window.addEventListener("load", function () {
    var spot = null;
    try { spot = JSON.parse(sessionStorage.getItem(key) || "null"); sessionStorage.removeItem(key); } catch (e) { spot = null; }
    if (!spot || !document.querySelector(".flash")) { return; }
    var anchor = document.getElementById(spot.id);
    if (anchor && anchor.id !== "main") { window.scrollBy(0, anchor.getBoundingClientRect().top - spot.top); }
    else { window.scrollTo(0, spot.y); }
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
    var actions = { a: "accept", r: "reject", n: "next-open", j: "next-item", k: "prev-item" };
    var id = actions[event.key];
    if (id) { event.preventDefault(); go(id); }
  });
  // shortcuts are live from here on (the script is deferred); tests and assistive scripts can wait for it
  document.documentElement.dataset.keys = "on";
})();
