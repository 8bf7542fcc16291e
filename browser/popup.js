// The toolbar popup: whether Grow runs, and what it blocks now.

"use strict";

const api = typeof browser !== "undefined" ? browser : chrome;

function show(state) {
  const heading = document.getElementById("heading");
  const detail = document.getElementById("detail");
  const note = document.getElementById("note");
  if (!state || !state.host) {
    heading.textContent = "Grow is not running";
    detail.textContent = "Nothing is blocked.";
    note.textContent =
      "If Grow is installed, run 'grow install --user --browser' once, then start Grow. (" +
      ((state && state.why) || "no answer") + ")";
  } else if (!state.running) {
    heading.textContent = "Grow is not running";
    detail.textContent = "Nothing is blocked. Start a focus with 'grow start'.";
    note.textContent = "";
  } else if (state.plugin === false) {
    heading.textContent = "Grow runs without its browser plugin";
    detail.textContent = "Nothing is blocked: turn on [plugin.browser] in config.ini.";
    note.textContent = "";
  } else {
    heading.textContent = state.phase === "idle" ? "Grow is idle" : "“" + state.card + "”: " + state.phase.replace("-", " ");
    const count = state.block.length;
    detail.textContent = count === 0 ? "Nothing is blocked now." : "Blocking " + count + (count === 1 ? " site" : " sites") + " while you focus.";
    note.textContent = state.intention || "";
  }
}

api.runtime.sendMessage({ type: "get-state" }).then(show);
api.runtime.onMessage.addListener((message) => {
  if (message && message.type === "state") show(message.state);
});
