// The browser's own blocking rules (declarativeNetRequest) for what Grow blocks now.
//
// Grow sends each site as {host, path}, from the card's `site:` patterns
// (Sources/GrowKit/GrowConfig/SitePattern.swift). They mean the same here: a host is itself
// and every subdomain, over http or https and any port; a path is a prefix of the path and
// query. Allowed sites outrank blocked ones. A blocked page is replaced, before it loads, by
// Grow's page with the address after '#', so "Back to work" and "Allow 5 minutes" know it.

"use strict";

// Chromium allows 1000 regex rules per extension; a card lists a few.
const GROW_RULE_LIMIT = 400;

function growEscape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** An RE2 expression for every address on `site`, matching the whole address. */
function growSiteRegex(site) {
  const host = "^https?://([^/?#@]*\\.)?" + growEscape(site.host.toLowerCase()) + "(:[0-9]+)?";
  return site.path ? host + growEscape(site.path) + ".*$" : host + "([/?#].*)?$";
}

/** The session rules for `state` (the host's "state" message); none while nothing blocks. */
function growBuildRules(state, blockedPage) {
  if (!state || !state.running || !Array.isArray(state.block) || state.block.length === 0) {
    return [];
  }
  const rules = [];
  const allow = Array.isArray(state.allow) ? state.allow : [];
  for (const site of allow.slice(0, GROW_RULE_LIMIT / 2)) {
    rules.push({
      id: rules.length + 1,
      priority: 2,
      action: { type: "allow" },
      condition: { regexFilter: growSiteRegex(site), isUrlFilterCaseSensitive: false, resourceTypes: ["main_frame"] },
    });
  }
  for (const site of state.block.slice(0, GROW_RULE_LIMIT / 2)) {
    rules.push({
      id: rules.length + 1,
      priority: 1,
      action: { type: "redirect", redirect: { regexSubstitution: blockedPage + "#\\0" } },
      condition: { regexFilter: growSiteRegex(site), isUrlFilterCaseSensitive: false, resourceTypes: ["main_frame"] },
    });
  }
  return rules;
}

if (typeof module !== "undefined") {
  module.exports = { growBuildRules, growSiteRegex };
}
