import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An OCSP responder on 127.0.0.1 (plain HTTP/1.1, a random port) for the lab's authorities, speaking RFC 6960
/// Appendix A.1: `POST /` with an `application/ocsp-request` body, or `GET /BASE64` (RFC 5019 §5); it answers
/// `application/ocsp-response`.
///
/// Every certificate of a known issuer is good unless marked revoked or unknown; a CertID of an issuer it does not
/// serve is unknown. Its ``Behaviour`` can be changed at any time: who signs, the times, a status instead of an
/// answer (tryLater, unauthorized…), refusing SHA-256 CertIDs (as responders do that only know SHA-1), bytes that
/// are not a response, an HTTP error, a delay. It counts requests and remembers the last one.
public final class LabOCSPResponder: Sendable {
    /// How the responder answers.
    public struct Behaviour: Sendable {
        /// Who signs (default: each certificate's issuer).
        package var signer: LabOCSP.Signer = .issuer
        /// Times, responderID form and nonce.
        package var variation = LabOCSP.Variation()
        /// Answer with this status and no response bytes.
        public var status: OCSPResponse.Status?
        /// Answer `malformedRequest` to a request whose CertIDs are not SHA-1.
        package var refusesSHA256 = false
        /// Answer with these bytes (a malformed response, say).
        package var rawBody: [UInt8]?
        /// Answer with this HTTP status and an empty body.
        public var httpStatus: Int?
        /// Wait this long before answering.
        public var delay: TimeAmount = .zero
        /// Answer "good" about another serial number than the one asked about (a responder mixing up its answers,
        /// or an attacker replaying one made for another certificate).
        package var answersForAnotherSerial = false
        /// The default: good answers signed by the issuer.
        package init() {}
    }

    /// A request the responder received.
    public struct Received: Sendable {
        /// `GET` or `POST`.
        public var method: String
        /// The request, if it parsed.
        public var request: OCSPRequest?
    }

    private struct State: Sendable {
        var authorities: [LabAuthority]
        var behaviour = Behaviour()
        var statuses: [[UInt8]: LabOCSP.Status] = [:]
        var received: [Received] = []
    }

    /// The port, on 127.0.0.1.
    public var port: Int { listener.port }
    /// The responder's URL.
    public var url: String { "http://127.0.0.1:\(port)/" }
    private let listener: LabListener
    private let state: NIOLockedValueBox<State>

    private init(listener: LabListener, state: NIOLockedValueBox<State>) {
        self.listener = listener
        self.state = state
    }

