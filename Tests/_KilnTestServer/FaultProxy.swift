// A TCP proxy on loopback that degrades the wire between a client and a server: latency,
// a bandwidth limit, a reset after some bytes, a blackhole, a half-open connection, a refusal.
// For Kiln's fault suites (HTTP servers and PostgreSQL alike); not a product.

import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of one upstream server, whose faults can be switched
/// while traffic flows.
///
/// ```swift
/// let proxy = try await FaultProxy.start(upstreamPort: server.port)
/// let url = URL(string: "http://127.0.0.1:\(proxy.port)/articles")!
/// try await proxy.set(.blackhole)          // connections stay open, nothing arrives
/// try await proxy.set(.reset(afterBytes: 100))  // a reset in the middle of a response
/// try await proxy.set(.normal)
/// try await proxy.stop()
/// ```
///
/// Each accepted connection is relayed to its own connection to the upstream server, byte for
/// byte and in order, through the ``Conditions`` in force at each moment:
///
/// - ``Conditions/latency`` delays every byte by that much in each direction (the wire is a
///   pipe: bytes sent back to back arrive back to back, each late by the latency);
/// - ``Conditions/bytesPerSecond`` limits each direction of each connection to that rate;
/// - ``Conditions/resetAfterBytes`` sends a TCP reset (`RST`) to both peers once that many more
///   bytes went one way (``Conditions/resetDirection``, towards the client by default);
/// - ``Conditions/blackhole`` relays nothing in either direction and closes nothing (no `FIN`,
///   no `RST`): connections open as usual and then go silent, as behind a dropped route; what
///   was held is delivered, in order, once the blackhole ends;
/// - ``Conditions/halfOpen`` closes one direction (its receiver reads end-of-file; what is sent
///   that way afterwards is dropped) while the other still flows;
/// - ``Conditions/refusesConnections`` closes the listening socket, so new connections are
///   refused (`ECONNREFUSED`), as by a stopped server; open ones go on.
///
/// A peer that closes its side is passed on: end-of-file as end-of-file, a reset as a reset.
/// The proxy reads from a peer only while less than 256 KiB of what it sent waits to be
/// relayed, so a slow or blackholed direction pushes back on its sender as TCP would.
public final class FaultProxy: Sendable {
  /// One direction of a relayed connection.
  public enum Direction: Sendable, Hashable {
    /// From the client to the upstream server (requests, statements).
    case toUpstream
    /// From the upstream server to the client (responses, rows, notifications).
    case toClient
  }

  /// The faults in force; ``normal`` relays faithfully.
  public struct Conditions: Sendable, Hashable, CustomStringConvertible {
    /// Added to the time each byte takes, in each direction.
    public var latency: Duration = .zero
    /// The most bytes per second each direction of each connection carries; `nil` for no limit.
    public var bytesPerSecond: Int?
    /// A reset of the connection once this many more bytes went in ``resetDirection``,
    /// counted per connection from when these conditions were set (or from its start).
    public var resetAfterBytes: Int?
    /// The direction whose bytes ``resetAfterBytes`` counts.
    public var resetDirection: Direction = .toClient
    /// Whether nothing is relayed and nothing closed (no answer, no reset).
    public var blackhole = false
    /// The direction that is closed (its receiver reads end-of-file), or `nil`.
    public var halfOpen: Direction?
    /// Whether new connections are refused.
    public var refusesConnections = false

    /// Creates conditions; every fault is off by default.
    public init(
      latency: Duration = .zero, bytesPerSecond: Int? = nil, resetAfterBytes: Int? = nil,
      resetDirection: Direction = .toClient, blackhole: Bool = false, halfOpen: Direction? = nil,
      refusesConnections: Bool = false
    ) {
      precondition(latency >= .zero, "latency must not be negative")
      precondition(bytesPerSecond.map { $0 > 0 } ?? true, "bytesPerSecond must be positive")
      precondition(resetAfterBytes.map { $0 >= 0 } ?? true, "resetAfterBytes must not be negative")
      self.latency = latency
      self.bytesPerSecond = bytesPerSecond
      self.resetAfterBytes = resetAfterBytes
      self.resetDirection = resetDirection
      self.blackhole = blackhole
      self.halfOpen = halfOpen
      self.refusesConnections = refusesConnections
    }

