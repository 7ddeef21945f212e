import NIOConcurrencyHelpers
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

/// User-and-password credentials by protection space (host, port, scheme, realm, method, proxy or
/// not): URLSession's `URLCredentialStorage`.
///
/// - `.none` credentials are never stored; `.forSession` ones live as long as the store;
///   `.permanent` ones are also written to ``fileURL``.
/// - The file (default `$XDG_CONFIG_HOME/swift-trust/credentials.json`, else
///   `~/.config/swift-trust/credentials.json`) is created with mode 0600 in a 0700 folder and
///   replaced atomically (write to a temporary file, then rename). A file readable by others is
///   refused on load. Passwords are stored as given (like `.netrc`): protect the account.
/// - Stores in several processes (or several stores on one file) share it: each change is made to the file as it
///   is when the change is saved — read again and written under an exclusive `flock(2)` on its folder — so a save
///   never drops what another store wrote since this one read the file. Each change also brings the file's other
///   credentials into this store.
///   Format: `{"version": 1, "credentials": [{"host": "api.example.com", "port": 443,
///   "scheme": "https", "realm": "api", "method": "httpDigest", "proxy": false, "user": "alice",
///   "password": "…", "default": true}]}`.
/// - Descriptions and errors never contain a password.
public final class CredentialStore: Sendable, CustomStringConvertible {
    /// Where permanent credentials go; nil keeps them in memory only.
    public let fileURL: URL?
    private let state = NIOLockedValueBox(State())
    /// Held from the file's reading to the rename, so concurrent saves of this store land in order (the folder's
    /// `flock` orders them with other stores').
    private let saving = NIOLock()

    /// One change to the permanent credentials, made to the file as it is when saved.
    enum Change {
        case set(Key, Stored, asDefault: Bool)
        case remove(Key, user: String)
        case removeAll
    }

    struct Key: Hashable, Codable {
        var host: String
        var port: Int
        var scheme: String
        var realm: String?
        var method: String
        var proxy: Bool

        init(host: String, port: Int, scheme: String, realm: String?, method: String, proxy: Bool) {
            self.host = host
            self.port = port
            self.scheme = scheme
            self.realm = realm
            self.method = method
            self.proxy = proxy
        }

        init(_ space: ProtectionSpace) {
            host = space.host.lowercased()
            port = space.port
            scheme = space.scheme.lowercased()
            realm = space.realm
            method = space.authenticationMethod.rawValue
            proxy = space.isProxy
        }

        var space: ProtectionSpace? {
            guard let method = AuthenticationMethod(rawValue: method) else { return nil }
            return ProtectionSpace(host: host, port: port, scheme: scheme, realm: realm, authenticationMethod: method, isProxy: proxy)
        }
    }

    struct Stored: Equatable {
        var user: String
        var password: String
        var persistence: CredentialPersistence
    }

    struct State {
        var credentials: [Key: [Stored]] = [:]
        var defaults: [Key: String] = [:]
    }

    /// A store in memory only (permanent credentials are kept as long as the store).
    public init() {
        self.fileURL = nil
    }

    /// A store whose permanent credentials are written to `fileURL` (and those already there loaded).
    public init(fileURL: URL) throws(CredentialStoreError) {
        self.fileURL = fileURL
        try load(fileURL)
    }

    /// A store backed by the default file under the user's configuration folder.
    public static func persistent() throws(CredentialStoreError) -> CredentialStore {
        guard let url = defaultFileURL else { throw .cannotWrite("~/.config/swift-trust/credentials.json", "no home folder") }
        return try CredentialStore(fileURL: url)
    }

