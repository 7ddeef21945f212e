import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import TrustHTTP

/// Small response limits, so the fuzzer reaches them: head 4 KiB, field 1 KiB, 32 fields, 3 interim responses.
public let smallResponseLimits: ResponseLimits = {
    var limits = ResponseLimits()
    limits.maximumHeadSize = 4 << 10
    limits.maximumHeaderFieldSize = 1 << 10
    limits.maximumHeaderFields = 32
    limits.maximumInformationalResponses = 3
    return limits
}()

/// A fuzz input cut into chunks: one byte — low three bits, the number of chunks minus one (1…8);
/// bit 3, a flag the target gives a meaning — then one byte per further chunk placing its start,
/// then the bytes that are cut.
public struct ChunkedInput {
    /// Bit 3 of the first byte.
    public var flag = false
    /// The payload, cut where the input says.
    public var chunks: [ArraySlice<UInt8>] = []

    public init(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let count = Int(first & 0x07) + 1
        flag = first & 0x08 != 0
        let cutBytes = bytes.dropFirst().prefix(count - 1)
        let payload = bytes.dropFirst(1 + cutBytes.count)
        var cuts = cutBytes.map { payload.startIndex + Int($0) * payload.count / 256 }
        cuts.sort()
        var from = payload.startIndex
        for cut in cuts + [payload.endIndex] {
            chunks.append(payload[from..<cut])
            from = cut
        }
    }
}

/// What happened to an exchange, recorded by its promises' callbacks (which run on the embedded loop, at once).
public final class ExchangeOutcome: @unchecked Sendable {
    public var head: HTTPResponseHead?
    public var headError: (any Error)?
    public var completed: Bool?
    public var completionError: (any Error)?

    public var headSettled: Bool { head != nil || headError != nil }
    public var completionSettled: Bool { completed != nil || completionError != nil }

    /// Watches `exchange`'s head and end.
    public init(watching exchange: HTTPExchange) {
        exchange.responseHeadFuture.whenComplete { result in
            switch result {
            case .success(let head): self.head = head
            case .failure(let error): self.headError = error
            }
        }
        exchange.ended.whenComplete { result in
            switch result {
            case .success(let keepAlive): self.completed = keepAlive
            case .failure(let error): self.completionError = error
            }
        }
    }
}

/// A `GET` (or `HEAD`) of `/` from example.com, written on `channel` as a TrustHTTPClient writes an exchange;
/// what becomes of it.
public func sendRequest(on channel: any Channel, head: Bool = false) -> ExchangeOutcome {
    let exchange = makeRequest(on: channel.eventLoop, head: head)
    let outcome = ExchangeOutcome(watching: exchange)
    _ = exchange.bind(channel)
    exchange.send(on: channel)
    return outcome
}

/// A `GET` (or `HEAD`) of `/` from example.com, not yet sent (an HTTP/2 stream made for it sends it).
public func makeRequest(on eventLoop: any EventLoop, head: Bool = false) -> HTTPExchange {
    var headers = HTTPHeaders()
    headers.add(name: "Host", value: "example.com")
    let requestHead = HTTPRequestHead(version: .http1_1, method: head ? .HEAD : .GET, uri: "/", headers: headers)
    return HTTPExchange(head: requestHead, body: .none, eventLoop: eventLoop, limits: smallResponseLimits)
}

/// Drops what the client wrote (the request, SETTINGS, ACKs): its type does not matter here.
public func drainOutbound(_ channel: EmbeddedChannel) {
    while true {
        do {
            guard try channel.readOutbound(as: IOData.self) != nil else { return }
        } catch {
            continue  // an element of another type, removed all the same
        }
    }
}
