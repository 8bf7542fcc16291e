import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowLoop

/// Describes one D-Bus interface that an exported object implements.
///
/// From this one description `BusObject` answers calls (checking each call's signature, so a
/// malformed call gets `InvalidArgs` and never reaches the handler), serves
/// `org.freedesktop.DBus.Properties`, announces property changes as each property says it
/// does, and produces the introspection XML, documentation included
/// (`org.gtk.GDBus.DocString`, which gdbus-codegen turns into docs).
@MainActor
public struct BusInterface {
  public struct Argument: Sendable {
    public let name: String
    public let signature: String
    public let doc: String
    public init(_ name: String, _ signature: String, doc: String = "") {
      self.name = name
      self.signature = signature
      self.doc = doc
    }
  }

  public struct Method {
    public let name: String
    public let inputs: [Argument]
    public let outputs: [Argument]
    public let doc: String
    public let handler: (_ arguments: [BusValue], _ call: BusMessage) throws(BusError) -> [BusValue]
    /// For a method that answers later (`reply`): set by the second initializer, and then
    /// `handler` is not used.
    public let answer: ((_ call: BusMessage, _ reply: PendingReply) -> Void)?
    /// How long a reply given to `answer` waits before it expires (`PendingReply`).
    public let replyTimeout: TimeInterval
    /// For a method that builds its reply message itself (the third initializer): then
    /// neither `handler` nor `answer` is used.
    let replier: ((_ call: BusMessage) throws(BusError) -> BusMessage)?
    /// The inputs' signatures joined: what a call must carry.
    let inputSignature: String

    /// A method whose reply can take time: `answer` gets the call (its signature checked) and
    /// a `PendingReply` to answer once, now or later. Other calls are answered meanwhile. After
    /// `replyTimeout` seconds (D-Bus's usual 25 s, after which callers have given up) the
    /// caller is told NoReply and a later answer goes nowhere.
    public init(
      _ name: String, inputs: [Argument] = [], outputs: [Argument] = [], doc: String = "",
      replyTimeout: TimeInterval = PendingReply.defaultTimeout,
      answer: @escaping (_ call: BusMessage, _ reply: PendingReply) -> Void
    ) {
      self.init(
        name, inputs, outputs, doc, handler: { _, _ in [] }, answer: answer,
        replyTimeout: replyTimeout, replier: nil)
    }

    /// A method that answers at once with a reply message it builds for the call, e.g. with
    /// `call.reply(copying:)` from a body encoded ahead (GetStatus between state changes).
    @_spi(GrowHost) public init(
      _ name: String, inputs: [Argument] = [], outputs: [Argument] = [], doc: String = "",
      reply: @escaping (_ call: BusMessage) throws(BusError) -> BusMessage
    ) {
      self.init(
        name, inputs, outputs, doc, handler: { _, _ in [] }, answer: nil,
        replyTimeout: PendingReply.defaultTimeout, replier: reply)
    }

    public init(
      _ name: String, inputs: [Argument] = [], outputs: [Argument] = [], doc: String = "",
      handler:
        @escaping (_ arguments: [BusValue], _ call: BusMessage) throws(BusError) -> [BusValue]
    ) {
      self.init(
        name, inputs, outputs, doc, handler: handler, answer: nil,
        replyTimeout: PendingReply.defaultTimeout, replier: nil)
    }

    /// What the three public initializers share: one of `handler`, `answer` and `replier` is
    /// the method's.
    private init(
      _ name: String, _ inputs: [Argument], _ outputs: [Argument], _ doc: String,
      handler:
        @escaping (_ arguments: [BusValue], _ call: BusMessage) throws(BusError) -> [BusValue],
      answer: ((_ call: BusMessage, _ reply: PendingReply) -> Void)?,
      replyTimeout: TimeInterval,
      replier: ((_ call: BusMessage) throws(BusError) -> BusMessage)?
    ) {
      self.name = name
      self.inputs = inputs
      self.inputSignature = inputs.map(\.signature).joined()
      self.outputs = outputs
      self.doc = doc
      self.handler = handler
      self.answer = answer
      self.replyTimeout = replyTimeout
      self.replier = replier
    }
  }

