import Foundation

/// Redirect rules: 301/302/303/307/308 with a Location; 303 (and 301/302 after a POST) becomes a
/// GET without a body; credentials and cookies are never carried to another origin.
enum Redirects {
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Headers dropped when a redirect leaves the origin.
    static let originBound: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    static func next(after response: StreamingResponse, for request: Request) -> Request? {
        guard statuses.contains(response.statusCode), let location = response.value(forHeader: "location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var next = request
        next.url = target
        let method = request.method.uppercased()
        if response.statusCode == 303 && method != "HEAD" || (response.statusCode == 301 || response.statusCode == 302) && method == "POST" {
            next.method = "GET"
            next.body = nil
            next.removeHeaders(named: ["content-length", "content-type"])
        }
        if Origin(target) != Origin(request.url) {
            next.removeHeaders(named: originBound)
        }
        return next
    }
}
