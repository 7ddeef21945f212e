/// File paths as text, joined and split as POSIX writes them (`/` separates components, POSIX.1-2017
/// §3.271): what `NSString`'s path methods did (`appendingPathComponent`, `deletingLastPathComponent`,
/// `lastPathComponent`, `pathExtension`), which are in full Foundation only, not in FoundationEssentials.
/// Named apart from them, so that a file importing Foundation as well reads without ambiguity.
extension String {
    /// `component` under this folder: `"a"` and `"b"` give `"a/b"`, `"a/"` and `"b"` give `"a/b"`, and an
    /// empty folder gives `component`.
    package func joiningPath(_ component: String) -> String {
        if isEmpty { return component }
        if hasSuffix("/") { return self + component }
        return self + "/" + component
    }

    /// The folder part: everything before the last component, without trailing slashes (`"/a/b.json"`
    /// gives `"/a"`, `"/b.json"` gives `"/"`, `"b.json"` gives `""`).
    package var parentPath: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        if slash == path.startIndex { return "/" }
        var folder = path[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder = folder.dropLast() }
        return String(folder)
    }

    /// The last component: `"/a/b.json"` gives `"b.json"`.
    package var pathName: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), path.count > 1 else { return String(path) }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// The extension of the last component, without its dot (`"a/b.pem"` gives `"pem"`); empty when it has
    /// none, or when its only dot starts it (`".pem"`, a hidden file).
    package var pathFileExtension: String {
        let name = pathName
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return "" }
        return String(name[name.utf8.index(after: dot)...])
    }
}
