// earshot dashboard: a little script on top of pages that work without
// it. Triage without a reload, the live inbox, select all, keyboard
// shortcuts. No inline script anywhere: the Content-Security-Policy
// allows only this file.
(function () {
  "use strict";

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  // Swap a match for its new markup, keeping its selection, and its
  // focus when it had it (focused may say so from before a request).
  function swap(old, fresh, focused) {
    var box = old.querySelector('input[type="checkbox"]');
    var nbox = fresh.querySelector('input[type="checkbox"]');
    if (box && nbox) nbox.checked = box.checked;
    focused = focused || old.contains(document.activeElement);
    old.replaceWith(fresh);
    if (focused) fresh.focus();
  }

  // Triage forms post in the background and swap in the match's markup.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.hasAttribute("data-fragment") || form.dataset.plain || !window.fetch) return;
    ev.preventDefault();
    var article = form.closest("article");
    var focused = !!article && article.contains(document.activeElement);
    // getAttribute, not form.action: the buttons are named "action",
    // and a named control shadows the form's property of that name.
    fetch(form.getAttribute("action"), {
      method: "POST",
      body: new URLSearchParams(new FormData(form, ev.submitter)),
      headers: { "X-Earshot-Fragment": "1" },
      credentials: "same-origin"
    }).then(function (res) {
      if (!res.ok) throw new Error(res.status);
      return res.text();
    }).then(function (html) {
      var fresh = parse(html);
      if (article && fresh) swap(article, fresh, focused);
    }).catch(function () {
      // Fall back to the plain form, with the button that was pressed.
      form.dataset.plain = "1";
      if (ev.submitter) form.requestSubmit(ev.submitter); else form.submit();
    });
  });

  var list = document.getElementById("matches");
  var status = document.getElementById("live-status");

  // Live inbox: new matches and new scores, pushed by the server.
  if (list && list.dataset.live && window.EventSource) {
    var arrived = 0;
    var es = new EventSource(list.dataset.live);
    es.addEventListener("match", function (ev) {
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      var fresh = parse(data.html);
      if (!fresh) return;
      var old = document.getElementById("m-" + data.id);
      if (old) { swap(old, fresh); return; }
      // In its place by time: a match can commit after a later one, or
      // come into the view when it is scored.
      var shown = list.querySelectorAll("article"), next = null;
      for (var i = 0; i < shown.length && !next; i++) {
        if (Number(shown[i].dataset.created) < data.created) next = shown[i];
      }
      if (!next && shown.length && document.querySelector('.pager a[rel="next"]')) return; // an older page's
      var empty = list.querySelector(".empty");
      if (empty) empty.remove();
      fresh.classList.add("arrived");
      list.insertBefore(fresh, next);
      arrived++;
      if (status) status.textContent = arrived === 1 ? "1 new match arrived." : arrived + " new matches arrived.";
    });
  }

  // The inbox's first step loads again as the whole inbox once the
  // owner has a phrase, added in another tab or on another device.
  var first = document.getElementById("first-step");
  if (first && first.dataset.live && window.EventSource) {
    var wait = new EventSource(first.dataset.live);
    wait.addEventListener("phrase", function () {
      wait.close();
      window.location.reload();
    });
  }

  // Select all, offered only where the script runs.
  var bulk = document.getElementById("bulk");
  if (bulk && list) {
    var label = document.createElement("label");
    label.className = "select-all";
    var all = document.createElement("input");
    all.type = "checkbox";
    all.id = "select-all";
    label.appendChild(all);
    var words = document.createElement("span");
    words.className = "long"; // only the box shows on a phone
    words.textContent = " Select all";
    label.appendChild(words);
    bulk.insertBefore(label, bulk.querySelector(".bulk-label"));
    all.addEventListener("change", function () {
      list.querySelectorAll('input[type="checkbox"][form="bulk"]').forEach(function (b) { b.checked = all.checked; });
    });
  }

  // Keyboard shortcuts on the inbox: j/k move, x select, r/s/e act, o open.
  var keyButtons = {
    r: 'button[value="read"], button[value="unread"]',
    s: 'button[value="star"], button[value="unstar"]',
    e: 'button[value="archive"], button[value="unarchive"]'
  };
  document.addEventListener("keydown", function (ev) {
    if (!list || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") return;
    var items = Array.prototype.slice.call(list.querySelectorAll("article"));
    if (!items.length) return;
    var current = document.activeElement && document.activeElement.closest ? document.activeElement.closest("article") : null;
    var i = items.indexOf(current);
    var target = null;
    switch (ev.key) {
      case "j": target = items[Math.min(i + 1, items.length - 1)]; break;
      case "k": target = items[Math.max(i - 1, 0)]; break;
      case "x": if (current) { var b = current.querySelector('input[type="checkbox"]'); b.checked = !b.checked; } break;
      case "r": case "s": case "e":
        if (current) { var btn = current.querySelector(keyButtons[ev.key]); if (btn) btn.click(); }
        break;
      case "o": if (current) { var a = current.querySelector("a.open"); if (a) a.click(); } break;
      default: return;
    }
    if (target) target.focus();
    ev.preventDefault();
  });
  // Copy buttons beside a secret shown once: offered only where the
  // script runs; without it the secret is plain text to select.
  document.querySelectorAll("button.copy[data-copy]").forEach(function (btn) {
    var src = document.getElementById(btn.dataset.copy);
    var said = btn.parentNode.querySelector(".copy-status");
    if (!src) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      src.select();
      var done = function () { if (said) said.textContent = "Copied."; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(src.value).then(done, function () {
          if (said) said.textContent = "Select the key and copy it.";
        });
      } else if (document.execCommand && document.execCommand("copy")) {
        done();
      }
    });
  });

  // The challenge flow. The challenge page, once the person says they
  // are done, tells the accounts page that opened it, addressed to our
  // own origin only, so no other site's window can read it.
  var SOLVED = "svc:challenge-solved";
  var doneBtn = document.getElementById("challenge-done");
  if (doneBtn) {
    doneBtn.form.addEventListener("submit", function (ev) {
      if (!window.opener || window.opener.closed) return; // no opener: go to the accounts page instead
      ev.preventDefault();
      window.opener.postMessage({ type: SOLVED, platform: doneBtn.dataset.platform }, window.location.origin);
      var sent = document.getElementById("challenge-sent");
      if (sent) sent.textContent = "Done. Go back to the accounts page and press Mark resolved; you can close this tab.";
    });
  }

  // The accounts page locks each "Mark resolved" button until the
  // challenge page says it is done. It accepts the message only from its
  // own origin and for the account's platform. The lock is a help, not a
  // guard: the server decides, and without this script the form works.
  var resolvers = document.querySelectorAll("form[data-resolve]");
  if (resolvers.length) {
    var said = document.getElementById("challenge-status");
    resolvers.forEach(function (f) { f.querySelector("button").disabled = true; });
    window.addEventListener("message", function (ev) {
      if (ev.origin !== window.location.origin) return;
      var data = ev.data;
      if (!data || typeof data !== "object" || data.type !== SOLVED || typeof data.platform !== "string") return;
      resolvers.forEach(function (f) {
        if (f.dataset.resolve !== data.platform) return;
        var b = f.querySelector("button");
        b.disabled = false;
        if (said) said.textContent = "Challenge on " + data.platform + " completed: press Mark resolved.";
        b.focus();
      });
    });
  }
})();