    /// No fault: every byte relayed at once.
    public static var normal: Conditions { Conditions() }

    /// Every byte delayed by `latency` in each direction.
    public static func latency(_ latency: Duration) -> Conditions { Conditions(latency: latency) }

    /// Each direction limited to `bytesPerSecond`.
    public static func bandwidth(bytesPerSecond: Int) -> Conditions { Conditions(bytesPerSecond: bytesPerSecond) }

    /// A reset once `bytes` more bytes went in `direction` (towards the client by default).
    public static func reset(afterBytes bytes: Int, direction: Direction = .toClient) -> Conditions {
      Conditions(resetAfterBytes: bytes, resetDirection: direction)
    }

    /// Connections accepted and open, nothing relayed, nothing closed.
    public static var blackhole: Conditions { Conditions(blackhole: true) }

    /// `direction` closed, the other still flowing.
    public static func halfOpen(_ direction: Direction) -> Conditions { Conditions(halfOpen: direction) }

    /// New connections refused.
    public static var refuse: Conditions { Conditions(refusesConnections: true) }

    /// The faults in force, such as `latency 100 ms, reset after 50 bytes to the client`.
    public var description: String {
      var faults: [String] = []
      if latency > .zero { faults.append("latency \(latency)") }
      if let bytesPerSecond { faults.append("\(bytesPerSecond) bytes/s") }
      if let resetAfterBytes {
        faults.append(
          "reset after \(resetAfterBytes) bytes \(resetDirection == .toClient ? "to the client" : "to the server")")
      }
      if blackhole { faults.append("blackhole") }
      if let halfOpen { faults.append("half-open, \(halfOpen == .toClient ? "client" : "server") reads EOF") }
      if refusesConnections { faults.append("refusing") }
      return faults.isEmpty ? "normal" : faults.joined(separator: ", ")
    }
  }

  /// Counts of what the proxy did since it started.
  public struct Statistics: Sendable, Hashable {
    /// Connections accepted from clients.
    public var accepted = 0
    /// Relayed connections still open.
    public var open = 0
    /// Connections the proxy reset (``Conditions/resetAfterBytes`` or ``resetConnections()``).
    public var resets = 0
    /// Bytes delivered to the upstream server.
    public var bytesToUpstream = 0
    /// Bytes delivered to clients.
    public var bytesToClient = 0
  }

  /// The port the proxy listens on.
  public let port: Int
  /// The upstream server's host.
  public let upstreamHost: String
  /// The upstream server's port.
  public let upstreamPort: Int

  private let group: MultiThreadedEventLoopGroup
  private let shared: ProxyShared
  /// The listening channel; `nil` while connections are refused.
  private let listener: NIOLockedValueBox<(any Channel)?>
  /// The port held while connections are refused, so that no other test binds it meanwhile.
  private let reservation = NIOLockedValueBox<ClosedPort?>(nil)

  private init(
    port: Int, upstreamHost: String, upstreamPort: Int, group: MultiThreadedEventLoopGroup, shared: ProxyShared,
    listener: any Channel
  ) {
    self.port = port
    self.upstreamHost = upstreamHost
    self.upstreamPort = upstreamPort
    self.group = group
    self.shared = shared
    self.listener = NIOLockedValueBox(listener)
  }

  /// Starts a proxy to `upstreamHost`:`upstreamPort`.
  ///
  /// - Parameters:
  ///   - upstreamHost: The server's host; `127.0.0.1` by default.
  ///   - upstreamPort: The server's port.
  ///   - port: The port to listen on; `0` (the default) lets the system choose.
  ///   - conditions: The faults in force from the start; none by default.
  /// - Returns: The running proxy.
  public static func start(
    upstreamHost: String = "127.0.0.1", upstreamPort: Int, port: Int = 0, conditions: Conditions = .normal
  ) async throws -> FaultProxy {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let shared = ProxyShared(upstreamHost: upstreamHost, upstreamPort: upstreamPort, conditions: conditions)
    do {
      let listener = try await bind(port: port, group: group, shared: shared)
      guard let bound = listener.localAddress?.port else {
        try? await listener.close()
        throw TestServerError.noPort
      }
      let proxy = FaultProxy(
        port: bound, upstreamHost: upstreamHost, upstreamPort: upstreamPort, group: group, shared: shared,
        listener: listener)
      if conditions.refusesConnections {
        try await proxy.set(conditions)
      }
      return proxy
    } catch {
      try? await group.shutdownGracefully()
      throw error
    }
  }

