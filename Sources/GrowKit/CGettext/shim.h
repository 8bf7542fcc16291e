// glibc's gettext (libintl.h), which Swift's Glibc module does not export. Part of libc: no
// library to link. Wrapped in functions because glibc may define dgettext and dngettext as
// macros, which Swift does not import.
#include <libintl.h>
#include <locale.h>

static inline const char *grow_dgettext(const char *domain, const char *msgid) {
  return dgettext(domain, msgid);
}

static inline const char *grow_dngettext(
    const char *domain, const char *msgid, const char *msgid_plural, unsigned long n) {
  return dngettext(domain, msgid, msgid_plural, n);
}

// Where the domain's catalogues are (DIR/LANG/LC_MESSAGES/DOMAIN.mo), read as UTF-8 whatever
// the locale's character set, and the messages locale taken from the environment (LC_ALL,
// LC_MESSAGES, LANG; LANGUAGE picks the languages).
static inline void grow_bind_domain(const char *domain, const char *directory) {
  setlocale(LC_MESSAGES, "");
  bindtextdomain(domain, directory);
  bind_textdomain_codeset(domain, "UTF-8");
}

// The person's LC_TIME (weekday and month names, how a clock time is written), read into a
// locale object of its own rather than the process's global locale, so no thread's
// setlocale can change it underfoot. The locale named by LC_ALL, LC_TIME or LANG; the C
// locale when that one is not installed (English names, a 24-hour clock).
#include <langinfo.h>
#include <time.h>

static inline locale_t grow_time_locale(void) {
  locale_t locale = newlocale(LC_TIME_MASK, "", (locale_t)0);
  return locale ? locale : newlocale(LC_TIME_MASK, "C", (locale_t)0);
}

// wday 0 is Sunday, as in struct tm.
static inline const char *grow_weekday_name(int wday, int abbreviated, locale_t locale) {
  return nl_langinfo_l((abbreviated ? ABDAY_1 : DAY_1) + wday, locale);
}

// month 0 is January, as in struct tm: the name as it stands alone (a table's row, a
// calendar's page), which languages that inflect it word apart from a date's ("декабрь", not
// the "декабря" of "4 декабря").
static inline const char *grow_month_name(int month, int abbreviated, locale_t locale) {
  return nl_langinfo_l((abbreviated ? _NL_ABALTMON_1 : __ALTMON_1) + month, locale);
}

static inline const char *grow_time_format(locale_t locale) { return nl_langinfo_l(T_FMT, locale); }
static inline const char *grow_ampm_time_format(locale_t locale) {
  return nl_langinfo_l(T_FMT_AMPM, locale);
}

static inline size_t grow_strftime(
    char *buffer, size_t size, const char *format, const struct tm *parts, locale_t locale) {
  return strftime_l(buffer, size, format, parts, locale);
}
