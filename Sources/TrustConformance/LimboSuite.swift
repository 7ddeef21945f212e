import Foundation

/// The x509-limbo JSON schema (version 1), as far as the runner needs it.
struct LimboSuite: Decodable {
    var testcases: [LimboCase]
}

struct LimboCase: Decodable {
    struct PeerName: Decodable {
        var kind: String
        var value: String
    }

    var id: String
    var features: [String]?
    var validation_kind: String
    var trusted_certs: [String]
    var untrusted_intermediates: [String]
    var peer_certificate: String
    var validation_time: String?
    var extended_key_usage: [String]?
    var expected_result: String
    var expected_peer_name: PeerName?
    var max_chain_depth: Int?
    var crls: [String]?
    var conflicts_with: [String]?
}

/// AFNetworking's SecurityPolicy assertions as data.
struct AFNetworkingSuite: Decodable {
    struct Policy: Decodable {
        var pinning_mode: String
        var pinned: [String]
        var allow_invalid_certificates: Bool
        var validates_domain_name: Bool
    }

    struct Case: Decodable {
        var id: String
        var policy: Policy
        var server_chain: [String]
        var domain: String?
        var expected: Bool
    }

    var validation_time: String
    var certificates_der_b64: [String: String]
    var cases: [Case]
}

/// A checked-in list of cases whose result differs from the suite's expectation on purpose.
struct KnownDeviations: Decodable {
    struct Deviation: Decodable {
        var id: String
        var reason: String
    }

    var deviations: [Deviation]
}
