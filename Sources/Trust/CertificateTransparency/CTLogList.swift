import Crypto
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A list of Certificate Transparency logs in the schema Chrome publishes (`log_list.json`, version 3): operators,
/// each with logs — `description`, `log_id`, `key`, `url`, `mmd`, `state`, optional `temporal_interval` — and the
/// list's `log_list_timestamp`.
///
/// Parsed strictly where it matters (every log's `key` must hash to its `log_id`; states and intervals must be
/// well-formed) and leniently elsewhere (unknown members are ignored, as the schema grows).
public struct CTLogList: Sendable, Hashable {
    /// A log's state (Chrome's CT log states).
    public enum State: String, Sendable, Hashable, CaseIterable {
        case pending, qualified, usable, readonly, retired, rejected
    }

    /// One log.
    public struct Log: Sendable, Hashable {
        /// The log's name, as the list gives it.
        public var description: String
        /// SHA-256 of `key`.
        package var logID: [UInt8]
        /// The DER SubjectPublicKeyInfo.
        package var key: [UInt8]
        /// The parsed key (P-256 ECDSA or RSA in practice).
        package var publicKey: Certificate.PublicKey
        /// The submission URL.
        package var url: String
        /// The maximum merge delay, in seconds.
        package var maximumMergeDelay: Int
        /// The state, and since when.
        package var state: State?
        /// When the log entered its state.
        package var stateTimestamp: Date?
        /// Only certificates expiring in `[start, end)` are logged here (a temporally sharded log).
        package var temporalInterval: Range<Date>?
        /// The operator's name.
        public var operatorName: String

        /// The log ID in base64.
        package var logIDBase64: String { Data(logID).base64EncodedString() }
    }

    /// The list's own version string.
    package var version: String?
    /// When the list was published (`log_list_timestamp`).
    public var timestamp: Date?
    /// Every log, in list order.
    package var logs: [Log]
    private var byID: [[UInt8]: Int]

