// The toolbar popup: whether Grow runs, and what it blocks now.

"use strict";

const api = typeof browser !== "undefined" ? browser : chrome;

const phases = {
  focus: "phaseFocus",
  "short-break": "phaseShortBreak",
  "long-break": "phaseLongBreak",
  waiting: "phaseWaiting",
};

function show(state) {
  const heading = document.getElementById("heading");
  const detail = document.getElementById("detail");
  const note = document.getElementById("note");
  if (!state || !state.host) {
    heading.textContent = say("growNotRunning");
    detail.textContent = say("nothingBlocked");
    note.textContent = say("installHint", (state && state.why) || say("noAnswer"));
  } else if (!state.running) {
    heading.textContent = say("growNotRunning");
    detail.textContent = say("startAFocus");
    note.textContent = "";
  } else if (state.plugin === false) {
    heading.textContent = say("noBrowserPlugin");
    detail.textContent = say("turnOnPlugin");
    note.textContent = "";
  } else {
    heading.textContent =
      state.phase === "idle"
        ? say("growIsIdle")
        : say("cardPhase", state.card, phases[state.phase] ? say(phases[state.phase]) : state.phase);
    const count = state.block.length;
    detail.textContent = count === 0 ? say("nothingBlockedNow") : sayCount("blockingSites", count);
    note.textContent = state.intention || "";
  }
}

api.runtime.sendMessage({ type: "get-state" }).then(show);
api.runtime.onMessage.addListener((message) => {
  if (message && message.type === "state") show(message.state);
});
