import Foundation
import GrowTestSupport
import Testing

/// po/: the template scripts/extract-messages makes from the code, and the shipped
/// translations, compiled as `make install` compiles them.
@Suite struct CatalogueTests {
  static let po = RepoPaths.root.appendingPathComponent("po")

  /// The template is what the code says now, and it has every call the code makes: the
  /// extractor (a Swift tokenizer in Python) and MessageTests' scanner of the same sources
  /// (a regular expression and bracket matching) count the same calls.
  @Test func theTemplateHoldsEveryMessageTheCodeHas() throws {
    let check = try Command.run(
      RepoPaths.root.appendingPathComponent("scripts/extract-messages").path, ["--check"],
      timeout: 60)
    #expect(check.status == 0, "\(check.stderr)")

    let pot = try String(
      contentsOf: Self.po.appendingPathComponent("grow.pot"), encoding: .utf8)
    let places = pot.split(separator: "\n").filter { $0.hasPrefix("#: ") }
      .flatMap { $0.dropFirst(3).split(separator: " ") }
    var calls = 0
    for folder in ["Sources", "Plugins"] {
      let root = RepoPaths.root.appendingPathComponent(folder)
      let files = FileManager.default.enumerator(atPath: root.path)
      while let file = files?.nextObject() as? String {
        guard file.hasSuffix(".swift"), !file.hasPrefix("GrowTestSupport/"),
          !file.contains(".build/")
        else { continue }
        let source = try String(
          contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        calls += try MessageUse.all(in: source).count
      }
    }
    #expect(calls > 100)
    #expect(
      places.count == calls, "po/grow.pot has \(places.count) places, the code \(calls) calls")
  }

  /// A pseudo-language that marks every message (‹…›): in these commands' output no English
  /// sentence is left outside a mark, so each goes through the catalogue.
  @Test func underAPseudoLocaleTheseCommandsSayNothingUntranslated() throws {
    // gettext's own tools: msgen copies each msgid (and msgid_plural) into its msgstr, and
    // msgfilter marks every line of it, leaving the placeholders' values outside the marks
    // (a value made of English words is found too); the template's header gets English plural rules (and
    // is no longer fuzzy, which msgfmt would leave out).
    let pot = try String(
      contentsOf: Self.po.appendingPathComponent("grow.pot"), encoding: .utf8
    ).replacingOccurrences(
      of: "nplurals=INTEGER; plural=EXPRESSION;", with: "nplurals=2; plural=(n != 1);"
    ).replacingOccurrences(of: "#, fuzzy\n", with: "")
    let made = try Command.run(
      "sh",
      [
        "-c",
        "msgen - | msgfilter --keep-header -i - -o - sed -e 's/^/‹/' -e 's/$/›/' "
          + "-e 's/{/›{/g' -e 's/}/}‹/g'",
      ], stdin: pot, timeout: 60)
    try #require(made.status == 0, "msgen | msgfilter: \(made.stderr)")
    let pseudo = made.stdout
    let directory = try Catalogues.compile([("eo", pseudo)])
    defer { try? FileManager.default.removeItem(at: directory) }
    // The daemon words its refusals (the D-Bus error's text), so it reads the catalogue too.
    let language = ["LC_ALL": "C.UTF-8", "LANGUAGE": "eo", "TEXTDOMAINDIR": directory.path]
    let harness = try DaemonHarness(environment: language)
    let environment = harness.environment
    var said: [String] = []
    for command in [
      ["status"], ["start", "nosuchcard"], ["pause"], ["skip"], ["start"], ["pause"], ["pause"],
      ["status"], ["stop"],
    ] {
      let run = try Command.run(Binaries.grow, command, environment: environment)
      said += (run.stdout + run.stderr).split(separator: "\n").map(String.init)
    }
    #expect(said.count >= 9, "\(said)")
    let untranslated = said.filter { Self.englishOutsideMarks($0) }
    #expect(untranslated == [], "sentences not through a Message: \(untranslated)")
  }