    /// Starts a responder for certificates issued by `authorities`.
    public static func start(authorities: [LabAuthority], group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> LabOCSPResponder {
        let state = NIOLockedValueBox(State(authorities: authorities))
        let listener = try await LabListener.bind(group: group) { channel, _ in
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(Handler(state: state))
        }
        return LabOCSPResponder(listener: listener, state: state)
    }

    /// Answers for certificates `authority` issued too (an authority made after the responder, whose certificate
    /// names the responder's URL).
    package func serve(_ authority: LabAuthority) {
        state.withLockedValue { $0.authorities.append(authority) }
    }

    /// Changes how the responder answers.
    public func update(_ change: (inout Behaviour) -> Void) {
        state.withLockedValue { change(&$0.behaviour) }
    }

    /// Sets what the responder says about `certificate` (good, revoked, unknown).
    public func set(_ status: LabOCSP.Status, for certificate: Certificate) {
        let serial = Array(certificate.serialNumber.bytes.drop(while: { $0 == 0 }))
        state.withLockedValue { $0.statuses[serial] = status }
    }

    /// The requests received so far, oldest first.
    public var received: [Received] { state.withLockedValue { $0.received } }

    /// Stops listening and closes every connection.
    public func shutdown() async { await listener.close() }

    private final class Handler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let state: NIOLockedValueBox<State>
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(state: NIOLockedValueBox<State>) {
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var buffer):
                if body.count < 65_536 { body += buffer.readBytes(length: buffer.readableBytes) ?? [] }
            case .end:
                guard let head else { return }
                self.head = nil
                let (status, contentType, answer, delay) = answer(head: head, body: body)
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: delay) {
                    let (handler, context) = loopBound.value
                    handler.write(context: context, version: head.version, status: status, contentType: contentType, body: answer)
                }
            }
        }

        private func answer(head: HTTPRequestHead, body: [UInt8]) -> (HTTPResponseStatus, String, [UInt8], TimeAmount) {
            var der = body
            if head.method == .GET {
                // RFC 5019 §5: the path is the base64 of the DER request, URL-encoded.
                let encoded = String(head.uri.drop(while: { $0 == "/" }))
                der = Data(base64Encoded: encoded.percentDecoded ?? encoded).map(Array.init) ?? []
            }
            let request = try? OCSPRequest(derEncoded: der)
            let (behaviour, authorities) = state.withLockedValue { state in
                state.received.append(Received(method: head.method.rawValue, request: request))
                return (state.behaviour, state.authorities)
            }
            let ocsp = "application/ocsp-response"
            if let code = behaviour.httpStatus { return (HTTPResponseStatus(statusCode: code), "text/plain", [], behaviour.delay) }
            if let raw = behaviour.rawBody { return (.ok, ocsp, raw, behaviour.delay) }
            guard let request, !request.certificateIDs.isEmpty else { return (.ok, ocsp, LabOCSP.unsuccessful(.malformedRequest), behaviour.delay) }
            if let status = behaviour.status { return (.ok, ocsp, LabOCSP.unsuccessful(status), behaviour.delay) }
            if behaviour.refusesSHA256 && request.certificateIDs.contains(where: { $0.hashAlgorithm != .sha1 }) {
                return (.ok, ocsp, LabOCSP.unsuccessful(.malformedRequest), behaviour.delay)
            }
            // One issuer per response: the first CertID's.
            guard let first = request.certificateIDs.first, let issuer = authorities.first(where: { serves($0, first) }) else {
                guard let any = authorities.first else { return (.ok, ocsp, LabOCSP.unsuccessful(.unauthorized), behaviour.delay) }
                let unknown = try? LabOCSP.response(for: request.certificateIDs, issuer: any, requestNonce: request.nonce) { _ in .unknown }
                return (.ok, ocsp, unknown ?? LabOCSP.unsuccessful(.internalError), behaviour.delay)
            }
            let statuses = state.withLockedValue { $0.statuses }
            var ids = request.certificateIDs
            if behaviour.answersForAnotherSerial {
                ids = ids.map { id in
                    var other = id
                    other.serialNumber = id.serialNumber.isEmpty ? [1] : id.serialNumber.dropLast() + [(id.serialNumber.last ?? 0) ^ 0x01]
                    return other
                }
            }
            let response = try? LabOCSP.response(
                for: ids, issuer: issuer, signer: behaviour.signer, requestNonce: request.nonce, variation: behaviour.variation
            ) { id in
                serves(issuer, id) ? (statuses[id.serialNumber] ?? .good) : .unknown
            }
            return (.ok, ocsp, response ?? LabOCSP.unsuccessful(.internalError), behaviour.delay)
        }

        /// Whether `id` names a certificate `authority` issued (its name and key hashes).
        private func serves(_ authority: LabAuthority, _ id: OCSPCertificateID) -> Bool {
            var name = DER.Serializer()
            guard (try? name.serialize(authority.certificate.subject)) != nil else { return false }
            return id.issuerNameHash == id.hashAlgorithm.digest(name.serializedBytes)
                && id.issuerKeyHash == id.hashAlgorithm.digest(Array(authority.certificate.publicKey.subjectPublicKeyInfoBytes))
        }

        private func write(context: ChannelHandlerContext, version: HTTPVersion, status: HTTPResponseStatus, contentType: String, body: [UInt8]) {
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: contentType)
            headers.add(name: "content-length", value: String(body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
            if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