  public struct Property {
    /// How a change of the property is announced: the value of its
    /// `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation. Caching clients (GDBus,
    /// Qt, sd-bus proxies) rely on it, so it must say what really happens.
    public enum ChangeSignal: String, Sendable {
      /// `PropertiesChanged` carries the new value whenever it changes.
      case emits = "true"
      /// `PropertiesChanged` names it among the invalidated properties, without the value.
      case invalidates
      /// It changes without a signal (with the clock): read it with `Get` when needed.
      case silent = "false"
      /// It never changes while the object exists.
      case const
    }

    public let name: String
    public let signature: String
    public let changes: ChangeSignal
    public let doc: String
    public let get: () -> BusValue
    /// nil for read-only properties.
    public let set: ((BusValue) throws(BusError) -> Void)?

    public init(
      _ name: String, _ signature: String, changes: ChangeSignal = .emits, doc: String = "",
      get: @escaping () -> BusValue, set: ((BusValue) throws(BusError) -> Void)? = nil
    ) {
      self.name = name
      self.signature = signature
      self.changes = changes
      self.doc = doc
      self.get = get
      self.set = set
    }
  }

  public struct Signal: Sendable {
    public let name: String
    public let arguments: [Argument]
    public let doc: String
    public init(_ name: String, _ arguments: [Argument] = [], doc: String = "") {
      self.name = name
      self.arguments = arguments
      self.doc = doc
    }
  }

  public let name: String
  public var methods: [Method]
  public var properties: [Property]
  public var signals: [Signal]
  public var doc: String

  public init(
    name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = [],
    doc: String = ""
  ) {
    self.name = name
    self.methods = methods
    self.properties = properties
    self.signals = signals
    self.doc = doc
  }

  // MARK: Introspection

  /// A document with this interface alone, as installed under
  /// `PREFIX/share/dbus-1/interfaces/NAME.xml` for code generators and documentation.
  public var interfaceFile: String {
    Self.doctype + "<node>\n" + introspectionXML(indent: "  ") + "</node>\n"
  }

  static let doctype = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

