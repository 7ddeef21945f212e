import Crypto

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

/// What tells that files read earlier may have changed, for the identities that follow their files
/// (`ReloadingClientIdentity`, `ReloadingServerIdentity` in TrustNIO) and ``ReloadingTrustConfiguration``: each
/// file's stamp from `stat(2)` — modification time, size, inode, device, permission bits and owner, cheap to take
/// at every poll — and the SHA-256 of all their bytes,
/// taken only when a stamp moved, so that a file touched but not changed (or rewritten with the same bytes) is no
/// change.
///
/// A stamp alone can miss a change: a file rewritten in place, to the same size, within the clock tick of the
/// filesystem's last modification keeps its modification time. A file modified less than ``settlingTime`` before
/// the previous look is therefore read again at the next one (as git treats an index entry as "racily clean").
/// The mode and owner are in the stamp so that a `chmod` or `chown` alone (a file refused as writable by others,
/// then made private) is seen at the next poll.
package struct FileFingerprint: Sendable, Hashable {
    /// One file's `stat(2)` stamp; nil when the file cannot be examined (missing, no permission).
    package struct Stamp: Sendable, Hashable {
        package var seconds: Int
        package var nanoseconds: Int
        package var size: Int
        package var inode: UInt64
        package var device: UInt64
        /// The permission bits and file type (`st_mode`) and the owner (`st_uid`).
        package var mode: UInt32
        package var owner: UInt32

        /// When the file was last modified, as a date.
        package var modified: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }
    }

    /// How long after its modification a file's stamp is not trusted to show a later change.
    package static let settlingTime: TimeInterval = 2

    /// The files' stamps, in the order of the paths.
    package var stamps: [Stamp?]
    /// When the stamps were taken.
    package var taken: Date

    /// The stamps of `paths` now.
    package init(paths: [String], now: Date = Date()) {
        stamps = paths.map(Self.stamp)
        taken = now
    }

    /// Whether `later` may show a change from this fingerprint: a stamp moved (a file appeared, went, or was
    /// written), or a file was modified so shortly before these stamps were taken that a rewrite in the same
    /// clock tick would not show.
    package func mayDiffer(from later: FileFingerprint) -> Bool {
        if stamps != later.stamps { return true }
        return stamps.contains { stamp in
            guard let stamp else { return false }
            return stamp.modified > taken.addingTimeInterval(-Self.settlingTime)
        }
    }

    /// The SHA-256 of `contents` (each part's length first, so that bytes moved from one file to the next are a
    /// change).
    package static func digest(_ contents: [[UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        for part in contents {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: part)
        }
        return Array(hasher.finalize())
    }

    private static func stamp(_ path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let (seconds, nanoseconds) = (Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec))
        #else
            let (seconds, nanoseconds) = (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
        #endif
        return Stamp(
            seconds: seconds, nanoseconds: nanoseconds, size: Int(info.st_size), inode: UInt64(info.st_ino), device: UInt64(info.st_dev),
            mode: UInt32(info.st_mode), owner: UInt32(info.st_uid))
    }
}
