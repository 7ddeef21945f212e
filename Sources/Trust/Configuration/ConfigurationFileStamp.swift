import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What tells a ``ReloadingTrustConfiguration`` polling its file that the file may have changed since it was last
/// read: its `stat(2)` stamp (modification time to the nanosecond, size, inode, device), cheap to take at every
/// tick. The file's SHA-256 then decides whether it did change, so a file touched without a change is no change.
///
/// A stamp alone can miss a change: a file rewritten in place to the same size within the filesystem's clock tick
/// keeps its modification time. A file modified less than ``settlingTime`` before its stamp was taken is therefore
/// read again at the next tick (as git treats an index entry as "racily clean").
struct ConfigurationFileStamp: Sendable, Hashable {
    struct Fields: Sendable, Hashable {
        var seconds: Int
        var nanoseconds: Int
        var size: Int
        var inode: UInt64
        var device: UInt64

        var modified: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }
    }

    /// How long after its modification a file's stamp is not trusted to show a later change.
    static let settlingTime: TimeInterval = 2

    /// The file's stamp; nil when it cannot be examined (missing, no permission).
    var fields: Fields?
    /// When the stamp was taken.
    var taken: Date

    /// The stamp of the file at `path` now.
    init(path: String, now: Date) {
        taken = now
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        #if canImport(Darwin)
            let (seconds, nanoseconds) = (Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec))
        #else
            let (seconds, nanoseconds) = (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
        #endif
        fields = Fields(seconds: seconds, nanoseconds: nanoseconds, size: Int(info.st_size), inode: UInt64(info.st_ino), device: UInt64(info.st_dev))
    }

    /// Whether the file may have changed between this stamp and `later`: the stamp moved, or the file had been
    /// modified so shortly before this stamp was taken that a rewrite in the same clock tick would not show.
    func mayDiffer(from later: ConfigurationFileStamp) -> Bool {
        if fields != later.fields { return true }
        guard let fields else { return false }
        return fields.modified > taken.addingTimeInterval(-Self.settlingTime)
    }

    /// The SHA-256 of a file's contents.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}