  private static func bind(port: Int, group: MultiThreadedEventLoopGroup, shared: ProxyShared) async throws
    -> any Channel
  {
    try await ServerBootstrap(group: group)
      .serverChannelOption(.backlog, value: 256)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelOption(.allowRemoteHalfClosure, value: true)
      .childChannelOption(.autoRead, value: false)
      .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try Relay.start(client: channel, shared: shared)
        }
      }
      .bind(host: "127.0.0.1", port: port)
      .get()
  }

  /// The faults in force now.
  public var conditions: Conditions {
    shared.conditions
  }

  /// Switches to `conditions` now, on open connections too.
  ///
  /// Refusing closes the listening socket before this returns (a connection attempted after it
  /// is refused); ending the refusal listens again on the same port.
  ///
  /// - Throws: When the port cannot be bound again.
  public func set(_ conditions: Conditions) async throws {
    shared.update(conditions)
    if conditions.refusesConnections {
      let open = listener.withLockedValue { listener in
        defer { listener = nil }
        return listener
      }
      try? await open?.close()
      if open != nil {
        // Held by a socket that does not listen: still refused, but not free for another
        // test's server to take (then that server would answer instead of a refusal).
        let held = try ClosedPort(port: port)
        reservation.withLockedValue { $0 = held }
      }
    } else if listener.withLockedValue({ $0 == nil }) {
      reservation.withLockedValue { reserved in
        reserved?.close()
        reserved = nil
      }
      let channel = try await Self.bind(port: port, group: group, shared: shared)
      listener.withLockedValue { $0 = channel }
    }
  }

  /// Puts `conditions` on the next `count` connections accepted, for their whole life,
  /// whatever ``set(_:)`` says meanwhile; the others keep the proxy's conditions.
  ///
  /// A transient fault: the first connection is reset or blackholed, the retry's new connection
  /// goes through. ``Conditions/refusesConnections`` means nothing here.
  ///
  /// ```swift
  /// proxy.set(.reset(afterBytes: 100), forNextConnections: 1)
  /// ```
  public func set(_ conditions: Conditions, forNextConnections count: Int) {
    precondition(count >= 0, "count must not be negative")
    shared.pin(conditions, count: count)
  }

  /// Resets every open connection now (`RST` to both peers).
  public func resetConnections() {
    shared.forEachRelay { $0.reset() }
  }

  /// What the proxy did so far.
  public var statistics: Statistics {
    shared.statistics
  }

  /// Closes the listening socket and every connection, and stops the proxy's thread.
  public func stop() async throws {
    let open = listener.withLockedValue { listener in
      defer { listener = nil }
      return listener
    }
    try? await open?.close()
    reservation.withLockedValue { reserved in
      reserved?.close()
      reserved = nil
    }
    shared.forEachRelay { $0.close() }
    try await group.shutdownGracefully()
  }
}

/// What the listener, the relays and the proxy share: the conditions, the open relays and the
/// counters.
private final class ProxyShared: Sendable {
  let upstreamHost: String
  let upstreamPort: Int

  private struct State {
    var conditions: FaultProxy.Conditions
    var generation = 0
    var relays: [ObjectIdentifier: (any EventLoop, NIOLoopBound<Relay>)] = [:]
    var statistics = FaultProxy.Statistics()
    /// Conditions for the next connections accepted, each for its whole life.
    var pinned: [FaultProxy.Conditions] = []
  }

  private let state: NIOLockedValueBox<State>

  init(upstreamHost: String, upstreamPort: Int, conditions: FaultProxy.Conditions) {
    self.upstreamHost = upstreamHost
    self.upstreamPort = upstreamPort
    state = NIOLockedValueBox(State(conditions: conditions))
  }

  var conditions: FaultProxy.Conditions {
    state.withLockedValue { $0.conditions }
  }

  /// The conditions and their generation (bumped by every change).
  var current: (FaultProxy.Conditions, Int) {
    state.withLockedValue { ($0.conditions, $0.generation) }
  }

