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
