import TrustLabPKI

extension LabPKI {
    /// Every lab host name mapped to 127.0.0.1 (for `TrustHTTPClientConfiguration.resolve`, like curl's `--resolve`).
    public static var loopbackResolve: [String: String] {
        var map: [String: String] = [:]
        for name in serverNames { map[hostName(for: name)] = "127.0.0.1" }
        map["other.lab.test"] = "127.0.0.1"
        map["plain.lab.test"] = "127.0.0.1"
        for mode in LabServer.MutualTLSMode.allCases { map[mode.host] = "127.0.0.1" }
        return map
    }
}
