// Grow's extension: tells Grow (through its native messaging host, `grow browser-host`) which
// page is in front of the person, and blocks what Grow says to block. Nothing is sent
// anywhere but that host on this machine. docs/browser.md has the whole path.

"use strict";

if (typeof growBuildRules === "undefined") {
  // Chromium runs this as a service worker; Firefox loads rules.js first (manifest.json).
  importScripts("rules.js");
}

const api = typeof browser !== "undefined" ? browser : chrome;
// BrowserFiles.hostName in Sources/GrowCLI/BrowserFiles.swift.
const HOST = "org.grow.grow";
const BLOCKED_PAGE = api.runtime.getURL("blocked.html");

let port = null;
// What the host last said; `host: false` while there is no host to talk to.
let state = { running: false, host: false };
let retryDelay = 1000;
let retryTimer = null;

function connect() {
  retryTimer = null;
  try {
    port = api.runtime.connectNative(HOST);
  } catch (error) {
    return disconnected(String(error));
  }
  port.onMessage.addListener(onHostMessage);
  port.onDisconnect.addListener(() => {
    const why = (api.runtime.lastError && api.runtime.lastError.message) || api.i18n.getMessage("hostExited");
    disconnected(why);
  });
}

// No host (not installed, crashed): block nothing, say so in the popup, and try again, less
// and less often (at most once a minute).
function disconnected(why) {
  port = null;
  setState({ running: false, host: false, why });
  if (!retryTimer) {
    retryTimer = setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 60000);
  }
}

function onHostMessage(message) {
  if (!message || typeof message !== "object") return;
  if (message.type === "state") {
    retryDelay = 1000;
    setState(Object.assign({ host: true }, message));
    if (!Array.isArray(message.block) || message.block.length === 0) releaseAll();
    reportActive();
  } else if (message.type === "verdict") {
    applyVerdict(message);
  } else if (message.type === "error") {
    api.runtime.sendMessage({ type: "error", message: message.message }).catch(() => {});
  }
}

function setState(next) {
  state = next;
  applyRules();
  api.runtime.sendMessage({ type: "state", state }).catch(() => {});
}

async function applyRules() {
  const rules = growBuildRules(state, BLOCKED_PAGE);
  const existing = await api.declarativeNetRequest.getSessionRules();
  await api.declarativeNetRequest.updateSessionRules({
    removeRuleIds: existing.map((rule) => rule.id),
    addRules: rules,
  });
}

/** The address a tab shows, or the one Grow's page stands in for. */
function realAddress(url) {
  if (url && url.startsWith(BLOCKED_PAGE + "#")) return url.slice(BLOCKED_PAGE.length + 1);
  return url || "";
}

function send(message) {
  if (port) port.postMessage(message);
}

/** Nothing is blocked (a break, the session over): every tab on Grow's page gets its page. */
async function releaseAll() {
  for (const tab of await api.tabs.query({})) {
    const address = realAddress(tab.url);
    if (address !== tab.url) await api.tabs.update(tab.id, { url: address });
  }
}

/** Tells Grow the page in front of the person (its active tab in the focused window). */
async function reportActive() {
  if (!port) return;
  const tabs = await api.tabs.query({ active: true, lastFocusedWindow: true });
  const tab = tabs[0];
  send({ type: "site", tab: tab ? tab.id : null, url: tab ? realAddress(tab.url) : "" });
}

/** Shows Grow's page instead of a blocked page, and the page again once it is let through. */
async function applyVerdict(verdict) {
  if (typeof verdict.tab !== "number") return;
  let tab;
  try {
    tab = await api.tabs.get(verdict.tab);
  } catch (error) {
    return;
  }
  const onGrowsPage = tab.url && tab.url.startsWith(BLOCKED_PAGE + "#");
  if (realAddress(tab.url) !== verdict.url) return;
  if (verdict.blocked && !onGrowsPage) {
    await api.tabs.update(tab.id, { url: BLOCKED_PAGE + "#" + verdict.url });
  } else if (!verdict.blocked && onGrowsPage) {
    await api.tabs.update(tab.id, { url: verdict.url });
  }
}

api.tabs.onActivated.addListener(() => reportActive());
api.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (tab.active && (change.url || change.status === "complete")) reportActive();
});
api.windows.onFocusChanged.addListener((windowId) => {
  if (windowId === api.windows.WINDOW_ID_NONE) {
    send({ type: "site", tab: null, url: "" });
  } else {
    reportActive();
  }
});

// Grow's page and the popup ask for the state and pass on "Allow 5 minutes".
api.runtime.onMessage.addListener((message, sender, reply) => {
  if (message && message.type === "get-state") {
    reply(state);
  } else if (message && message.type === "allow" && typeof message.url === "string") {
    send({ type: "allow", url: message.url, minutes: 5 });
    reply({ sent: Boolean(port) });
  }
});

connect();
