import ArgumentParser
import TrustHTTP

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How `trust get` obtains the secrets that are not on its command line — curl's password prompt,
/// netrc, OpenSSL's `-passin` forms for `--pass` — once the arguments are parsed and scrubbed,
/// before any network activity. Each ends up where a command-line secret would be (`-u`'s
/// `USER:PASSWORD`, `--pass`'s value; a netrc entry as a ``Credential`` of its own), and so is never printed
/// and never sent to another origin.
extension GetCommand {
    /// Blanks the secrets of the process's argument list, then reads the secrets kept elsewhere.
    mutating func prepareCredentials() throws {
        argumentScrubber.scrubProcessArguments()
        let diagnostics = Diagnostics(showsErrors: !silent || showError)
        if let certPassword {
            do {
                clientCertificateOptions.certPassword = try PasswordSource(certPassword).read()
            } catch {
                // Consistent with a wrong passphrase or an unreadable --cert: a local client-certificate problem (curl's 58).
                diagnostics.error("client certificate: \(error)")
                throw ExitCode(58)
            }
        }
        // curl: `-u USER` / `-U USER` without a colon prompts for the password.
        if let user, !user.containsASCII(UInt8(ascii: ":")) {
            authenticationOptions.user = user + ":" + PasswordPrompt.ask(kind: "host", user: user)
        }
        if let proxyUser, !proxyUser.containsASCII(UInt8(ascii: ":")) {
            authenticationOptions.proxyUser = proxyUser + ":" + PasswordPrompt.ask(kind: "proxy", user: proxyUser)
        }
        if user == nil, let entry = try netrcCredential(diagnostics: diagnostics) {
            // Kept as a login and a password, never joined into `-u`'s USER:PASSWORD, which splits at the first
            // colon: a netrc login may hold one (`login a:b password c` is user "a:b", never user "a").
            netrcEntry = Credential(user: entry.login, password: entry.password, persistence: .none)
        }
    }

    /// The credential for the URL's origin: `-u` (its password prompted for or not), else the netrc entry.
    var credential: Credential? {
        user.flatMap(Self.credential(fromUserArgument:)) ?? netrcEntry
    }

    /// The netrc entry for the URL's host, with `--netrc`, `--netrc-optional` or `--netrc-file` (curl's
    /// rules): `-u` wins over it; with `--netrc-optional` a password in the URL wins too, with `--netrc`
    /// the entry does; a user name in the URL picks the entry with that login. A missing file is no
    /// error (curl 7.88 goes on without it); one other users can read or write is used with a warning.
    func netrcCredential(diagnostics: Diagnostics) throws -> (login: String, password: String)? {
        guard authenticationOptions.netrc || authenticationOptions.netrcOptional || authenticationOptions.netrcFile != nil,
            let path = authenticationOptions.netrcFile ?? Netrc.defaultPath(),
            let components = URLComponents(string: url), let host = components.host, !host.isEmpty
        else { return nil }
        // Decoded once (`user` is already decoded: decoding it again made `a%2540b` the user `a@b`).
        let urlUser = components.percentEncodedUser.flatMap { $0.isEmpty ? nil : ($0.percentDecoded ?? $0) }
        if authenticationOptions.netrcOptional && components.password != nil { return nil }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        do {
            guard let netrc = try Netrc.load(path) else {
                if verbose { diagnostics.verbose("* netrc: no file \(path)") }
                return nil
            }
            if let exposure = Netrc.exposure(of: path) { diagnostics.warning("\(path) \(exposure)") }
            return try netrc.credential(forHost: bareHost, login: urlUser)
        } catch {
            // curl: ".netrc parser error", CURLE_READ_ERROR.
            diagnostics.error("(26) .netrc parser error: \(path): \(error)")
            throw ExitCode(26)
        }
    }
}
