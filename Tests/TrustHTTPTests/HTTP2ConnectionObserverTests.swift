import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import TrustHTTP

/// What the pool hears from an HTTP/2 connection: the peer's SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §6.5.2) and
/// its GOAWAY (§6.8), including what arrived before the pool began to listen. Frames go on down the pipeline.
@Suite("HTTP2ConnectionObserver: SETTINGS and GOAWAY for the pool")
struct HTTP2ConnectionObserverTests {
    final class Heard {
        var limits: [Int] = []
        var goAways = 0
    }

    static func settings(_ values: [(HTTP2SettingsParameter, Int)]) -> HTTP2Frame {
        HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(values.map { HTTP2Setting(parameter: $0.0, value: $0.1) })))
    }

    @Test func theLimitAndGoAwayAreToldAsTheyComeAndFramesPassOn() throws {
        let observer = HTTP2ConnectionObserver()
        let channel = EmbeddedChannel(handler: observer)
        let heard = Heard()
        observer.observe(settings: { heard.limits.append($0) }, goingAway: { heard.goAways += 1 })
        try channel.writeInbound(Self.settings([(.maxConcurrentStreams, 10), (.initialWindowSize, 65_535), (.maxConcurrentStreams, 2)]))
        try channel.writeInbound(Self.settings([(.initialWindowSize, 1)]))
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.ack)))
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
        try channel.writeInbound(goAway)
        try channel.writeInbound(goAway)
        // The last value in a frame is the one in force; a frame without the parameter changes nothing; one GOAWAY.
        #expect(heard.limits == [2])
        #expect(heard.goAways == 1)
        var passed = 0
        while try channel.readInbound(as: HTTP2Frame.self) != nil { passed += 1 }
        #expect(passed == 5)
        _ = try channel.finish()
    }

    @Test func whatArrivedBeforeThePoolListenedIsToldWhenItDoes() throws {
        let observer = HTTP2ConnectionObserver()
        let channel = EmbeddedChannel(handler: observer)
        try channel.writeInbound(Self.settings([(.maxConcurrentStreams, 1_000)]))
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil)))
        let heard = Heard()
        observer.observe(settings: { heard.limits.append($0) }, goingAway: { heard.goAways += 1 })
        #expect(heard.limits == [1_000])
        #expect(heard.goAways == 1)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    /// RFC 9113 §6.5.2: a parameter a peer's SETTINGS leave out keeps its initial value (unlimited for
    /// SETTINGS_MAX_CONCURRENT_STREAMS); the pool is told its bounded assumption, now known, once.
    @Test func aFirstSettingsFrameWithoutTheLimitReportsTheAssumedOne() throws {
        let observer = HTTP2ConnectionObserver()
        let channel = EmbeddedChannel(handler: observer)
        let heard = Heard()
        observer.observe(settings: { heard.limits.append($0) }, goingAway: { heard.goAways += 1 })
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.ack)))
        #expect(heard.limits == [])
        try channel.writeInbound(Self.settings([(.initialWindowSize, 65_535)]))
        try channel.writeInbound(Self.settings([(.maxFrameSize, 16_384)]))
        #expect(heard.limits == [ConnectionPoolStateMachine.assumedConcurrentStreams])
        try channel.writeInbound(Self.settings([(.maxConcurrentStreams, 5)]))
        #expect(heard.limits == [ConnectionPoolStateMachine.assumedConcurrentStreams, 5])
        // Told to a pool that listens only after the frame came.
        let late = HTTP2ConnectionObserver()
        let lateChannel = EmbeddedChannel(handler: late)
        try lateChannel.writeInbound(Self.settings([]))
        var lateLimits: [Int] = []
        late.observe(settings: { lateLimits.append($0) }, goingAway: {})
        #expect(lateLimits == [ConnectionPoolStateMachine.assumedConcurrentStreams])
        _ = try channel.finish()
        _ = try lateChannel.finish()
    }
}