  /// The pseudo-language of `underAPseudoLocaleTheseCommandsSayNothingUntranslated`,
  /// compiled under a new directory as "eo".
  func pseudoCatalogue() throws -> URL {
    let pot = try String(
      contentsOf: Self.po.appendingPathComponent("grow.pot"), encoding: .utf8
    ).replacingOccurrences(
      of: "nplurals=INTEGER; plural=EXPRESSION;", with: "nplurals=2; plural=(n != 1);"
    ).replacingOccurrences(of: "#, fuzzy\n", with: "")
    let made = try Command.run(
      "sh",
      [
        "-c",
        "msgen - | msgfilter --keep-header -i - -o - sed -e 's/^/‹/' -e 's/$/›/' "
          + "-e 's/{/›{/g' -e 's/}/}‹/g'",
      ], stdin: pot, timeout: 60)
    try #require(made.status == 0, "msgen | msgfilter: \(made.stderr)")
    return try Catalogues.compile([("eo", made.stdout)])
  }

  /// The commands a person reads, under the pseudo-language: the help, the error paths (an
  /// unknown command, a wrong option, an unknown card, a stray word), stats, history, garden
  /// and the report's labels over a real history, doctor, a config with broken lines (a
  /// window pattern among them), goals, tasks and sync. What is left outside the marks is no sentence: names, durations, dates
  /// and the C locale's own weekday and month names (LC_TIME's words, not gettext's).
  @Test func underAPseudoLocaleNoCommandLeavesEnglish() throws {
    let directory = try pseudoCatalogue()
    defer { try? FileManager.default.removeItem(at: directory) }
    let language = ["LC_ALL": "C.UTF-8", "LANGUAGE": "eo", "TEXTDOMAINDIR": directory.path]
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle, environment: language)
    // A history to show: one-second phases that follow each other, then a stop.
    _ = try harness.grow("start")
    _ = try harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) >= 1 }
    _ = try harness.grow("stop")
    try harness.waitForHistory()

    let broken = directory.appendingPathComponent("broken.ini").path
    let brokenLines = "[timer]\nfocus = soon\nthis line is no setting\n"
    try (brokenLines + "[card.work]\ndistractions = /youtube\n").write(
      toFile: broken, atomically: true, encoding: .utf8)
    // Plugins the daemon would refuse: one nobody has, a program whose exec cannot be split.
    let refused = directory.appendingPathComponent("plugins.ini").path
    try "[plugins]\nenable = nosuch, hook\n[plugin.hook]\nexec = \"unclosed\n".write(
      toFile: refused, atomically: true, encoding: .utf8)
    let svg = directory.appendingPathComponent("week.svg").path
    let commands: [[String]] =
      [
        [], ["help"], ["nosuchcommand"], ["statz"], ["help", "nosuchcommand"],
        ["stats", "--bogus"], ["stats", "--week", "extra"], ["history", "--from"],
        ["start", "nosuchcard"], ["stats"], ["stats", "--day"], ["stats", "--year"], ["history"],
        ["garden"], ["garden", "--week"], ["report", "--svg", svg, "--week"], ["report"],
        ["history", "frobnicate"], ["config", "check", broken],
        ["config", "check", refused], ["goal"], ["goal", "list"],
        ["tasks"], ["task", "done", "99"], ["journey"], ["sync", "status"], ["extend", "0s"],
        ["status"], ["logs", "--lines"], ["cards"], ["plugins"], ["plugins", "enable", "nosuch"],
        ["dnd", "status"], ["dnd", "off", "--for", "5m"],
        ["history", "edit", "1", "--outcome", "stopped"],
        ["history", "edit", "1", "--card", "work"], ["history", "edit", "1", "--outcome", "late"],
        ["history", "delete", "--from", "2020-01-01", "--to", "2020-01-02"],
        ["history", "delete", "--from", "2020-01-01", "--to", "2020-01-02", "--yes"],
        ["history", "delete", "first"], ["history", "delete", "1"],
        // Set-up in the harness's own HOME and XDG directories, then undone.
        ["install"], ["install", "--user", "--autostart", "--systemd"],
        ["install", "--user", "--remove", "--browser"], ["install", "--user", "--remove"],
        ["install", "--user", "--autostart", "--browser"], ["install", "--user", "--remove"],
        ["logs", "--lines", "many"], ["plugin"], ["plugin", "frobnicate"],
        ["plugin", "new", "mine", "--swift", "--shell"], ["plugin", "new", "Bad_Name"],
        ["plugin", "install"], ["plugin", "install", directory.path + "/nosuch"],
        ["plugin", "install", directory.path],
      ] + Self.commandNames.map { ["help", $0] }
    var untranslated: [String] = []
    var lines = 0
    // What is the person's own, never a sentence of Grow's: the card, the files, the config's
    // lines quoted back.
    // libcanberra's own words for why no sound server was reached (ca_strerror), as strerror's.
    // The test desktop's window manager, by its own name; the refused plugins' config: the
    // key ("[plugins] enable: ", a name in every language, whose section withoutData drops)
    // and the person's value. The file name a program plugin must have.
    let data = [
      directory.path, "work", "this line is no setting", "soon", "/youtube", "Not available",
      "Openbox", " enable: ", "\"unclosed", "plugin.hook", "grow-plugin-ID",
    ]
    for command in commands {
      let run = try Command.run(Binaries.grow, command, environment: harness.environment)
      var output = (run.stdout + run.stderr).split(separator: "\n").map(String.init)
      // After `grow help status`'s details: the template's fields and the JSON keys, machine
      // output's names; what each key holds is prose, wrapped over lines, so it is checked as
      // one text without the keys.
      if command == ["help", "status"],
        let fields = output.firstIndex(where: { $0.hasPrefix("  {icon} {remaining}") })
      {
        let keyColumn = String(repeating: " ", count: 22)
        let schema = output[(fields + 1)...].map { line in
          line.hasPrefix(keyColumn) && line.dropFirst(22).first != " "
            ? String(line.drop { $0 == " " }.drop { $0 != " " }) : line
        }.joined(separator: " ")
        #expect(schema.contains("‹"), "\(schema)")
        if Self.englishOutsideMarks(schema) {
          untranslated.append("grow help status (the keys of --json): \(schema)")
        }
        output.removeSubrange(fields...)
      }
      for line in output {
        lines += 1
        // A command's synopsis is its words and options, the same in every language.
        if command.first == "help", line.hasPrefix("‹usage: grow ›") { continue }
        // Lines `grow install` gives to be typed or pasted: commands, not sentences.
        if command.first == "install", line.hasPrefix("  exec ") || line.hasPrefix("  systemctl ") {
          continue
        }
        // The outcomes and doctor's JSON keys are values.
        let line = Self.withoutPaths(line)
        let values =
          [
            "completed, skipped, stopped, abandoned", #""ok""#, #""checks""#,
            #""status", "message", "fix""#, "hook",
          ] + Self.pluginIDs
        if Self.englishOutsideMarks(Self.withoutData(line, data + values + command)) {
          untranslated.append("grow \(command.joined(separator: " ")): \(line)")
        }
      }
    }
    // grow browser-host: what it says of the browser's messages (a message that is no JSON
    // object, one of a type it does not know), before the browser closes its end.
    let frame = { (body: String) in String(UnicodeScalar(UInt8(body.utf8.count))) + "\0\0\0" + body
    }
    let host = try Command.run(
      Binaries.grow, ["browser-host"], environment: harness.environment,
      stdin: frame("nope!") + frame(#"{"type":"frobnicate"}"#), timeout: 60)
    #expect(host.stderr.contains("‹"), "\(host.stderr)")
    for line in host.stderr.split(separator: "\n").map(String.init)
    where Self.englishOutsideMarks(Self.withoutData(line, data + ["browser-host", "frobnicate"])) {
      untranslated.append("grow browser-host: \(line)")
    }
    // The report's words are its <text> elements.
    let picture = try String(contentsOfFile: svg, encoding: .utf8)
    let texts = picture.matches(of: try Regex(#"<text[^>]*>([^<]*)</text>"#)).map {
      String($0.output[1].substring ?? "")
    }
    #expect(texts.count > 5, "\(picture.prefix(500))")
    for text in texts where Self.englishOutsideMarks(Self.withoutData(text, data)) {
      untranslated.append("grow report (svg): \(text)")
    }
    // grow doctor, every line: with the desktop here, and without one (below).
    untranslated += try Self.doctorsEnglish(harness.grow("doctor").stdout, data)
    untranslated += try Self.withoutADesktopsEnglish(directory: directory, data)
    #expect(lines > 300, "only \(lines) lines")
    #expect(
      untranslated == [],
      "sentences not through a Message:\n\(untranslated.joined(separator: "\n"))")
  }

  /// `line` without the paths in it (a plugin's location, a file): the person's, no sentence.
  static func withoutPaths(_ line: String) -> String {
    line.replacingOccurrences(of: "›/[^ ‹]*", with: "›", options: .regularExpression)
      .split(separator: " ", omittingEmptySubsequences: false)
      .filter { !$0.hasPrefix("/") }.joined(separator: " ")
  }

  /// The lines of `grow doctor`'s `output` with English outside the marks. A line is `MARK
  /// CHECK: MESSAGE`; the check's name (`session bus`, `plugin x11`) is `grow doctor --json`'s
  /// key, no sentence; so is a plugin's source (`built-in`), a value of `grow plugins --json`.
  static func doctorsEnglish(_ output: String, _ data: [String]) -> [String] {
    let check = #/^‹›.‹ ›[^‹]*‹: ›/#
    let sources = ["built-in", "library", "executable"]
    return output.split(separator: "\n").map(String.init).filter { line in
      englishOutsideMarks(
        withoutData(withoutPaths(line.replacing(check, with: "‹›")), data + sources))
    }.map { "grow doctor: \($0)" }
  }

  /// A daemon with neither X nor Wayland, whose display plugins cannot run: what `grow
  /// plugins` says of each (its reason, its note), `grow doctor`, and the daemon's refusals of
  /// a plugin it does not have and of one that is not enabled, under the pseudo-language.
  static func withoutADesktopsEnglish(directory: URL, _ data: [String]) throws -> [String] {
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = x11, wayland, breakscreen, notify\n",
      environment: [
        "LC_ALL": "C.UTF-8", "LANGUAGE": "eo", "TEXTDOMAINDIR": directory.path, "DISPLAY": "",
        "WAYLAND_DISPLAY": "",
      ])
    var untranslated: [String] = []
    let plugins = try harness.grow("plugins")
    #expect(plugins.stdout.contains("x11"), "\(plugins.stdout)")
    let values = pluginIDs
    for line in (plugins.stdout + plugins.stderr).split(separator: "\n").map(String.init)
    where englishOutsideMarks(withoutData(withoutPaths(line), data + values)) {
      untranslated.append("grow plugins (no desktop): \(line)")
    }
    untranslated += try doctorsEnglish(harness.grow("doctor").stdout, data + values)
    for command in [["plugins", "reload", "nosuch"], ["plugins", "reload", "dnd"]] {
      let refused = try Command.run(Binaries.grow, command, environment: harness.environment)
      #expect(refused.status != 0, "\(command): \(refused.stdout)")
      for line in refused.stderr.split(separator: "\n").map(String.init)
      where englishOutsideMarks(withoutData(line, data + values + command)) {
        untranslated.append("grow \(command.joined(separator: " ")): \(line)")
      }
    }
    return untranslated
  }

  /// The built-in plugins' ids, the same in every language.
  static let pluginIDs = [
    "gnome-pomodoro", "breakscreen", "statusbar", "wayland", "browser", "notify", "sound", "tray",
    "x11", "dnd",
  ]

  /// The commands `grow help` lists, each of whose details `grow help COMMAND` says.
  static let commandNames = [
    "daemon", "start", "pause", "resume", "toggle", "skip", "stop", "extend", "shorten", "status",
    "cards", "config", "plugins", "plugin", "logs", "dnd", "stats", "history", "sync", "goal",
    "task", "tasks", "journey", "garden", "report", "install", "doctor", "completions", "reload",
    "demo", "version", "help",
  ]

  /// `line` without what is no sentence of Grow's: `data` (the person's words: the command
  /// line, a card, a path), `grow`, an option (`--card`), a usage synopsis's words (`[--from
  /// DATE]`, `NAME`), and the C locale's weekday and month abbreviations ("Fri", "Dec"), which
  /// under LC_ALL=C.UTF-8 are LC_TIME's English, that no catalogue translates.
  static func withoutData(_ line: String, _ data: [String]) -> String {
    let names = [
      "grow", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Jan", "Feb", "Mar", "Apr", "May",
      "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    var line = line.split(separator: " ", omittingEmptySubsequences: false).map { word in
      let bare = word.filter { $0.isLetter || $0 == "-" }
      if names.contains(bare) || word.hasPrefix("--") || word.hasPrefix("[")
        || (bare.count > 1 && bare.allSatisfy { $0.isUppercase || $0 == "-" })
      {
        return String(word.filter { $0 == "‹" || $0 == "›" })  // the marks stay
      }
      return String(word)
    }.joined(separator: " ")
    for item in data.filter({ !$0.isEmpty }).sorted(by: { $0.count > $1.count }) {
      line = line.replacingOccurrences(of: item, with: " ")
    }
    return line
  }

  /// Two words in a row outside ‹…› and the `grow: ` prefix, the first English (two ASCII
  /// letters or more), the second with a letter ("completed, 0s"): a name in quotes or a
  /// clock ("'work' · 25:00") is not a sentence.
  static func englishOutsideMarks(_ line: String) -> Bool {
    var outside = ""
    var depth = 0
    for character in line {
      if character == "‹" {
        depth += 1
      } else if character == "›" {
        depth -= 1
      } else if depth == 0 {
        outside.append(character)
      }
    }
    if outside.hasPrefix("grow: ") { outside.removeFirst(6) }
    let words = outside.split { !$0.isLetter && !$0.isNumber && $0 != "'" }
    for (first, second) in zip(words, words.dropFirst())
    where first.filter(\.isLetter).count > 1 && first.allSatisfy(\.isASCII)
      && second.count > 1 && second.contains(where: \.isLetter)
    {
      return true
    }
    return false
  }

  /// Every translation in po/*.po has the placeholders of its English, no more and no fewer
  /// (msgfmt --check knows nothing of Grow's {names}): a lost {card} would print nothing where
  /// the card's name belongs.
  @Test func everyTranslationKeepsItsPlaceholders() throws {
    let languages = try FileManager.default.contentsOfDirectory(atPath: Self.po.path)
      .filter { $0.hasSuffix(".po") }
    #expect(!languages.isEmpty, "no po/LL.po")
    let placeholder = try Regex(#"\{([a-zA-Z]+)\}"#)
    for language in languages {
      // msgcat joins each string onto one line.
      let joined = try Command.run(
        "msgcat", ["--no-wrap", Self.po.appendingPathComponent(language).path])
      var english: Set<String> = []
      var mismatches: [String] = []
      for line in joined.stdout.split(separator: "\n") {
        let names = Set(line.matches(of: placeholder).map { String($0.output[1].substring ?? "") })
        if line.hasPrefix("msgid ") {
          english = names
        } else if line.hasPrefix("msgid_plural ") {
          english.formUnion(names)
        } else if line.hasPrefix("msgstr"), !line.hasSuffix(" \"\""), names != english {
          mismatches.append(String(line))
        }
      }
      #expect(mismatches == [], "\(language)")
    }
  }

  /// Every po/LL.po is whole and says what it is: each message of the template translated
  /// (none untranslated or fuzzy, which msgfmt would leave in English), `Language: LL`, and the
  /// plural rule gettext's own table has for LL (what `msginit -l LL` writes), so a count
  /// takes the language's forms.
  @Test func everyShippedCatalogueIsCompleteWithItsLanguagesPluralRule() throws {
    let pot = try String(contentsOf: Self.po.appendingPathComponent("grow.pot"), encoding: .utf8)
    let messages = pot.split(separator: "\n").filter { $0.hasPrefix("msgid ") }.count - 1
    let languages = try Catalogues.shippedLanguages()
    #expect(!languages.isEmpty, "no po/LL.po")
    for language in languages {
      let file = Self.po.appendingPathComponent("\(language).po").path
      let statistics = try Command.run(
        "msgfmt", ["--check", "--statistics", "-o", "/dev/null", file])
      #expect(statistics.status == 0, "\(language): \(statistics.stderr)")
      #expect(
        statistics.stderr == "\(messages) translated messages.\n",
        "\(language).po is not complete: \(statistics.stderr)")

      let text = try Catalogues.shipped(language)
      #expect(text.contains("\"Language: \(language)\\n\""), "\(language).po's Language header")
      let template = try Command.run(
        "msginit",
        ["--no-translator", "--no-wrap", "-l", language, "-i", "-", "-o", "-"], stdin: pot)
      let rule = template.stdout.split(separator: "\n").first { $0.hasPrefix("\"Plural-Forms:") }
      #expect(rule != nil, "msginit -l \(language): \(template.stderr)")
      if let rule {
        #expect(text.contains(rule + "\n"), "\(language).po's Plural-Forms is not \(rule)")
      }
    }
  }

  /// `grow demo` in French: how each phase ended and the time left are in the reader's
  /// language too, not only the lines around them.
  @Test func theDemoSpeaksTheReadersLanguage() throws {
    let directory = try Catalogues.compileShipped(["fr"])
    defer { try? FileManager.default.removeItem(at: directory) }
    let harness = try DaemonHarness(startDaemon: false)
    let environment = harness.bus.environment.merging([
      "LC_ALL": "C.UTF-8", "LANGUAGE": "fr", "TEXTDOMAINDIR": directory.path,
    ]) { $1 }
    let demo = try Command.run(Binaries.grow, ["demo"], environment: environment, timeout: 60)
    #expect(demo.status == 0, "\(demo.stderr)")
    for said in ["■ concentration terminée", "■ pause courte terminée", " encore 0:0"] {
      #expect(demo.stdout.contains(said), "\(said): \(demo.stdout)")
    }
    #expect(!demo.stdout.contains("completed") && !demo.stdout.contains(" left"))
  }

  /// What a shipped language says, read from the CLI and the daemon.
  struct Spoken {
    /// `grow status` without a daemon, from its start.
    var noDaemon: String
    /// In `grow status` with the daemon idle.
    var idle: String
    /// In `grow status` during focus on the default card.
    var focusing: String
    /// `grow resume` during focus, from its start.
    var notPaused: String
    /// Today's figures with nothing completed: the plural rule at 0.
    var noneCompleted: String
    /// "N more problems not shown", by N.
    var moreProblems: [Int: String]
  }

  /// French and Brazilian Portuguese take the singular for 0 (n > 1), Spanish the plural
  /// (n != 1), Russian its three forms.
  static let spoken: [String: Spoken] = [
    "de": Spoken(
      noDaemon: "grow: der Grow-Dienst läuft nicht",
      idle: "bereit · 'grow start [KARTE]' beginnt", focusing: "Fokus für 'work' · noch ",
      notPaused: "grow: nicht pausiert; Fokus läuft", noneCompleted: "heute: 0 geschafft, ",
      moreProblems: [
        1: "1 weiteres Problem nicht angezeigt", 2: "2 weitere Probleme nicht angezeigt",
        5: "5 weitere Probleme nicht angezeigt",
      ]),
    "es": Spoken(
      noDaemon: "grow: el demonio de grow no se está ejecutando",
      idle: "inactivo · 'grow start [TARJETA]' comienza una sesión de concentración",
      focusing: "concentración en 'work' · quedan ",
      notPaused: "grow: no está en pausa; concentración en curso",
      noneCompleted: "hoy: 0 sesiones completadas, ",
      moreProblems: [
        1: "1 problema más sin mostrar", 2: "2 problemas más sin mostrar",
        5: "5 problemas más sin mostrar",
      ]),
    "fr": Spoken(
      noDaemon: "grow: le démon grow n'est pas lancé",
      idle: "au repos · 'grow start [CARTE]' commence une séance de concentration",
      focusing: "concentration sur 'work' · reste ",
      notPaused: "grow: pas en pause\u{A0}; la concentration est en cours",
      noneCompleted: "aujourd'hui\u{A0}: 0 séance terminée, ",
      moreProblems: [
        1: "1 autre problème non affiché", 2: "2 autres problèmes non affichés",
        5: "5 autres problèmes non affichés",
      ]),
    "pt_BR": Spoken(
      noDaemon: "grow: o daemon do grow não está em execução",
      idle: "inativo · 'grow start [CARTÃO]' começa uma sessão de foco",
      focusing: "foco em 'work' · faltam ",
      notPaused: "grow: não está em pausa; foco em andamento",
      noneCompleted: "hoje: 0 sessão concluída, ",
      moreProblems: [
        1: "mais 1 problema não mostrado", 2: "mais 2 problemas não mostrados",
        5: "mais 5 problemas não mostrados",
      ]),
    "ru": Spoken(
      noDaemon: "grow: демон grow не запущен",
      idle: "готов · 'grow start [КАРТОЧКА]' начинает сеанс фокуса",
      focusing: "фокус: 'work' · осталось ",
      notPaused: "grow: не на паузе; идёт фокус",
      noneCompleted: "сегодня: 0 фаз завершено, ",
      moreProblems: [
        1: "ещё 1 проблема не показана", 2: "ещё 2 проблемы не показаны",
        5: "ещё 5 проблем не показано",
      ]),
  ]

  /// Every shipped catalogue, compiled as `make install` compiles it, is what `grow` speaks
  /// under LANGUAGE: without a daemon (the CLI's own words, as the catalogue has them), idle,
  /// focusing and refusing (the daemon words its refusals too), and counted in each of the
  /// language's plural forms.
  @Test func everyShippedLanguageIsSpokenWithItsPluralForms() throws {
    let languages = try Catalogues.shippedLanguages()
    #expect(
      Set(Self.spoken.keys).subtracting(languages).isEmpty,
      "languages this test reads but po/ does not ship: \(languages)")
    let directory = try Catalogues.compileShipped()
    defer { try? FileManager.default.removeItem(at: directory) }
    let harness = try DaemonHarness(startDaemon: false)
    func grow(_ language: String, _ arguments: String...) throws -> String {
      let environment = harness.environment.merging([
        "LC_ALL": "C.UTF-8", "LANGUAGE": language, "TEXTDOMAINDIR": directory.path,
      ]) { $1 }
      let run = try Command.run(Binaries.grow, arguments, environment: environment)
      return run.stdout + run.stderr
    }
    // Each language, from its po file: no list of languages to keep in step with po/.
    let english =
      "the grow daemon is not running; start it with 'grow daemon &', or run "
      + "'grow install --user' once so the first command starts it (and your session at login)"
    for language in languages {
      let translated = try #require(try Catalogues.translation(of: english, in: language))
      #expect(translated != english && !translated.isEmpty, "\(language)")
      #expect(try grow(language, "status") == "grow: \(translated)\n", "\(language)")
    }

    // A config with 100 + N problems: the first 100 are listed, then "N more problems not
    // shown", in each plural form of each language.
    for count in [1, 2, 5] {
      let config = directory.appendingPathComponent("config-\(count).ini").path
      let keys = (1...(100 + count)).map { "unknownkey\($0) = 1" }.joined(separator: "\n")
      try "[timer]\n\(keys)\n".write(toFile: config, atomically: true, encoding: .utf8)
      for language in languages {
        guard let words = Self.spoken[language]?.moreProblems[count] else { continue }
        let said = try grow(language, "config", "check", config)
        #expect(said.contains(words), "\(language): \(said.suffix(300))")
      }
    }

    // With a daemon in the language: idle, focusing, a refusal.
    for language in languages {
      guard let spoken = Self.spoken[language] else { continue }
      #expect(try grow(language, "status").hasPrefix(spoken.noDaemon))
      let daemon = try DaemonHarness(environment: [
        "LC_ALL": "C.UTF-8", "LANGUAGE": language, "TEXTDOMAINDIR": directory.path,
      ])
      func said(_ arguments: String...) throws -> String {
        let run = try Command.run(Binaries.grow, arguments, environment: daemon.environment)
        return run.stdout + run.stderr
      }
      let idle = try said("status")
      #expect(idle.contains(spoken.idle), "\(language): \(idle)")
      #expect(idle.contains(spoken.noneCompleted), "\(language): \(idle)")
      _ = try said("start")
      let focusing = try said("status")
      #expect(focusing.contains(spoken.focusing), "\(language): \(focusing)")
      let refused = try said("resume")
      #expect(refused.hasPrefix(spoken.notPaused), "\(language): \(refused)")
    }
  }
}
