import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a ``SignedConfigurationUpdater`` keeps across restarts: the sequence and SHA-256 of the last bundle it
/// accepted, in a small JSON file (`{"sequence": 42, "sha256": "…"}`) created private (0600) from its first byte.
///
/// The file decides which bundles are rollbacks, so it is read as a configuration file is: refused when another user
/// could have written it, a device, or larger than 4 KiB.
struct AcceptedBundleRecord: Sendable, Hashable {
    var sequence: UInt64
    var digest: [UInt8]

    static let limit = 4096

    /// The record in `path`; nil when there is no such file yet (nothing was ever accepted).
    static func read(_ path: String) throws(TrustConfigurationRejection) -> AcceptedBundleRecord? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, limit: limit, ownership: .ownerOnlyWritable, pipes: .refused)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        guard let text = StrictUTF8.string(bytes), case .object(let members)? = try? JSONValue.parse(text),
            members.count == 2, case .number(let number)? = members.first(where: { $0.key == "sequence" })?.value, let sequence = UInt64(number),
            case .string(let hex)? = members.first(where: { $0.key == "sha256" })?.value, let digest = Self.bytes(hex: hex), digest.count == 32
        else {
            throw .unreadable(path: path, reason: "not a record of the last accepted bundle ({\"sequence\": N, \"sha256\": HEX})")
        }
        return AcceptedBundleRecord(sequence: sequence, digest: digest)
    }

    /// Records `record` in `path` unless the file already holds a later sequence (another updater, in this process
    /// or another, accepted a later bundle since this one read the file): then that record is returned and nothing
    /// is written — the recorded sequence never goes down. The read and the write happen under an exclusive
    /// `flock(2)` on `path` + `.lock` (the record itself is replaced by a rename, so it cannot carry the lock).
    static func advance(_ path: String, to record: AcceptedBundleRecord) throws(TrustConfigurationRejection) -> AcceptedBundleRecord? {
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw .sequenceNotRecorded(path: path, reason: "its lock file: " + String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .sequenceNotRecorded(path: path, reason: "its lock file: " + String(cString: strerror(errno))) }
        }
        defer { flock(lock, LOCK_UN) }
        if let recorded = try read(path), recorded.sequence > record.sequence || (recorded.sequence == record.sequence && recorded != record) {
            return recorded
        }
        try record.write(to: path)
        return nil
    }

    /// Replaces `path` with this record, atomically and private from its first byte, and flushes its folder so the
    /// rename survives a crash (the file's bytes are flushed before it).
    func write(to path: String) throws(TrustConfigurationRejection) {
        let hex = digest.hexText()
        let text = "{\"sequence\": \(sequence), \"sha256\": \"\(hex)\"}\n"
        do {
            try PrivateFile.write(Array(text.utf8), to: path)
        } catch {
            throw .sequenceNotRecorded(path: path, reason: error.reason)
        }
        let name = path.parentPath
        let folder = open(name.isEmpty ? "." : name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw .sequenceNotRecorded(path: path, reason: "its folder: " + String(cString: strerror(errno))) }
        defer { close(folder) }
        guard fsync(folder) == 0 else { throw .sequenceNotRecorded(path: path, reason: "its folder: " + String(cString: strerror(errno))) }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