  var statistics: FaultProxy.Statistics {
    state.withLockedValue { $0.statistics }
  }

  func update(_ conditions: FaultProxy.Conditions) {
    state.withLockedValue { state in
      state.conditions = conditions
      state.generation += 1
    }
    forEachRelay { $0.conditionsChanged() }
  }

  /// Registers a new connection; returns the conditions pinned to it, if any.
  func register(_ relay: Relay, on eventLoop: any EventLoop) -> FaultProxy.Conditions? {
    state.withLockedValue { state in
      state.relays[ObjectIdentifier(relay)] = (eventLoop, NIOLoopBound(relay, eventLoop: eventLoop))
      state.statistics.accepted += 1
      state.statistics.open += 1
      return state.pinned.isEmpty ? nil : state.pinned.removeFirst()
    }
  }

  func pin(_ conditions: FaultProxy.Conditions, count: Int) {
    state.withLockedValue { $0.pinned += Array(repeating: conditions, count: count) }
  }

  func unregister(_ relay: Relay) {
    state.withLockedValue { state in
      if state.relays.removeValue(forKey: ObjectIdentifier(relay)) != nil {
        state.statistics.open -= 1
      }
    }
  }

  func count(_ update: @Sendable (inout FaultProxy.Statistics) -> Void) {
    state.withLockedValue { update(&$0.statistics) }
  }

  /// Runs `body` on each open relay's event loop.
  func forEachRelay(_ body: @escaping @Sendable (Relay) -> Void) {
    let relays = state.withLockedValue { Array($0.relays.values) }
    for (eventLoop, relay) in relays {
      eventLoop.execute { body(relay.value) }
    }
  }
}

/// One client connection and its upstream connection, with a queue per direction. Lives on
/// the client channel's event loop; the upstream channel uses the same loop.
private final class Relay {
  /// What waits to be relayed in one direction.
  struct Lane {
    let direction: FaultProxy.Direction
    /// Bytes (or the end of the stream) and when they may leave.
    var queue: [(piece: Piece, due: NIODeadline)] = []
    var head = 0
    var queuedBytes = 0
    /// Bytes delivered since the conditions' generation `countedGeneration`.
    var counted = 0
    var countedGeneration = -1
    /// When the bandwidth limit lets the next bytes leave.
    var nextSend = NIODeadline.uptimeNanoseconds(0)
    var timer: Scheduled<Void>?
    /// Whether the fault closed this direction.
    var shut = false

    init(direction: FaultProxy.Direction) {
      self.direction = direction
    }

    var isEmpty: Bool { head == queue.count }
  }

  enum Piece {
    case bytes(ByteBuffer)
    case end
  }

  /// Reads pause while this much waits in a lane.
  static let highWater = 256 * 1024
  /// The slice of a rate-limited direction sent at once: about 10 ms of bytes.
  static let slicesPerSecond = 100

  let shared: ProxyShared
  let eventLoop: any EventLoop
  let client: any Channel
  /// Conditions of this connection alone (``FaultProxy/set(_:forNextConnections:)``).
  var pinned: FaultProxy.Conditions?
  var upstream: (any Channel)?
  var toUpstream = Lane(direction: .toUpstream)
  var toClient = Lane(direction: .toClient)
  var closed = false

  private init(client: any Channel, shared: ProxyShared) {
    self.client = client
    self.shared = shared
    eventLoop = client.eventLoop
  }

