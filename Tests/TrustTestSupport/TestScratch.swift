import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where tests put their temporary files and folders: one scratch folder per test process
/// (`swift-trust-tests-<UUID>` in the system's temporary folder), made on first use and removed, with
/// everything in it, when the process exits — so that a test run leaves nothing behind, private keys least of all.
///
/// The root is 0700 (only this user may look inside); the folders made in it keep their own modes (0777
/// less the umask, as before). Child processes (`trust`, openssl, curl…) and servers in other processes that
/// are handed paths in it are stopped before the test process exits.
package enum TestScratch {
    /// Why a scratch folder could not be made or removed.
    package enum Failure: Error, CustomStringConvertible {
        /// `mkdir` or `chmod` of `path` failed with `errno`.
        case cannotMake(path: String, errno: Int32)
        /// `path` (or something in it) could not be removed.
        case cannotRemove(path: String, reason: String)

        package var description: String {
            switch self {
            case .cannotMake(let path, let code): "cannot make the scratch folder \(path): \(String(cString: strerror(code)))"
            case .cannotRemove(let path, let reason): "cannot remove the scratch folder \(path): \(reason)"
            }
        }
    }

    /// The process's scratch root, made on first use (when its removal at exit is registered, once).
    package static var root: String {
        get throws(Failure) { try processRoot.get() }
    }

    /// A new, empty folder in ``root`` named `prefix-<UUID>`.
    package static func folder(_ prefix: String) throws(Failure) -> String {
        let path = try root + "/" + prefix + "-" + UUID().uuidString
        guard mkdir(path, 0o777) == 0 else { throw .cannotMake(path: path, errno: errno) }
        return path
    }

    /// A path in ``root`` where no file is yet: `<UUID>-name` (`name` keeps its extension last).
    package static func file(_ name: String) throws(Failure) -> String {
        try root + "/" + UUID().uuidString + "-" + name
    }

    /// Makes a new root `swift-trust-tests-<UUID>` in `parent`, mode 0700 whatever the umask.
    package static func makeRoot(in parent: String) throws(Failure) -> String {
        let path = (parent.hasSuffix("/") ? parent : parent + "/") + "swift-trust-tests-" + UUID().uuidString
        guard mkdir(path, 0o700) == 0 else { throw .cannotMake(path: path, errno: errno) }
        // mkdir's mode is filtered by the umask; set it exactly.
        guard chmod(path, 0o700) == 0 else { throw .cannotMake(path: path, errno: errno) }
        return path
    }

    /// Removes `root` and everything in it — also what a test left unwritable (a folder made 0500 or 0000),
    /// without following any symbolic link out of it.
    package static func remove(_ root: String) throws(Failure) {
        do {
            try FileManager.default.removeItem(atPath: root)
        } catch {
            makeWritable(root)
            do {
                try FileManager.default.removeItem(atPath: root)
            } catch {
                throw .cannotRemove(path: root, reason: "\(error)")
            }
        }
    }

    /// Gives every folder under `path` (not through symbolic links) owner rwx, so that its entries can be removed.
    private static func makeWritable(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return }
        _ = chmod(path, (status.st_mode & 0o7777) | 0o700)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            makeWritable(path + "/" + name)
        }
    }
}

/// The process's root (or why it could not be made): a global, so made once, on first use, by whichever thread
/// asks first, the others waiting for it. Its removal is registered with `atexit` once it exists.
private let processRoot: Result<String, TestScratch.Failure> = {
    let made = Result { () throws(TestScratch.Failure) in try TestScratch.makeRoot(in: NSTemporaryDirectory()) }
    if case .success = made {
        atexit {
            if case .success(let root) = processRoot { try? TestScratch.remove(root) }
        }
    }
    return made
}()
