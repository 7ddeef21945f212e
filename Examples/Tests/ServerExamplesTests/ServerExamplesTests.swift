import Foundation
import Hummingbird
import HummingbirdMutualTLS
import NIOCore
import NIOSSL
import ServiceLifecycle
import Testing
import TrustHTTP
import TrustLab
import TrustNIO
import Vapor
import VaporMutualTLS
import X509

/// A server of one framework, started on a free loopback port, stopped by `stop`.
struct RunningServer: Sendable {
    let port: Int
    let stop: @Sendable () async -> Void
}

extension RunningServer {
    /// The Hummingbird application `makeApplication` builds (given the callback that reports its port), run in a
    /// service group on a free loopback port until ``stop``.
    static func hummingbird(
        label: String, _ makeApplication: (@escaping @Sendable (any Channel) async -> Void) throws -> some ApplicationProtocol
    ) async throws -> RunningServer {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try makeApplication { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: label)))
        let running = Task { try await group.run() }
        var port = 0
        for await bound in ports { port = bound }
        guard port > 0 else {
            running.cancel()
            throw LabError.cannotWrite("hummingbird", "the server did not start")
        }
        return RunningServer(port: port) {
            await group.triggerGracefulShutdown()
            _ = await running.result
        }
    }
}

/// One lab PKI per test process (key generation is the slow part).
enum Lab {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    /// The lab's `good` server identity as a NIOSSL server configuration.
    static func serverTLS() throws -> TLSConfiguration {
        guard let good = pki.servers["good"] else { throw LabError.cannotWrite("good", "no such lab server") }
        return try LabServer.serverConfiguration(chain: good.chain, privateKey: good.privateKey)
    }

    /// Client certificates must chain to the lab root (the `client` identities are issued under it).
    static func clientAuthentication(_ requirement: ClientAuthentication.Requirement) -> ClientAuthentication {
        ClientAuthentication(requirement: requirement, anchors: [pki.root.certificate])
    }

    static func identity(_ name: String) throws -> ClientIdentity {
        guard let client = pki.clients[name] else { throw LabError.cannotWrite(name, "no such lab client") }
        return try ClientIdentity(certificateChainPEM: client.chainPEM, privateKeyPEM: client.privateKeyPEM)
    }
}

enum Framework: String, CaseIterable, CustomTestStringConvertible {
    case hummingbird, vapor
    var testDescription: String { rawValue }

    func start(_ requirement: ClientAuthentication.Requirement) async throws -> RunningServer {
        switch self {
        case .hummingbird: try await Self.startHummingbird(requirement)
        case .vapor: try await Self.startVapor(requirement)
        }
    }

    static func startHummingbird(_ requirement: ClientAuthentication.Requirement) async throws -> RunningServer {
        try await RunningServer.hummingbird(label: "hummingbird-example") { onServerRunning in
            HummingbirdMutualTLSServer.application(
                tlsConfiguration: try Lab.serverTLS(), clientAuthentication: Lab.clientAuthentication(requirement), onServerRunning: onServerRunning)
        }
    }

    static func startVapor(_ requirement: ClientAuthentication.Requirement) async throws -> RunningServer {
        let app = try await Application.make(.testing)
        VaporMutualTLSServer.configure(app, tlsConfiguration: try Lab.serverTLS(), clientAuthentication: Lab.clientAuthentication(requirement))
        do {
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        guard let port = app.http.server.shared.localAddress?.port else {
            await app.server.shutdown()
            try? await app.asyncShutdown()
            throw LabError.cannotWrite("vapor", "no local port")
        }
        return RunningServer(port: port) {
            await app.server.shutdown()
            try? await app.asyncShutdown()
        }
    }
}

/// A TrustHTTPClient trusting the lab roots, resolving the lab's names to 127.0.0.1, offering `identity` when asked.
func whoami(port: Int, identity: ClientIdentity?) async -> Result<String, TrustHTTPClientError> {
    var configuration = TrustHTTPClientConfiguration()
    configuration.serverTrust = DefaultTrustEvaluator(anchors: .only(Lab.pki.trustedRoots))
    configuration.resolve = LabPKI.loopbackResolve
    configuration.requestTimeout = .seconds(20)
    configuration.defaultClientIdentity = identity
    do {
        let session = try TrustHTTPClient(configuration: configuration)
        let result: Result<String, TrustHTTPClientError>
        do {
            let url = try #require(URL(string: "https://good.lab.test:\(port)/whoami"))
            let response = try await session.data(for: TrustHTTPClientRequest(url: url))
            result = response.statusCode == 200 ? .success(response.text) : .failure(TrustHTTPClientError(.badServerResponse, "status \(response.statusCode)"))
        } catch let error as TrustHTTPClientError {
            result = .failure(error)
        }
        await session.shutdown()
        return result
    } catch let error as TrustHTTPClientError {
        return .failure(error)
    } catch {
        return .failure(TrustHTTPClientError(.badServerResponse, "\(error)"))
    }
}

@Suite("Hummingbird 2 and Vapor 4 servers requiring client certificates through ClientAuthentication", .serialized, .timeLimit(.minutes(5)))
struct ServerExamplesTests {
    @Test(arguments: Framework.allCases)
    func labClientIsAcceptedAndSeenByTheHandler(_ framework: Framework) async throws {
        let server = try await framework.start(.required)
        let client = try #require(Lab.pki.clients["client"])
        let answer = await whoami(port: server.port, identity: try Lab.identity("client"))
        await server.stop()
        let text = try answer.get()
        // The handler sees the identity and the validated path swift-trust built: leaf, intermediate, lab root.
        #expect(text == "client: \(client.certificate.subject) \(client.certificate.spkiPin)\nvalidated chain: 3 certificates\n", "\(text)")
    }

    @Test(arguments: Framework.allCases)
    func anonymousClientIsRefused(_ framework: Framework) async throws {
        let server = try await framework.start(.required)
        let answer = await whoami(port: server.port, identity: nil)
        await server.stop()
        guard case .failure(let error) = answer else {
            Issue.record("\(framework): anonymous client accepted: \(answer)")
            return
        }
        #expect(error.code == .clientCertificateRequired, "\(framework): \(error)")
    }

    @Test(arguments: Framework.allCases, ["client-foreign", "client-expired", "partner", "client-server-eku"])
    func badClientCertificateIsRefused(_ framework: Framework, _ name: String) async throws {
        let server = try await framework.start(.required)
        let answer = await whoami(port: server.port, identity: try Lab.identity(name))
        await server.stop()
        guard case .failure(let error) = answer else {
            Issue.record("\(framework): \(name) accepted: \(answer)")
            return
        }
        #expect(error.code == .clientCertificateRejected, "\(framework) \(name): \(error)")
    }

    @Test(arguments: Framework.allCases)
    func optionalCertificateLetsAnonymousIn(_ framework: Framework) async throws {
        let server = try await framework.start(.optional)
        let anonymous = await whoami(port: server.port, identity: nil)
        let identified = await whoami(port: server.port, identity: try Lab.identity("client"))
        let foreign = await whoami(port: server.port, identity: try Lab.identity("client-foreign"))
        await server.stop()
        #expect((try? anonymous.get()) == "anonymous\n", "\(framework): \(anonymous)")
        #expect((try? identified.get())?.hasPrefix("client: CN=lab client") == true, "\(framework): \(identified)")
        // A certificate that is presented must verify, even where none is required.
        guard case .failure(let error) = foreign else {
            Issue.record("\(framework): foreign client accepted")
            return
        }
        #expect(error.code == .clientCertificateRejected, "\(framework): \(error)")
    }
}
