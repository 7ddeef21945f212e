import NIOSSL

extension TLSVersion {
    /// `TLSv1.2`, `TLSv1.3`…: the version as shown in responses, errors and `trust inspect`.
    public var displayName: String {
        switch self {
        case .tlsv1: return "TLSv1.0"
        case .tlsv11: return "TLSv1.1"
        case .tlsv12: return "TLSv1.2"
        case .tlsv13: return "TLSv1.3"
        }
    }
}
