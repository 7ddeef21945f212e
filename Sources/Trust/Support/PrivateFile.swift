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

/// Writes a file whose bytes no other user may read at any moment: a private key, a credentials file.
///
/// The bytes go to a new temporary file beside the destination, created with `open(O_CREAT | O_EXCL | O_NOFOLLOW,
/// 0600)` — so it is never readable by others whatever the umask, and never a file or link someone else placed
/// there — then flushed (`fsync`) and renamed over the destination (`rename(2)` is atomic: a reader sees the old
/// file or the new one, never a part). Only then may a public file be widened to its final `mode` (through the
/// descriptor, before the rename). Foundation's atomic `write(toFile:)` creates its temporary file with 0666 less
/// the umask, which leaves a key readable by others until a later `chmod`.
///
/// A file that must never replace another (``Publication/newFile``) gets its name with `link(2)` instead of
/// `rename(2)`: link fails with `EEXIST` when the name exists — as a file, a folder or a link, dangling or not —
/// and the kernel decides it atomically, so of two writers racing for one name exactly one wins (POSIX.1-2017
/// link(): "If path2 names an existing file, link() shall fail"). A check for the name before writing would let
/// both pass it and the later rename replace the earlier file.
package enum PrivateFile {
    /// Why a file could not be written: the path and the system's reason. Never holds the bytes.
    package struct WriteError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The destination.
        package var path: String
        /// The reason (`strerror`), or what failed.
        package var reason: String
        /// Whether it failed because the destination exists (``Publication/newFile`` only).
        package var destinationExists = false

        package var description: String { "cannot write \(path): \(reason)" }
    }

    /// How the finished file gets its name.
    package enum Publication: Sendable {
        /// Renamed over whatever the name holds (atomic replacement).
        case replacing
        /// Only if the name is free: ``WriteError/destinationExists`` otherwise, and nothing is changed.
        case newFile
    }

    /// Writes `bytes` to `path` as described above; the file ends with exactly `mode` (0600 by default; only the
    /// permission bits are used). The folder must exist. Once the file has its name, the folder is flushed too
    /// (best effort: some filesystems refuse `fsync` on a folder), so that the name survives a crash.
    ///
    /// ``Publication/newFile`` on a filesystem without hard links (FAT, exFAT, some network and FUSE mounts refuse
    /// link(2) with `EPERM` or `ENOTSUP`): the file is created under its name with `O_CREAT | O_EXCL`, which is as
    /// exclusive, and written there; a reader may then see it before its last byte.
    package static func write(
        _ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o600, publication: Publication = .replacing
    ) throws(WriteError) {
        let folder = path.parentPath
        let name = path.pathName
        let buffer = Array(bytes)
        let temporary = (folder.isEmpty ? "." : folder) + "/." + name + "." + UUID().uuidString + ".tmp"
        var failure = writeNew(temporary, buffer, mode: mode)
        var exists = false
        if failure == nil {
            switch publication {
            case .replacing:
                if rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
            case .newFile:
                if link(temporary, path) != 0 {
                    let error = errno
                    unlink(temporary)
                    if error == EPERM || error == ENOTSUP || error == EOPNOTSUPP {
                        // No hard links here: the name itself, created exclusively.
                        failure = writeNew(path, buffer, mode: mode)
                        exists = failure == nil ? false : errno == EEXIST
                    } else {
                        exists = error == EEXIST
                        failure = String(cString: strerror(error))
                    }
                    if exists { failure = "it already exists" }
                }
                // On success the file keeps the name it was linked to; the temporary name goes.
                unlink(temporary)
            }
        }
        if let failure {
            unlink(temporary)
            throw WriteError(path: path, reason: failure, destinationExists: exists)
        }
        let directory = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// Creates `path` (`O_EXCL`, never through a link, 0600 from its first byte), writes `bytes`, sets `mode`,
    /// flushes and closes it: nil when all went well, else the reason, with `errno` set and the file removed
    /// (`EEXIST` when the name was taken, and nothing removed).
    private static func writeNew(_ path: String, _ bytes: [UInt8], mode: mode_t) -> String? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        var failure: String?
        bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count, let base = raw.baseAddress {
                let result = systemWrite(descriptor, base + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                written += result
            }
        }
        // fchmod sets the bits exactly (the umask applies only at creation): a public file gets its 0644 here, on
        // the descriptor, before it has its name.
        if failure == nil, mode & 0o7777 != 0o600, fchmod(descriptor, mode & 0o777) != 0 { failure = String(cString: strerror(errno)) }
        if failure == nil, fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        if close(descriptor) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if failure != nil {
            let error = errno
            unlink(path)
            errno = error
        }
        return failure
    }
}

/// write(2), out of `PrivateFile`'s scope (where `write` names its own method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
