import Testing

@testable import trust

/// The netrc parser itself (`Netrc`), on bytes as files hold them: line ends split by byte (LF, CR LF), CR and the
/// other ASCII spaces as token separators, as curl's parser.
@Suite("Netrc parser")
struct NetrcParserTests {
    /// A CRLF file with two machines: each keeps its own login and password. Splitting the text at the Swift
    /// `Character` "\n" never split "\r\n" (one `Character`), and the whole file was one line: one entry, machine
    /// a.example's, holding b.example's login and password ("q\r\n").
    @Test func crlfFileWithTwoMachines() throws {
        let text = "machine a.example login u password p\r\nmachine b.example login v password q\r\n"
        let expected = [Netrc.Entry(machine: "a.example", login: "u", password: "p"), Netrc.Entry(machine: "b.example", login: "v", password: "q")]
        #expect(try Netrc(parsing: text).entries == expected)
        #expect(try Netrc(parsing: Array(text.utf8)).entries == expected)
        let netrc = try Netrc(parsing: text)
        #expect(netrc.credential(forHost: "a.example")?.login == "u" && netrc.credential(forHost: "a.example")?.password == "p")
        #expect(netrc.credential(forHost: "b.example")?.login == "v" && netrc.credential(forHost: "b.example")?.password == "q")
        // Mixed line ends, a CR alone between tokens, a CRLF file with a macro ended by an empty CRLF line.
        let mixed = "machine a.example\r\n  login u\rpassword p\nmachine b.example login v password q"
        #expect(try Netrc(parsing: mixed).entries == expected)
        let macro = "macdef init\r\nmachine a.example login no password no\r\n\r\nmachine a.example login u password p\r\n"
        #expect(try Netrc(parsing: macro).entries == [Netrc.Entry(machine: "a.example", login: "u", password: "p")])
    }

    /// A login or password holding a colon stays whole (the credential is never joined into USER:PASSWORD).
    @Test func colonsStayInTheirToken() throws {
        let netrc = try Netrc(parsing: "machine a.example login a:b password c:d\n")
        #expect(netrc.credential(forHost: "a.example")?.login == "a:b")
        #expect(netrc.credential(forHost: "a.example")?.password == "c:d")
    }
}