    """

  /// The `<interface>` element, every line led by `indent`.
  func introspectionXML(indent: String) -> String {
    var lines = ["<interface name=\"\(name)\">"]
    lines += Self.docAnnotation(doc)
    for method in methods {
      lines.append("  <method name=\"\(method.name)\">")
      lines += Self.docAnnotation(method.doc).map { "  " + $0 }
      for (argument, direction) in method.inputs.map({ ($0, "in") })
        + method.outputs.map({ ($0, "out") })
      {
        let element =
          "<arg name=\"\(argument.name)\" type=\"\(argument.signature)\" direction=\"\(direction)\""
        lines += Self.element(element, doc: argument.doc, closing: "arg").map { "    " + $0 }
      }
      lines.append("  </method>")
    }
    for signal in signals {
      lines.append("  <signal name=\"\(signal.name)\">")
      lines += Self.docAnnotation(signal.doc).map { "  " + $0 }
      for argument in signal.arguments {
        let element = "<arg name=\"\(argument.name)\" type=\"\(argument.signature)\""
        lines += Self.element(element, doc: argument.doc, closing: "arg").map { "    " + $0 }
      }
      lines.append("  </signal>")
    }
    for property in properties {
      let access = property.set == nil ? "read" : "readwrite"
      lines.append(
        "  <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"\(access)\">"
      )
      lines.append(
        "    <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
          + "value=\"\(property.changes.rawValue)\"/>")
      lines += Self.docAnnotation(property.doc).map { "  " + $0 }
      lines.append("  </property>")
    }
    lines.append("</interface>")
    return lines.map { indent + $0 + "\n" }.joined()
  }

  /// `<NAME …/>`, or `<NAME …>` with the doc annotation inside when there is a doc.
  private static func element(_ opening: String, doc: String, closing: String) -> [String] {
    guard !doc.isEmpty else { return [opening + "/>"] }
    return [opening + ">"] + docAnnotation(doc) + ["</\(closing)>"]
  }

  private static func docAnnotation(_ doc: String) -> [String] {
    guard !doc.isEmpty else { return [] }
    return ["  <annotation name=\"org.gtk.GDBus.DocString\" value=\"\(doc.markupEscaped)\"/>"]
  }
}

/// An object exported on a bus connection, made of `BusInterface`s that can be added at run
/// time (a plugin adds its own interface to Grow's object).
@MainActor
public final class BusObject {
  public let path: String
  public let connection: BusConnection
  private var interfaces: [BusInterface] = []
  /// Properties changed this turn, by interface, in the order first named: announced together
  /// when the turn ends (`flushPropertiesChanged`).
  private var pendingChanges: [(interface: String, names: [String])] = []
  /// When PropertiesChanged last left, on the loop's monotonic clock.
  private var lastChangesSent: MonotonicInstant?
  /// PropertiesChanged leaves at most this often (seconds) while properties keep changing: a
  /// burst of calls answered over many turns sends a few signals with the latest values, not
  /// one per turn. A change after a quiet spell leaves at the end of its turn.
  public static let changesInterval: Double = 0.05

  private static let propertiesInterface = "org.freedesktop.DBus.Properties"
  private static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
  private static let peerInterface = "org.freedesktop.DBus.Peer"

  public init(path: String, on connection: BusConnection) throws(BusError) {
    self.path = path
    self.connection = connection
    try connection.register(path: path) { [weak self] call in self?.handle(call) }
  }

  /// Takes the object off the bus (a plugin's, when the plugin stops): calls to its path get
  /// `UnknownObject`.
  public func withdraw() {
    connection.unregister(path: path)
  }

  /// Adds (or replaces) an interface.
  public func add(_ interface: BusInterface) {
    interfaces.removeAll { $0.name == interface.name }
    interfaces.append(interface)
  }

  public func remove(interface name: String) {
    interfaces.removeAll { $0.name == name }
  }

  /// Emits a signal declared by one of the interfaces. Property changes gathered this turn
  /// go first, so a client sees them in the order they happened (the state that a phase
  /// ended, then PhaseStarted).
  public func emit(_ signal: String, on interface: String, _ arguments: [BusValue] = []) {
    if !pendingChanges.isEmpty, signal != "PropertiesChanged" { flushPropertiesChanged() }
    guard
      let message = try? BusMessage.signal(
        path: path, interface: interface, member: signal, arguments: arguments)
    else { return }
    connection.send(message)
  }

  /// Emits `PropertiesChanged` for those of `names` that changed, each as its annotation
  /// says: the current value, or the name among the invalidated ones. Properties that change
  /// silently or never are left out; nothing is sent when none remains.
  ///
  /// The signal leaves when the loop's turn ends, one per interface with the values as they
  /// are then: a burst of a thousand calls answered in one turn sends one signal, not a
  /// thousand, and what it says is the latest.
  public func propertiesChanged(_ names: [String], on interfaceName: String) {
    if let index = pendingChanges.firstIndex(where: { $0.interface == interfaceName }) {
      for name in names where !pendingChanges[index].names.contains(name) {
        pendingChanges[index].names.append(name)
      }
      return
    }
    pendingChanges.append((interfaceName, names))
    guard pendingChanges.count == 1 else { return }
    // A connection that only blocks has no turns to wait for.
    guard let loop = connection.loop else { return flushPropertiesChanged() }
    let wait = lastChangesSent.map { $0 + Self.changesInterval - loop.monotonicNow } ?? 0
    _ = loop.after(seconds: max(0, wait)) { [weak self] in
      MainActor.assumeIsolated { self?.flushPropertiesChanged() }
    }
  }

  /// Sends what `propertiesChanged` gathered now, before a signal that must follow it.
  public func flushPropertiesChanged() {
    guard !pendingChanges.isEmpty else { return }
    let pending = pendingChanges
    pendingChanges.removeAll()
    lastChangesSent = connection.loop?.monotonicNow
    for (interface, names) in pending { sendPropertiesChanged(names, on: interface) }
  }

  private func sendPropertiesChanged(_ names: [String], on interfaceName: String) {
    guard let interface = interfaces.first(where: { $0.name == interfaceName }) else { return }
    var changed: [String: BusValue] = [:]
    var invalidated: [BusValue] = []
    for property in interface.properties where names.contains(property.name) {
      switch property.changes {
      case .emits: changed[property.name] = property.get()
      case .invalidates: invalidated.append(.string(property.name))
      case .silent, .const: break
      }
    }
    guard !changed.isEmpty || !invalidated.isEmpty else { return }
    emit(
      "PropertiesChanged", on: Self.propertiesInterface,
      [.string(interfaceName), .vardict(changed), .array(element: "s", invalidated)])
  }

  /// The current values of every property of `interfaceName`.
  public func propertyValues(of interfaceName: String) -> [String: BusValue] {
    var values: [String: BusValue] = [:]
    for property in interfaces.first(where: { $0.name == interfaceName })?.properties ?? [] {
      values[property.name] = property.get()
    }
    return values
  }

  // MARK: Dispatch

  private func handle(_ call: BusMessage) {
    guard call.kind == .methodCall, let member = call.member else { return }
    let result: Result<Answer, BusError>
    do {
      result = .success(try answer(call, member: member))
    } catch {
      result = .failure(error)
    }
    guard !call.noReplyExpected else { return }
    let reply: BusMessage?
    switch result {
    case .success(.values(let values)):
      reply =
        (try? call.reply(values))
        ?? call.errorReply(
          BusError(name: BusError.failed, message: "could not encode the reply"))
    case .success(.message(let message)):
      reply = message
    case .success(.later):
      // A method that replies itself (`Method.answer`) took the call.
      return
    case .failure(let error):
      reply = call.errorReply(error)
    }
    if let reply { connection.send(reply) }
  }

  /// What a call is answered with.
  private enum Answer {
    /// The reply's arguments, encoded here.
    case values([BusValue])
    /// The reply, built by the method (`Method(reply:)`).
    case message(BusMessage)
    /// Nothing now: the method answers through its `PendingReply`.
    case later
  }

  private func answer(_ call: BusMessage, member: String) throws(BusError) -> Answer {
    switch (call.interface, member) {
    case (Self.introspectableInterface, "Introspect"), (nil, "Introspect"):
      try expect(call, "")
      return .values([.string(introspectionXML())])
    case (Self.propertiesInterface, "Get"):
      try expect(call, "ss")
      let property = try lookUpProperty(call.arguments)
      return .values([.variant(property.get())])
    case (Self.propertiesInterface, "GetAll"):
      try expect(call, "s")
      let name = call.arguments[0].stringValue ?? ""
      guard interfaces.contains(where: { $0.name == name }) || name.isEmpty else {
        throw BusError(
          name: BusError.unknownInterface, message: "no interface '\(shown(name))' here")
      }
      let values =
        name.isEmpty
        ? interfaces.reduce(into: [:]) { $0.merge(propertyValues(of: $1.name)) { a, _ in a } }
        : propertyValues(of: name)
      return .values([.vardict(values)])
    case (Self.propertiesInterface, "Set"):
      try expect(call, "ssv")
      let arguments = call.arguments
      let property = try lookUpProperty(arguments)
      guard let set = property.set else {
        throw BusError(name: BusError.propertyReadOnly, message: "\(property.name) is read-only")
      }
      let value = arguments[2].unwrapped
      guard value.signature == property.signature else {
        throw BusError(
          name: BusError.invalidArgs,
          message: "\(property.name) takes '\(property.signature)', not '\(value.signature)'")
      }
      try set(value)
      return .values([])
    default:
      // A plain loop: this runs for every call (GetStatus), and filtering made arrays.
      let interfaceName = call.interface
      var found: BusInterface.Method?
      var interfaceFound = false
      search: for interface in interfaces
      where interfaceName == nil || interface.name == interfaceName {
        interfaceFound = true
        for method in interface.methods where method.name == member {
          found = method
          break search
        }
      }
      guard interfaceFound else {
        throw BusError(
          name: BusError.unknownInterface,
          message: "no interface '\(interfaceName ?? "")' at \(path)")
      }
      guard let method = found else {
        throw BusError(
          name: BusError.unknownMethod,
          message: "no method '\(member)' in \(interfaceName ?? "any interface") at \(path)")
      }
      try expect(call, method.inputSignature)
      if let replier = method.replier { return .message(try replier(call)) }
      if let answer = method.answer {
        answer(
          call,
          PendingReply(
            call: call, connection: connection, timeout: method.replyTimeout,
            loop: connection.loop ?? MainLoop.shared))
        return .later
      }
      return .values(try method.handler(call.arguments, call))
    }
  }

  private func expect(_ call: BusMessage, _ signature: String) throws(BusError) {
    guard call.signature == signature else {
      throw BusError(
        name: BusError.invalidArgs,
        message: "\(call.member ?? "call") takes arguments of type '\(signature)', "
          + "got '\(call.signature)'")
    }
  }

  private func lookUpProperty(_ arguments: [BusValue]) throws(BusError) -> BusInterface.Property {
    let interfaceName = arguments[0].stringValue ?? ""
    let propertyName = arguments[1].stringValue ?? ""
    let scope = interfaces.filter { interfaceName.isEmpty || $0.name == interfaceName }
    guard let property = scope.flatMap(\.properties).first(where: { $0.name == propertyName })
    else {
      throw BusError(
        name: BusError.unknownProperty,
        message:
          "no property '\(shown(propertyName))' in '\(shown(interfaceName))' at \(path)")
    }
    return property
  }

  // MARK: Introspection

  /// The introspection document for this object, standard interfaces included.
  public func introspectionXML() -> String {
    var xml = BusInterface.doctype + "<node>\n"
    for interface in interfaces { xml += interface.introspectionXML(indent: "  ") }
    xml += """
        <interface name="org.freedesktop.DBus.Properties">
          <method name="Get">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="property_name" type="s" direction="in"/>
            <arg name="value" type="v" direction="out"/>
          </method>
          <method name="GetAll">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="properties" type="a{sv}" direction="out"/>
          </method>
          <method name="Set">
            <arg name="interface_name" type="s" direction="in"/>
            <arg name="property_name" type="s" direction="in"/>
            <arg name="value" type="v" direction="in"/>
          </method>
          <signal name="PropertiesChanged">
            <arg name="interface_name" type="s"/>
            <arg name="changed_properties" type="a{sv}"/>
            <arg name="invalidated_properties" type="as"/>
          </signal>
        </interface>
        <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect">
            <arg name="xml_data" type="s" direction="out"/>
          </method>
        </interface>
        <interface name="org.freedesktop.DBus.Peer">
          <method name="Ping"/>
          <method name="GetMachineId">
            <arg name="machine_uuid" type="s" direction="out"/>
          </method>
        </interface>
      </node>

