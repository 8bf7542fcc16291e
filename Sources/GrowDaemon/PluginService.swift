import GrowDBus
import GrowPluginKit

/// Serves `org.grow.Grow1.Plugins`: what `grow plugins` shows, and reloading one plugin.
@MainActor
struct PluginService {
  let host: PluginHost
  let object: BusObject

  func install() {
    object.add(
      BusInterface(
        name: GrowBusAPI.pluginsInterface,
        methods: [
          .init(
            "List", outputs: [.init("plugins", "aa{sv}")],
            doc: "Every plugin the config names or the daemon found, one dictionary each: "
              + "Id (s); Source (s: built-in, library, executable, unknown); Location (s: its "
              + "file); State (s: running, disabled, unavailable, restarting, failed); Error "
              + "(s: why it is not running, in the daemon's language; empty when running); "
              + "Summary (s); Note (s: what it says of itself while it runs); Limit (s: "
              + "other-session, desktop-lacks or compositor-withholds when the session, "
              + "not Grow, keeps it from working; empty otherwise); LastOutput (as: an "
              + "external plugin's last lines on stderr)."
          ) { [host] _, _ in
            [.array(element: "a{sv}", host.all.map(Self.encode))]
          },
          .init(
            "Reload", inputs: [.init("id", "s")],
            doc: "Stops plugin ID and starts it again; answers once the new instance has "
              + "started (after the old one finished stopping), so List then shows its state.",
            answer: { [host] call, reply in
              do throws(PluginHostError) {
                try host.reload(call.firstString ?? "") { reply.send() }
              } catch {
                // The refusal is read by a person, in the daemon's language.
                let refusal: String = error.message
                reply.fail(BusError(name: GrowBusAPI.ErrorName.invalidArgument, message: refusal))
              }
            }),
        ]))
  }

  static func encode(_ record: PluginHost.Record) -> BusValue {
    .vardict([
      "Id": .string(record.id),
      "Source": .string(record.source.kind),
      "Location": .string(record.source.location),
      "State": .string(record.state.name),
      "Error": .string(record.state.reason ?? ""),
      "Summary": .string(record.summary),
      "Note": .string(record.note ?? ""),
      "Limit": .string(record.limit?.rawValue ?? ""),
      "LastOutput": .array(element: "s", record.lastOutput.map(BusValue.string)),
    ])
  }
}
