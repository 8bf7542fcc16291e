// Grow's page, shown instead of a site the focus card lists. It shows the card, what the
// person meant to do and the time left, and offers "Back to work" and "Allow 5 minutes".

"use strict";

const api = typeof browser !== "undefined" ? browser : chrome;
const address = location.hash.slice(1);
let state = null;

function siteOf(url) {
  try {
    return new URL(url).host;
  } catch (error) {
    return url;
  }
}

function clock(seconds) {
  const whole = Math.max(0, Math.round(seconds));
  const minutes = Math.floor(whole / 60);
  return minutes + ":" + String(whole % 60).padStart(2, "0");
}

function draw() {
  document.getElementById("site").textContent = say("siteWaits", siteOf(address));
  if (!state || !state.running) {
    document.getElementById("heading").textContent = say("growNotRunning");
    document.getElementById("time").textContent = "";
    return;
  }
  document.getElementById("heading").textContent = say("focusOnCard", state.card);
  document.getElementById("intention").textContent = state.intention || "";
  const left = state.ends_at ? (state.ends_at - Date.now()) / 1000 : state.remaining;
  document.getElementById("time").textContent = say("timeLeft", clock(left));
}

function goBack() {
  if (history.length > 1) {
    history.back();
  } else {
    api.tabs.getCurrent().then((tab) => api.tabs.remove(tab.id));
  }
}

document.getElementById("back").addEventListener("click", goBack);
document.getElementById("allow").addEventListener("click", () => {
  document.getElementById("note").textContent = say("askingGrow");
  api.runtime.sendMessage({ type: "allow", url: address }).then((answer) => {
    if (!answer || !answer.sent) {
      document.getElementById("note").textContent = say("growNotRunningNothingBlocked");
    }
  });
});

api.runtime.onMessage.addListener((message) => {
  if (message && message.type === "state") {
    state = message.state;
    draw();
  } else if (message && message.type === "error") {
    document.getElementById("note").textContent = message.message;
  }
});

api.runtime.sendMessage({ type: "get-state" }).then((answer) => {
  state = answer;
  draw();
});
// The time left goes down once a second, only while the page is shown.
setInterval(draw, 1000);
draw();