    /// A list of `logs` published at `timestamp`.
    package init(logs: [Log], timestamp: Date?, version: String? = nil) {
        self.logs = logs
        self.timestamp = timestamp
        self.version = version
        self.byID = Dictionary(logs.enumerated().map { ($1.logID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The log with `id`, if listed.
    package func log(id: [UInt8]) -> Log? {
        byID[id].map { logs[$0] }
    }

    /// Equal when the logs and timestamp are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.logs == rhs.logs && lhs.timestamp == rhs.timestamp && lhs.version == rhs.version }
    /// Hashes the log IDs and timestamp.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(logs.map(\.logID))
        hasher.combine(timestamp)
    }

    /// A list that cannot be used.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, with the JSON path.
        public var detail: String
        init(_ detail: String) { self.detail = detail }
        /// "bad CT log list: …".
        public var description: String { "bad CT log list: \(detail)" }
    }

    /// Reads a list from `path` (a regular file, FIFO or pipe of at most 4 MiB: `LocalFile`; a FIFO is waited on 5 s at most).
    public static func load(path: String) throws(ParseError) -> CTLogList {
        let data: [UInt8]
        do {
            data = try LocalFile.read(path, limit: LocalFile.configurationLimit)
        } catch {
            throw ParseError("\(path): cannot read the file: \(error.reason)")
        }
        do {
            return try CTLogList(json: String(decoding: data, as: UTF8.self))
        } catch {
            throw ParseError("\(path): \(error.detail)")
        }
    }

    /// Parses the v3 JSON text.
    public init(json text: String) throws(ParseError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw ParseError("not JSON (\(error))")
        }
        guard case .object(let top) = document else { throw ParseError("$: not an object") }
        func member(_ members: [JSONValue.Member], _ key: String) -> JSONValue? { members.first { $0.key == key }?.value }
        func string(_ value: JSONValue?, _ path: String) throws(ParseError) -> String {
            guard case .string(let text)? = value else { throw ParseError("\(path): a string is required") }
            return text
        }
        func date(_ value: JSONValue?, _ path: String) throws(ParseError) -> Date {
            let text = try string(value, path)
            guard let date = RFC3339.parse(text) else { throw ParseError("\(path): \"\(text)\" is not an RFC 3339 time") }
            return date
        }
        var timestamp: Date?
        if let value = member(top, "log_list_timestamp") { timestamp = try date(value, "$.log_list_timestamp") }
        let version: String? = if case .string(let text)? = member(top, "version") { text } else { nil }
        guard case .array(let operators)? = member(top, "operators") else { throw ParseError("$.operators: an array is required") }
        var logs: [Log] = []
        for (operatorIndex, operatorValue) in operators.enumerated() {
            let operatorPath = "$.operators[\(operatorIndex)]"
            guard case .object(let operatorMembers) = operatorValue else { throw ParseError("\(operatorPath): not an object") }
            let operatorName = try string(member(operatorMembers, "name"), operatorPath + ".name")
            guard case .array(let logValues)? = member(operatorMembers, "logs") else { throw ParseError("\(operatorPath).logs: an array is required") }
            for (logIndex, logValue) in logValues.enumerated() {
                let path = "\(operatorPath).logs[\(logIndex)]"
                guard case .object(let fields) = logValue else { throw ParseError("\(path): not an object") }
                let keyText = try string(member(fields, "key"), path + ".key")
                guard let key = Data(base64Encoded: keyText).map(Array.init) else { throw ParseError("\(path).key: not base64") }
                let idText = try string(member(fields, "log_id"), path + ".log_id")
                guard let id = Data(base64Encoded: idText).map(Array.init), id.count == 32 else { throw ParseError("\(path).log_id: not 32 bytes of base64") }
                guard Array(SHA256.hash(data: key)) == id else { throw ParseError("\(path).log_id: not the SHA-256 of the key (RFC 6962 §3.2)") }
                let publicKey: Certificate.PublicKey
                do {
                    publicKey = try Certificate.PublicKey(derEncoded: key)
                } catch {
                    throw ParseError("\(path).key: not a supported SubjectPublicKeyInfo")
                }
                var mmd = 86_400
                if case .number(let text)? = member(fields, "mmd"), let value = Int(text) { mmd = value }
                var state: State?
                var stateTimestamp: Date?
                if let stateValue = member(fields, "state") {
                    guard case .object(let states) = stateValue, states.count == 1, let only = states.first, let known = State(rawValue: only.key) else {
                        throw ParseError("\(path).state: one of \(State.allCases.map(\.rawValue).joined(separator: ", ")) is required")
                    }
                    state = known
                    if case .object(let details) = only.value, let time = member(details, "timestamp") {
                        stateTimestamp = try date(time, "\(path).state.\(only.key).timestamp")
                    }
                }
                var interval: Range<Date>?
                if let intervalValue = member(fields, "temporal_interval") {
                    guard case .object(let bounds) = intervalValue else { throw ParseError("\(path).temporal_interval: not an object") }
                    let start = try date(member(bounds, "start_inclusive"), path + ".temporal_interval.start_inclusive")
                    let end = try date(member(bounds, "end_exclusive"), path + ".temporal_interval.end_exclusive")
                    guard start < end else { throw ParseError("\(path).temporal_interval: start_inclusive is not before end_exclusive") }
                    interval = start..<end
                }
                let description: String = if case .string(let text)? = member(fields, "description") { text } else { idText }
                let url: String = if case .string(let text)? = member(fields, "url") { text } else { "" }
                logs.append(
                    Log(
                        description: description, logID: id, key: key, publicKey: publicKey, url: url, maximumMergeDelay: mmd, state: state,
                        stateTimestamp: stateTimestamp, temporalInterval: interval, operatorName: operatorName))
            }
        }
        self.init(logs: logs, timestamp: timestamp, version: version)
    }
}
