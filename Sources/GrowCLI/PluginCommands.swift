import GrowDBus
import GrowPluginKit

/// A plugin as `grow plugins` shows it.
struct PluginReport: Encodable {
  var id: String
  var source: String
  var location: String
  var state: String
  var error: String?
  var summary: String?
  var note: String?
  /// An external plugin's last lines on stderr.
  var lastOutput: [String]?

  enum CodingKeys: String, CodingKey {
    case id, source, location, state, error, summary, note
    case lastOutput = "last_output"
  }

  init(_ values: [String: BusValue]) {
    func text(_ key: String) -> String { values[key]?.stringValue ?? "" }
    id = text("Id")
    source = text("Source")
    location = text("Location")
    state = text("State")
    error = text("Error").isEmpty ? nil : text("Error")
    summary = text("Summary").isEmpty ? nil : text("Summary")
    note = text("Note").isEmpty ? nil : text("Note")
    if case .array(_, let lines)? = values["LastOutput"], !lines.isEmpty {
      lastOutput = lines.compactMap(\.stringValue)
    }
  }
}

extension Commands {
  static func runPlugins(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "plugins")
    let client = try Client()
    if arguments.positionals.first == "reload" {
      try expect(arguments, atMost: 2, "plugins")
      guard arguments.positionals.count == 2 else {
        throw .usage("usage: grow plugins reload ID")
      }
      // The plugin's settings as the file has them now; a reload that restarted or started it
      // already needs no second restart.
      let id = arguments.positionals[1]
      var changes: [String] = []
      do {
        changes = try reloadConfiguration(client)
      } catch .refused {
        // A daemon without a config file (grow demo): only the restart.
      }
      let done = changes.contains {
        $0.hasPrefix("restarted plugin '\(id)'") || $0.hasPrefix("started plugin '\(id)'")
      }
      if !done {
        try client.call("Reload", [.string(id)], interface: GrowBusAPI.pluginsInterface)
      }
    } else {
      try expect(arguments, atMost: 0, "plugins")
    }
    let reply = try client.call("List", interface: GrowBusAPI.pluginsInterface)
    guard case .array(_, let items)? = reply.first else { return }
    let plugins = items.compactMap(\.vardictEntries).map(PluginReport.init)
    if arguments.flag("json") { return say(jsonText(plugins)) }
    let idWidth = plugins.map(\.id.count).max() ?? 0
    let stateWidth = plugins.map(\.state.count).max() ?? 0
    for plugin in plugins {
      var line =
        plugin.id.fitted(toWidth: idWidth) + "  "
        + plugin.state.fitted(toWidth: stateWidth) + "  "
        + plugin.source
      if !plugin.location.isEmpty { line += " " + plugin.location }
      say(line)
      if let summary = plugin.summary { say("    \(summary)") }
      if let note = plugin.note { say("    note: \(note)") }
      if let error = plugin.error {
        say("    \(plugin.state == "failed" ? "error" : "why"): \(error)")
      }
      if let lastOutput = plugin.lastOutput, plugin.state != "running" {
        say("    its last output (stderr):")
        for line in lastOutput { say("      \(line)") }
      }
    }
  }
}