      """
    return xml
  }
}

/// The reply a method that answers later owes its caller (`BusInterface.Method(answer:)`).
///
/// Answer it once, now or later: `send(_:)` the values, `respond(_:)` with a reply built for
/// the call (`call.reply(copying:)`) or an error, or `fail(_:)`; later answers are ignored.
/// Callers wait only so long (libdbus's default is 25 s), so a reply expires after its
/// timeout: a caller still waiting is told NoReply, the call is let go, and an answer after
/// that goes nowhere. A reply dropped without an answer tells the caller so at once.
@MainActor
public final class PendingReply {
  /// D-Bus's usual reply timeout: how long libdbus, GDBus and sd-bus callers wait by default.
  nonisolated public static let defaultTimeout: TimeInterval = 25

  /// nil once answered or expired.
  private var call: BusMessage?
  private weak var connection: BusConnection?
  private var expiry: (any Alarm)?

  init(
    call: BusMessage, connection: BusConnection, timeout: TimeInterval,
    loop: any EventLoop = MainLoop.shared
  ) {
    self.call = call
    self.connection = connection
    let member = call.member ?? "the call"
    expiry = loop.after(seconds: timeout) { [weak self] in
      self?.respond(
        .failure(
          BusError(
            name: BusError.noReply,
            message: "\(member) was not answered within \(DurationText.format(timeout))")))
    }
  }

  isolated deinit {
    respond(
      .failure(BusError(name: BusError.failed, message: "the reply was dropped unanswered")))
  }

  /// Whether the caller still waits for this reply: neither answered nor expired.
  public var isPending: Bool { call != nil }

  /// Answers with these values.
  public func send(_ values: [BusValue] = []) {
    guard let call else { return }
    respond(Result { () throws(BusError) in try call.reply(values) })
  }

  /// Answers with an error.
  public func fail(_ error: BusError) {
    respond(.failure(error))
  }

  /// Answers with a reply built for the call, or an error.
  public func respond(_ result: Result<BusMessage, BusError>) {
    guard let call else { return }
    self.call = nil
    expiry?.cancel()
    expiry = nil
    guard !call.noReplyExpected else { return }
    let reply: BusMessage?
    switch result {
    case .success(let message): reply = message
    case .failure(let error): reply = call.errorReply(error)
    }
    if let reply { connection?.send(reply) }
  }
}
