import Testing

@testable import trust

/// The netrc parser itself (`Netrc`), on bytes as files hold them: line ends split by byte (LF, CR LF), CR and the
/// other ASCII spaces as token separators, as curl's parser; and the credential it gives for a host, by curl 7.88's
/// rules (lib/netrc.c `parsenetrc`, lib/url.c `override_login`; its tests 130–134, 684, 685), and where this is
/// stricter than curl (`default`; a password before a login that is not the URL's).
@Suite("Netrc parser")
struct NetrcParserTests {
    /// What `text` gives for `host` (and the URL's user name `login`), as "LOGIN:PASSWORD", or nil.
    func lookup(_ text: String, _ host: String = "a.example", login: String? = nil) throws -> String? {
        try Netrc(parsing: text).credential(forHost: host, login: login).map { $0.login + ":" + $0.password }
    }

    /// A CRLF file with two machines: each keeps its own login and password. Splitting the text at the Swift
    /// `Character` "\n" never split "\r\n" (one `Character`), and the whole file was one line: one entry, machine
    /// a.example's, holding b.example's login and password ("q\r\n").
    @Test func crlfFileWithTwoMachines() throws {
        let text = "machine a.example login u password p\r\nmachine b.example login v password q\r\n"
        #expect(try lookup(text) == "u:p")
        #expect(try lookup(text, "b.example") == "v:q")
        let netrc = Netrc(parsing: Array(text.utf8))
        #expect(try netrc.credential(forHost: "a.example")?.login == "u" && netrc.credential(forHost: "a.example")?.password == "p")
        #expect(try netrc.credential(forHost: "b.example")?.login == "v" && netrc.credential(forHost: "b.example")?.password == "q")
        // Mixed line ends, a CR alone between tokens, a CRLF file with a macro ended by an empty CRLF line.
        let mixed = "machine a.example\r\n  login u\rpassword p\nmachine b.example login v password q"
        #expect(try lookup(mixed) == "u:p" && lookup(mixed, "b.example") == "v:q")
        let macro = "macdef init\r\nmachine a.example login no password no\r\n\r\nmachine a.example login u password p\r\n"
        #expect(try lookup(macro) == "u:p")
    }

    /// A login or password holding a colon stays whole (the credential is never joined into USER:PASSWORD).
    @Test func colonsStayInTheirToken() throws {
        let netrc = Netrc(parsing: "machine a.example login a:b password c:d\n")
        #expect(try netrc.credential(forHost: "a.example")?.login == "a:b")
        #expect(try netrc.credential(forHost: "a.example")?.password == "c:d")
    }

    /// An entry with a password and no login: the password with an empty user name (curl's test 684), or with the
    /// URL's user name (test 685). Before, such an entry was skipped and nothing was sent.
    @Test func entryWithoutALogin() throws {
        let text = "machine a.example password 5up3r53cr37\n"
        #expect(try lookup(text) == ":5up3r53cr37")
        #expect(try lookup(text, login: "user") == "user:5up3r53cr37")
        // Another host's login-less entry gives nothing; a default entry without a login gives its password.
        #expect(try lookup(text, "b.example") == nil)
        #expect(try lookup("machine b.example login x password y\ndefault password dflt\n") == ":dflt")
        // The password before the login in the same entry: still that entry's pair.
        #expect(try lookup("machine a.example password p login u\n") == "u:p")
        #expect(try lookup("machine a.example password p login u\n", login: "u") == "u:p")
    }

    /// An entry with a login and no password gives the login (sent with an empty password, as curl does); with
    /// the URL's user name, nothing (the request has that name without the file).
    @Test func entryWithOnlyALogin() throws {
        #expect(try lookup("machine a.example login alice\n") == "alice:")
        #expect(try lookup("machine a.example login alice\n", login: "alice") == nil)
        #expect(try lookup("machine a.example login alice\n", login: "bob") == nil)
        #expect(try lookup("machine a.example\n") == nil)
    }

    /// A URL user name that differs from the entry's login: that entry's password is not taken; a later entry for
    /// the host with that login is (curl's test 133, `override_login`); a login-less entry gives its password to
    /// that user only when it is the first entry for the host (curl's `state_our_login`).
    @Test func urlUserPicksTheEntry() throws {
        let two = "machine a.example login alice password wonderland\nmachine a.example login bob password builder\n"
        #expect(try lookup(two) == "alice:wonderland")
        #expect(try lookup(two, login: "bob") == "bob:builder")
        #expect(try lookup(two, login: "alice") == "alice:wonderland")
        #expect(try lookup(two, login: "carol") == nil)
        // Logins compare exactly (curl's Curl_timestrcmp), host names without case.
        #expect(try lookup(two, "A.EXAMPLE", login: "Bob") == nil)
        #expect(try lookup(two, "A.EXAMPLE", login: "bob") == "bob:builder")
        #expect(try lookup("machine a.example login alice password w\nmachine a.example password anyone\n", login: "bob") == nil)
        // A password before the login: held until the login shows whose it is (curl 7.88 gave daniel's password to
        // debbie; curl 8.11's test 478 expects debbie's own).
        let ordered = "machine a.example password first login daniel\nmachine a.example password second login debbie\n"
        #expect(try lookup(ordered, login: "daniel") == "daniel:first")
        #expect(try lookup(ordered, login: "debbie") == "debbie:second")
        #expect(try lookup(ordered, login: "carol") == nil)
        #expect(try lookup(ordered) == "daniel:first")
        // Without a URL user name, a later entry for the host fills what the first one lacked (curl reads on
        // until it has both).
        #expect(try lookup("machine a.example login alice\nmachine a.example password later\n") == "alice:later")
    }

    /// `default` is used only when no machine entry names the host, and ends the entry before it (stricter than
    /// curl, which takes whichever comes first and reads default's words into an unfinished entry): the default
    /// credential never reaches a host that has its own entry.
    @Test func defaultNeverSpeaksForAHostWithItsOwnEntry() throws {
        #expect(try lookup("default login d password dp\nmachine a.example login u password p\n") == "u:p")
        #expect(try lookup("machine a.example login u\ndefault login d password dp\n") == "u:")
        #expect(try lookup("machine b.example login u password p\ndefault login d password dp\n") == "d:dp")
        // The word after `machine` is the host name, whatever it is.
        #expect(try lookup("machine default login u password p\n", "default") == "u:p")
    }

    /// A token that cannot be read is an error when the walk reaches it, and no error where curl never reads it: in a
    /// macro, or after the credential is complete.
    @Test func badTokensAreErrorsWhereRead() throws {
        #expect(throws: Netrc.ParseError.self) { try lookup("machine b.example login x password \"open\n") }
        #expect(try lookup("macdef m\n\"open\n\nmachine a.example login u password p\n") == "u:p")
        #expect(try lookup("machine a.example login u password p login \"open\n") == "u:p")
    }
}