    /// `$XDG_CONFIG_HOME/swift-trust/credentials.json`, else `~/.config/swift-trust/credentials.json`.
    public static var defaultFileURL: URL? {
        let environment = ProcessInfo.processInfo.environment
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent("swift-trust/credentials.json")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".config/swift-trust/credentials.json")
    }

    // MARK: - Reading

    /// Every credential stored for `space`, by user.
    public func credentials(for space: ProtectionSpace) -> [String: Credential] {
        let key = Key(space)
        return state.withLockedValue { state in
            var result: [String: Credential] = [:]
            for stored in state.credentials[key] ?? [] {
                result[stored.user] = Credential(user: stored.user, password: stored.password, persistence: stored.persistence)
            }
            return result
        }
    }

    /// The default credential for `space`: the one marked default, else the only one.
    public func defaultCredential(for space: ProtectionSpace) -> Credential? {
        let key = Key(space)
        return state.withLockedValue { state in
            let stored = state.credentials[key] ?? []
            let chosen = state.defaults[key].flatMap { user in stored.first { $0.user == user } } ?? (stored.count == 1 ? stored.first : nil)
            return chosen.map { Credential(user: $0.user, password: $0.password, persistence: $0.persistence) }
        }
    }

    /// The protection spaces that have credentials.
    public var protectionSpaces: [ProtectionSpace] {
        state.withLockedValue { Array($0.credentials.keys) }.compactMap(\.space)
    }

    // MARK: - Changing

    /// Stores a user credential for `space` (a `.none` credential is not stored).
    public func set(_ credential: Credential, for space: ProtectionSpace, asDefault: Bool = true) throws(CredentialStoreError) {
        guard case .user(let user, let password) = credential.kind else { throw .notAUserCredential }
        guard credential.persistence != .none else { return }
        let key = Key(space)
        let changedPermanent = state.withLockedValue { state -> Bool in
            var list = state.credentials[key] ?? []
            let stored = Stored(user: user, password: password, persistence: credential.persistence)
            // Unchanged (a credential that worked again): nothing to write — this runs after every
            // authenticated request, and saving rewrites and syncs the whole file.
            if list.contains(stored) && (!asDefault || state.defaults[key] == user) { return false }
            list.removeAll { $0.user == user }
            list.append(stored)
            state.credentials[key] = list
            if asDefault { state.defaults[key] = user }
            return credential.persistence == .permanent
        }
        if changedPermanent { try save(.set(key, Stored(user: user, password: password, persistence: .permanent), asDefault: asDefault)) }
    }

    /// Removes `user`'s credential for `space`.
    public func remove(user: String, for space: ProtectionSpace) throws(CredentialStoreError) {
        let key = Key(space)
        let wasPermanent = state.withLockedValue { state -> Bool in
            let removed = state.credentials[key]?.contains { $0.user == user && $0.persistence == .permanent } ?? false
            state.credentials[key]?.removeAll { $0.user == user }
            if state.credentials[key]?.isEmpty == true { state.credentials[key] = nil }
            if state.defaults[key] == user { state.defaults[key] = nil }
            return removed
        }
        // Saved also when this store did not hold it: another store may have written it to the file.
        if wasPermanent || fileURL != nil { try save(.remove(key, user: user)) }
    }

    /// Removes every credential (and empties the file).
    public func removeAll() throws(CredentialStoreError) {
        state.withLockedValue { $0 = State() }
        if fileURL != nil { try save(.removeAll) }
    }

    /// Spaces and users only — never a password.
    public var description: String {
        let entries = state.withLockedValue { state in
            state.credentials.flatMap { key, list in
                list.map { "\($0.user)@\(key.scheme)://\(key.host):\(key.port) \(key.method)" + (key.realm.map { " \"\($0)\"" } ?? "") }
            }
        }
        return "CredentialStore(\(entries.sorted().joined(separator: ", ")))"
    }

    // MARK: - The file

    struct FileEntry: Codable {
        var host: String
        var port: Int
        var scheme: String
        var realm: String?
        var method: String
        var proxy: Bool
        var user: String
        var password: String
        var `default`: Bool
    }

    struct FileContents: Codable {
        var version: Int
        var credentials: [FileEntry]
    }

    /// The largest credentials file read (a larger one is ``CredentialStoreError``): thousands of
    /// entries, where one user has a few.
    static let maximumFileBytes = 4 << 20

    private func load(_ url: URL) throws(CredentialStoreError) {
        guard let onDisk = try Self.read(url) else { return }
        state.withLockedValue { state in Self.take(onDisk, into: &state) }
    }

    /// The permanent credentials `url` holds; nil when there is no file.
    static func read(_ url: URL) throws(CredentialStoreError) -> State? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? Int) ?? (attributes[.posixPermissions] as? UInt).flatMap(Int.init(exactly:))
        else { throw .unreadable(path) }
        if mode & 0o077 != 0 { throw .insecurePermissions(path, mode) }
        // Bounded as every local input (LocalFile): a FIFO or pipe within its deadline, never a device, at most
        // maximumFileBytes.
        let data: Data
        do {
            data = Data(try LocalFile.read(path, limit: Self.maximumFileBytes))
        } catch {
            throw .unreadable(path)
        }
        let contents: FileContents
        do {
            contents = try JSONDecoder().decode(FileContents.self, from: data)
        } catch {
            throw .malformed(path, Self.describe(error))
        }
        guard contents.version == 1 else { throw .malformed(path, "unsupported version \(contents.version)") }
        var state = State()
        for entry in contents.credentials {
            guard AuthenticationMethod(rawValue: entry.method) != nil else { continue }
            let key = Key(
                host: entry.host.lowercased(), port: entry.port, scheme: entry.scheme.lowercased(), realm: entry.realm, method: entry.method,
                proxy: entry.proxy)
            state.credentials[key, default: []].removeAll { $0.user == entry.user }
            state.credentials[key, default: []].append(Stored(user: entry.user, password: entry.password, persistence: .permanent))
            if entry.default { state.defaults[key] = entry.user }
        }
        return state
    }

    /// Puts the file's permanent credentials in `state` in place of its own permanent ones; its session ones stay,
    /// and so does a default that names one of them.
    static func take(_ onDisk: State, into state: inout State) {
        for key in Set(state.credentials.keys).union(onDisk.credentials.keys) {
            let session = (state.credentials[key] ?? []).filter { $0.persistence != .permanent }
            let permanent = (onDisk.credentials[key] ?? []).filter { stored in !session.contains { $0.user == stored.user } }
            let list = permanent + session
            state.credentials[key] = list.isEmpty ? nil : list
            let keepsDefault = state.defaults[key].map { user in session.contains { $0.user == user } } ?? false
            if !keepsDefault { state.defaults[key] = onDisk.defaults[key] }
        }
    }

    /// `change` made to `state` (permanent credentials only).
    static func apply(_ change: Change, to state: inout State) {
        switch change {
        case .set(let key, let stored, let asDefault):
            state.credentials[key, default: []].removeAll { $0.user == stored.user }
            state.credentials[key, default: []].append(stored)
            if asDefault { state.defaults[key] = stored.user }
        case .remove(let key, let user):
            state.credentials[key]?.removeAll { $0.user == user }
            if state.credentials[key]?.isEmpty == true { state.credentials[key] = nil }
            if state.defaults[key] == user { state.defaults[key] = nil }
        case .removeAll:
            state = State()
        }
    }

    /// A decoding error without the offending values (which may be secrets).
    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted?: return "not valid JSON"
        case .keyNotFound(let key, _)?: return "missing \"\(key.stringValue)\""
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "not a credentials file"
        }
    }

    /// Makes `change` to the file as it is now (read again under an exclusive `flock(2)` on its folder, which every
    /// store saving to this file takes), writes it, and takes the file's credentials into this store.
    private func save(_ change: Change) throws(CredentialStoreError) {
        guard let fileURL else { return }
        saving.lock()
        defer { saving.unlock() }
        let path = fileURL.path
        let folder = fileURL.deletingLastPathComponent().path
        try Self.createFolder(folder, for: path)
        // The folder, not a lock file beside the credentials: nothing else to leave behind, and it is ours (0700).
        let lock = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw .cannotWrite(path, "cannot open \(folder): " + String(cString: strerror(errno))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .cannotWrite(path, "cannot lock \(folder): " + String(cString: strerror(errno))) }
        }
        defer { flock(lock, LOCK_UN) }
        var onDisk = try Self.read(fileURL) ?? State()
        Self.apply(change, to: &onDisk)
        let entries = onDisk.credentials.flatMap { key, list in
            list.map {
                FileEntry(
                    host: key.host, port: key.port, scheme: key.scheme, realm: key.realm, method: key.method, proxy: key.proxy,
                    user: $0.user, password: $0.password, default: onDisk.defaults[key] == $0.user)
            }
        }.sorted { ($0.host, $0.port, $0.user) < ($1.host, $1.port, $1.user) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(FileContents(version: 1, credentials: entries))
        } catch {
            throw .cannotWrite(path, "cannot encode")
        }
        try Self.writeAtomically(data, to: fileURL)
        state.withLockedValue { Self.take(onDisk, into: &$0) }
    }

    /// Creates the credentials file's folder (0700) if it is missing.
    static func createFolder(_ folder: String, for path: String) throws(CredentialStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotWrite(path, "cannot create \(folder)")
        }
    }

    /// Writes `data` to a new 0600 file beside `url`, flushes it, and renames it over `url`.
    static func writeAtomically(_ data: Data, to url: URL) throws(CredentialStoreError) {
        let path = url.path
        try createFolder(url.deletingLastPathComponent().path, for: path)
        do {
            try PrivateFile.write(data, to: path)
        } catch {
            throw .cannotWrite(path, error.reason)
        }
    }
}