  static func start(client: any Channel, shared: ProxyShared) throws {
    let relay = Relay(client: client, shared: shared)
    let eventLoop = client.eventLoop
    relay.pinned = shared.register(relay, on: eventLoop)
    try client.pipeline.syncOperations.addHandler(SideHandler(relay: relay, side: .toUpstream))
    let bound = NIOLoopBound(relay, eventLoop: eventLoop)
    ClientBootstrap(group: eventLoop)
      .channelOption(.allowRemoteHalfClosure, value: true)
      .channelOption(.autoRead, value: false)
      .channelOption(.socketOption(.tcp_nodelay), value: 1)
      .connectTimeout(.seconds(10))
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(SideHandler(relay: bound.value, side: .toClient))
        }
      }
      .connect(host: shared.upstreamHost, port: shared.upstreamPort)
      .whenComplete { result in
        let relay = bound.value
        switch result {
        case .success(let channel):
          relay.upstreamConnected(channel)
        case .failure:
          // The upstream refused: the client sees its connection reset, as it would have.
          relay.reset()
        }
      }
  }

  private func upstreamConnected(_ channel: any Channel) {
    if closed {
      channel.close(promise: nil)
      return
    }
    upstream = channel
    channel.read()
    pump(.toUpstream)
    pump(.toClient)
  }

  // MARK: Events from the channels

  /// Bytes read from the sender of `direction`.
  func received(_ buffer: ByteBuffer, going direction: FaultProxy.Direction) {
    let (conditions, _) = current
    let due = NIODeadline.now() + TimeAmount(conditions.latency)
    withLane(direction) { lane in
      lane.queue.append((.bytes(buffer), due))
      lane.queuedBytes += buffer.readableBytes
    }
    pump(direction)
  }

  /// The sender of `direction` read no more bytes for now: read again unless the lane is full.
  func readComplete(going direction: FaultProxy.Direction) {
    let full = withLane(direction) { $0.queuedBytes >= Self.highWater }
    if !full { sender(of: direction)?.read() }
  }

  /// The sender of `direction` closed its side (end-of-file) or its connection.
  func ended(going direction: FaultProxy.Direction) {
    let (conditions, _) = current
    let due = NIODeadline.now() + TimeAmount(conditions.latency)
    withLane(direction) { lane in lane.queue.append((.end, due)) }
    pump(direction)
  }

  /// A channel saw an error (a reset by its peer): the other peer gets a reset too, unless a
  /// blackhole swallows it (the channel's end is then queued like any other).
  func failed() {
    guard !current.0.blackhole else { return }
    reset()
  }

  /// The conditions changed: a blackhole may have ended, a direction may now be shut.
  func conditionsChanged() {
    pump(.toUpstream)
    pump(.toClient)
  }

  // MARK: Relaying

  /// The conditions of this connection and their generation.
  private var current: (FaultProxy.Conditions, Int) {
    if let pinned { return (pinned, -2) }
    return shared.current
  }

  private func withLane<R>(_ direction: FaultProxy.Direction, _ body: (inout Lane) -> R) -> R {
    switch direction {
    case .toUpstream: body(&toUpstream)
    case .toClient: body(&toClient)
    }
  }

  private func sender(of direction: FaultProxy.Direction) -> (any Channel)? {
    direction == .toUpstream ? client : upstream
  }

  private func receiver(of direction: FaultProxy.Direction) -> (any Channel)? {
    direction == .toUpstream ? upstream : client
  }

  /// Sends what is due in `direction` under the conditions in force, and schedules itself
  /// for what is not due yet.
  private func pump(_ direction: FaultProxy.Direction) {
    guard !closed, let receiver = receiver(of: direction) else { return }
    let (conditions, generation) = current
    withLane(direction) { lane in
      lane.timer?.cancel()
      lane.timer = nil
    }
    if conditions.blackhole { return }

    if conditions.halfOpen == direction {
      let wasShut = withLane(direction) { lane in
        defer { lane.shut = true }
        return lane.shut
      }
      if !wasShut { receiver.close(mode: .output, promise: nil) }
    }

    var delivered = 0
    var slices: [ByteBuffer] = []
    var resetNow = false
    var wake: NIODeadline?
    var ended = false
    withLane(direction) { lane in
      if lane.countedGeneration != generation {
        lane.countedGeneration = generation
        lane.counted = 0
      }
      while !lane.isEmpty {
        let now = NIODeadline.now()
        let (piece, due) = lane.queue[lane.head]
        if due > now {
          wake = due
          break
        }
        guard case .bytes(var buffer) = piece else {
          lane.head += 1
          ended = true
          break
        }
        if lane.shut {
          lane.head += 1
          lane.queuedBytes -= buffer.readableBytes
          continue
        }
        var size = buffer.readableBytes
        if let rate = conditions.bytesPerSecond {
          if lane.nextSend > now {
            wake = lane.nextSend
            break
          }
          size = min(size, max(1, rate / Self.slicesPerSecond))
          lane.nextSend = now + .nanoseconds(Int64(size) * 1_000_000_000 / Int64(rate))
        }
        if let limit = conditions.resetAfterBytes, conditions.resetDirection == direction {
          size = min(size, max(0, limit - lane.counted))
          if size == 0 {
            resetNow = true
            break
          }
        }
        slices.append(buffer.readSlice(length: size)!)
        lane.counted += size
        lane.queuedBytes -= size
        delivered += size
        if buffer.readableBytes == 0 {
          lane.head += 1
        } else {
          lane.queue[lane.head].piece = .bytes(buffer)
        }
        if let limit = conditions.resetAfterBytes, conditions.resetDirection == direction, lane.counted >= limit {
          resetNow = true
          break
        }
      }
      if lane.head > 64 && lane.head * 2 > lane.queue.count {
        lane.queue.removeFirst(lane.head)
        lane.head = 0
      }
    }
    // Written outside the lane's access: a write or a flush can call back into the relay
    // (a failed write closes the channel, whose inactive event ends a lane).
    for slice in slices {
      receiver.write(slice, promise: nil)
    }
    if !slices.isEmpty { receiver.flush() }
    guard !closed else { return }
    if delivered > 0 {
      let delivered = delivered
      shared.count { statistics in
        switch direction {
        case .toUpstream: statistics.bytesToUpstream += delivered
        case .toClient: statistics.bytesToClient += delivered
        }
      }
    }
    if resetNow {
      // Reset once what was written has left, so the receiver gets exactly the counted bytes.
      let bound = NIOLoopBound(self, eventLoop: eventLoop)
      receiver.writeAndFlush(ByteBuffer()).whenComplete { _ in bound.value.reset() }
      return
    }
    if ended {
      // The sender closed its side: so does the receiver's direction, once the rest is sent.
      let shut = withLane(direction) { lane in
        defer { lane.shut = true }
        return lane.shut
      }
      if !shut { receiver.close(mode: .output, promise: nil) }
      if toUpstream.shut && toClient.shut { close() }
      return
    }
    if let wake {
      let bound = NIOLoopBound(self, eventLoop: eventLoop)
      let timer = eventLoop.scheduleTask(deadline: wake) { bound.value.pump(direction) }
      withLane(direction) { $0.timer = timer }
    }
    if withLane(direction, { $0.queuedBytes < Self.highWater }) {
      sender(of: direction)?.read()
    }
  }

  // MARK: Ending

  /// Sends a reset to both peers and forgets the connection.
  func reset() {
    guard !closed else { return }
    // Closed first: closing a channel calls back into the relay (its inactive event).
    finish()
    shared.count { $0.resets += 1 }
    for channel in [client, upstream].compactMap({ $0 }) {
      Self.abort(channel)
    }
  }

  /// Closes both connections normally (the proxy is stopping, or both directions ended).
  func close() {
    guard !closed else { return }
    finish()
    client.close(promise: nil)
    upstream?.close(promise: nil)
  }

  private func finish() {
    closed = true
    toUpstream.timer?.cancel()
    toClient.timer?.cancel()
    toUpstream.queue = []
    toClient.queue = []
    toUpstream.head = 0
    toClient.head = 0
    shared.unregister(self)
  }

  /// Closes `channel` with `SO_LINGER` 0, which sends `RST` instead of `FIN`.
  private static func abort(_ channel: any Channel) {
    guard let provider = channel as? any SocketOptionProvider else {
      channel.close(promise: nil)
      return
    }
    provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
      channel.close(promise: nil)
    }
  }
}

/// Passes one channel's events to its relay.
private final class SideHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer

  private let relay: Relay
  /// The direction of the bytes this channel reads.
  private let side: FaultProxy.Direction

  init(relay: Relay, side: FaultProxy.Direction) {
    self.relay = relay
    self.side = side
  }

  func channelActive(context: ChannelHandlerContext) {
    // Reads are explicit (`autoRead` is off), so that a full lane pushes back on its sender.
    context.read()
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    relay.received(unwrapInboundIn(data), going: side)
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    relay.readComplete(going: side)
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if case .some(ChannelEvent.inputClosed) = event as? ChannelEvent {
      relay.ended(going: side)
    }
    context.fireUserInboundEventTriggered(event)
  }

  func channelInactive(context: ChannelHandlerContext) {
    relay.ended(going: side)
    context.fireChannelInactive()
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    relay.failed()
  }
}
