/// What a failed TLS handshake says, read from BoringSSL's error text — the one place in swift-trust
/// that interprets that text (the TrustHTTPClient's client-certificate errors and `TrustHTTPClientError.HandshakeFailure`,
/// which `trust inspect` uses too, both ask here; ``clientCertificateRefusals`` is the one table of alerts).
///
/// NIOSSL hands BoringSSL's errors over as strings made by `ERR_error_string_n`:
/// `error:1000045c:SSL routines:OPENSSL_internal:TLSV13_ALERT_CERTIFICATE_REQUIRED`, followed in NIOSSL's
/// description by BoringSSL's source path and line. Only the reason codes (BoringSSL's `SSL_R_*` names in
/// `include/openssl/ssl.h`, which are stable) are read; paths, numbers and the rest are not. A received
/// TLS alert (RFC 8446 §6.2) appears as a reason code ending in `ALERT_` and the alert's name.
package struct BoringSSLErrorText: Sendable, Equatable {
    /// Every reason code in the text, in order.
    package let reasonCodes: [String]

    /// Reads the reason codes of `text` (one error, or every error seen on a connection).
    package init(_ text: String) {
        var codes: [String] = []
        // BoringSSL writes `SSL routines:OPENSSL_internal:CODE`; other libcrypto builds `routines:CODE`.
        for marker in ["OPENSSL_internal:", "routines:"] where codes.isEmpty {
            var rest = Substring(text)
            while let range = rest.firstRange(of: marker) {
                let code = rest[range.upperBound...].prefix { ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }
                if !code.isEmpty, !codes.contains(String(code)) { codes.append(String(code)) }
                rest = rest[range.upperBound...]
            }
        }
        reasonCodes = codes
    }

    /// The last reason code (the one nearest the failure), if any.
    package var reason: String? { reasonCodes.last }

    /// Whether the server said it requires a client certificate (TLS 1.3's `certificate_required` alert).
    package var certificateRequired: Bool { reasonCodes.contains { $0.hasSuffix("CERTIFICATE_REQUIRED") } }

    /// The alerts by which a server refuses a client certificate, with what each usually means about it.
    package static let clientCertificateRefusals: [(alert: String, meaning: String)] = [
        ("ALERT_CERTIFICATE_EXPIRED", "certificate expired — outside its validity period"),
        ("ALERT_UNKNOWN_CA", "unknown CA — not issued by a CA the server trusts, or intermediates missing"),
        ("ALERT_UNSUPPORTED_CERTIFICATE", "unsupported certificate — wrong key usage or extended key usage (not for client authentication)"),
        ("ALERT_CERTIFICATE_REVOKED", "certificate revoked"),
        ("ALERT_BAD_CERTIFICATE", "bad certificate"),
        ("ALERT_CERTIFICATE_UNKNOWN", "certificate unknown — refused by the server's policy"),
        ("ALERT_ACCESS_DENIED", "access denied — valid, but not allowed here"),
        ("ALERT_DECRYPT_ERROR", "decrypt error — the certificate's key did not sign the handshake"),
        ("ALERT_HANDSHAKE_FAILURE", "handshake failure"),
    ]

    /// The first alert in the text that a server refusing a client certificate sends, with its meaning.
    package var clientCertificateRefusal: (alert: String, meaning: String)? {
        Self.clientCertificateRefusals.first { refusal in reasonCodes.contains { $0.hasSuffix(refusal.alert) } }
    }

    /// Whether the server ended the handshake with a `handshake_failure` alert.
    package var handshakeFailureAlert: Bool { reasonCodes.contains { $0.hasSuffix("ALERT_HANDSHAKE_FAILURE") } }

    /// What went wrong, for a one-sentence explanation.
    package enum Problem: Sendable, Equatable {
        /// The peer does not speak TLS (a plain-HTTP port, a proxy port).
        case notTLS
        /// The peer offers only a TLS version below the minimum.
        case protocolVersion
        /// No cipher suite or signature algorithm in common.
        case noSharedCipher
        /// Anything else (the reason code, when there is one).
        case other
    }

    /// The problem named by the last reason code.
    package var problem: Problem {
        switch reason {
        case "WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST", "UNKNOWN_PROTOCOL", "RECORD_TOO_LARGE": return .notTLS
        case "UNSUPPORTED_PROTOCOL", "TLSV1_ALERT_PROTOCOL_VERSION", "PROTOCOL_VERSION": return .protocolVersion
        case "SSLV3_ALERT_HANDSHAKE_FAILURE", "NO_SHARED_CIPHER", "NO_CIPHERS_AVAILABLE": return .noSharedCipher
        default: return .other
        }
    }
}