/// Why the credential store could not do what was asked. Never carries a password.
public struct CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// Human-readable form.
    public var description: String { detail.description }

    /// The file at the path cannot be read.
    package static func unreadable(_ value0: String) -> Self { Self(.unreadable(value0)) }
    /// The file at the path is not a valid credentials file, for the reason given.
    package static func malformed(_ value0: String, _ value1: String) -> Self { Self(.malformed(value0, value1)) }
    /// The file is readable or writable by others (mode shown in octal).
    package static func insecurePermissions(_ value0: String, _ value1: Int) -> Self { Self(.insecurePermissions(value0, value1)) }
    /// The file at the path could not be written, for the reason given.
    package static func cannotWrite(_ value0: String, _ value1: String) -> Self { Self(.cannotWrite(value0, value1)) }
    /// Only user-and-password credentials can be stored.
    package static let notAUserCredential = Self(.notAUserCredential)
}

extension CredentialStoreError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Sendable, Hashable {
        /// The file at the path cannot be read.
        case unreadable(String)
        /// The file at the path is not a valid credentials file, for the reason given.
        case malformed(String, String)
        /// The file is readable or writable by others (mode shown in octal).
        case insecurePermissions(String, Int)
        /// The file at the path could not be written, for the reason given.
        case cannotWrite(String, String)
        /// Only user-and-password credentials can be stored.
        case notAUserCredential

        /// Human-readable form.
        package var description: String {
            switch self {
            case .unreadable(let path): return "cannot read the credentials file \(path)"
            case .malformed(let path, let reason): return "the credentials file \(path) is malformed: \(reason)"
            case .insecurePermissions(let path, let mode):
                return "the credentials file \(path) has mode \(String(mode, radix: 8)); it must not be accessible to others (chmod 600)"
            case .cannotWrite(let path, let reason): return "cannot write the credentials file \(path): \(reason)"
            case .notAUserCredential: return "only user-and-password credentials can be stored"
            }
        }
    }
}
