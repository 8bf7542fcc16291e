import GrowCore

/// Describes one D-Bus interface that an exported object implements.
///
/// From this one description `BusObject` answers calls (checking each call's signature, so a
/// malformed call gets `InvalidArgs` and never reaches the handler), serves
/// `org.freedesktop.DBus.Properties` and produces the introspection XML.
@MainActor
public struct BusInterface {
  public struct Argument: Sendable {
    public let name: String
    public let signature: String
    public init(_ name: String, _ signature: String) {
      self.name = name
      self.signature = signature
    }
  }

  public struct Method {
    public let name: String
    public let inputs: [Argument]
    public let outputs: [Argument]
    public let handler: (_ arguments: [BusValue], _ call: BusMessage) throws(BusError) -> [BusValue]

    public init(
      _ name: String, inputs: [Argument] = [], outputs: [Argument] = [],
      handler:
        @escaping (_ arguments: [BusValue], _ call: BusMessage) throws(BusError) -> [BusValue]
    ) {
      self.name = name
      self.inputs = inputs
      self.outputs = outputs
      self.handler = handler
    }
  }

  public struct Property {
    public let name: String
    public let signature: String
    public let get: () -> BusValue
    /// nil for read-only properties.
    public let set: ((BusValue) throws(BusError) -> Void)?

    public init(
      _ name: String, _ signature: String, get: @escaping () -> BusValue,
      set: ((BusValue) throws(BusError) -> Void)? = nil
    ) {
      self.name = name
      self.signature = signature
      self.get = get
      self.set = set
    }
  }

  public struct Signal: Sendable {
    public let name: String
    public let arguments: [Argument]
    public init(_ name: String, _ arguments: [Argument] = []) {
      self.name = name
      self.arguments = arguments
    }
  }

  public let name: String
  public var methods: [Method]
  public var properties: [Property]
  public var signals: [Signal]

  public init(
    name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []
  ) {
    self.name = name
    self.methods = methods
    self.properties = properties
    self.signals = signals
  }
}

/// An object exported on a bus connection, made of `BusInterface`s that can be added at run
/// time (a plugin adds its own interface to Grow's object).
@MainActor
public final class BusObject {
  public let path: String
  public let connection: BusConnection
  private var interfaces: [BusInterface] = []

  private static let propertiesInterface = "org.freedesktop.DBus.Properties"
  private static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
  private static let peerInterface = "org.freedesktop.DBus.Peer"

  public init(path: String, on connection: BusConnection) throws(BusError) {
    self.path = path
    self.connection = connection
    try connection.register(path: path) { [weak self] call in self?.handle(call) }
  }

  /// Adds (or replaces) an interface.
  public func add(_ interface: BusInterface) {
    interfaces.removeAll { $0.name == interface.name }
    interfaces.append(interface)
  }

  public func remove(interface name: String) {
    interfaces.removeAll { $0.name == name }
  }

  /// Emits a signal declared by one of the interfaces.
  public func emit(_ signal: String, on interface: String, _ arguments: [BusValue] = []) {
    guard
      let message = try? BusMessage.signal(
        path: path, interface: interface, member: signal, arguments: arguments)
    else { return }
    connection.send(message)
  }

  /// Emits `PropertiesChanged` with the current values of `names`.
  public func propertiesChanged(_ names: [String], on interfaceName: String) {
    guard let interface = interfaces.first(where: { $0.name == interfaceName }), !names.isEmpty
    else { return }
    var changed: [String: BusValue] = [:]
    for property in interface.properties where names.contains(property.name) {
      changed[property.name] = property.get()
    }
    emit(
      "PropertiesChanged", on: Self.propertiesInterface,
      [.string(interfaceName), .vardict(changed), .array(element: "s", [])])
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
    let result: Result<[BusValue], BusError>
    do {
      result = .success(try answer(call, member: member))
    } catch {
      result = .failure(error)
    }
    guard !call.noReplyExpected else { return }
    let reply: BusMessage?
    switch result {
    case .success(let values):
      reply =
        (try? call.reply(values))
        ?? call.errorReply(
          BusError(name: BusError.failed, message: "could not encode the reply"))
    case .failure(let error):
      reply = call.errorReply(error)
    }
    if let reply { connection.send(reply) }
  }

  private func answer(_ call: BusMessage, member: String) throws(BusError) -> [BusValue] {
    let arguments = call.arguments
    switch (call.interface, member) {
    case (Self.introspectableInterface, "Introspect"), (nil, "Introspect"):
      try expect(call, "")
      return [.string(introspectionXML())]
    case (Self.propertiesInterface, "Get"):
      try expect(call, "ss")
      let property = try lookUpProperty(arguments)
      return [.variant(property.get())]
    case (Self.propertiesInterface, "GetAll"):
      try expect(call, "s")
      let name = arguments[0].stringValue ?? ""
      guard interfaces.contains(where: { $0.name == name }) || name.isEmpty else {
        throw BusError(
          name: BusError.unknownInterface, message: "no interface '\(shown(name))' here")
      }
      let values =
        name.isEmpty
        ? interfaces.reduce(into: [:]) { $0.merge(propertyValues(of: $1.name)) { a, _ in a } }
        : propertyValues(of: name)
      return [.vardict(values)]
    case (Self.propertiesInterface, "Set"):
      try expect(call, "ssv")
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
      return []
    default:
      let candidates = interfaces.filter { call.interface == nil || $0.name == call.interface }
      guard !candidates.isEmpty else {
        throw BusError(
          name: BusError.unknownInterface,
          message: "no interface '\(call.interface ?? "")' at \(path)")
      }
      guard let method = candidates.lazy.flatMap(\.methods).first(where: { $0.name == member })
      else {
        throw BusError(
          name: BusError.unknownMethod,
          message: "no method '\(member)' in \(call.interface ?? "any interface") at \(path)")
      }
      try expect(call, method.inputs.map(\.signature).joined())
      return try method.handler(arguments, call)
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
    var xml = """
      <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
      <node>

      """
    for interface in interfaces {
      xml += "  <interface name=\"\(interface.name)\">\n"
      for method in interface.methods {
        xml += "    <method name=\"\(method.name)\">\n"
        for argument in method.inputs {
          xml +=
            "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\" direction=\"in\"/>\n"
        }
        for argument in method.outputs {
          xml +=
            "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\" direction=\"out\"/>\n"
        }
        xml += "    </method>\n"
      }
      for signal in interface.signals {
        xml += "    <signal name=\"\(signal.name)\">\n"
        for argument in signal.arguments {
          xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\"/>\n"
        }
        xml += "    </signal>\n"
      }
      for property in interface.properties {
        let access = property.set == nil ? "read" : "readwrite"
        xml +=
          "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"\(access)\"/>\n"
      }
      xml += "  </interface>\n"
    }
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
