// The extension's words in the browser's language, from _locales/LL/messages.json (the
// WebExtensions i18n API: the browser cannot read Grow's gettext catalogues in po/). English
// is the default; browser/_locales/en/messages.json describes each message for translators.

"use strict";

const words = typeof browser !== "undefined" ? browser.i18n : chrome.i18n;
/** The language the messages come in (`de`, `pt-BR`), as its messages.json says: the
 *  browser's choice among _locales/, which neither getUILanguage() nor @@ui_locale tells
 *  (headless Chromium with --lang=de answers en-US to both and reads _locales/de). */
const language = words.getMessage("languageTag") || "en";

/** The message `key` with its placeholders ($CARD$, $TIME$…) filled by `values`, in order. */
function say(key, ...values) {
  return words.getMessage(key, values.map(String)) || key;
}

/** `key_one`, `key_few`, `key_many` or `key_other` for `count`, as the language's plural rule
 *  picks it (Intl.PluralRules); `key_other` when the language has no such form. */
function sayCount(key, count) {
  const form = new Intl.PluralRules(language).select(count);
  return words.getMessage(key + "_" + form, [String(count)]) || say(key + "_other", count);
}

/** Puts each `data-message` element's message in it, and the page's language on <html>. */
function translatePage() {
  document.documentElement.lang = language;
  for (const element of document.querySelectorAll("[data-message]")) {
    element.textContent = say(element.dataset.message);
  }
}

translatePage();
