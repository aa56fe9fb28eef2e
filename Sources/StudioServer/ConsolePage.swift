import Foundation
import HTTPConsole

/// A file of the console page, as `embed-web` carries it into the binary (see Plugins/EmbedWebConsole).
struct EmbeddedWebFile {
    let name: String
    let base64: String
}

/// The operator's console page: the files of web/ (plain HTML, CSS and JavaScript, no build step),
/// embedded at build time and served from the binary: `index.html` at `/`, every other file at `/NAME`.
/// The page uses only the HTTP API (docs/http-api.md).
enum ConsolePage {
    /// Content types by file name ending; a file with another ending is a build mistake.
    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "png": "image/png", "svg": "image/svg+xml",
    ]

    /// Each file's route and answer, in the order of web/'s names.
    /// The tally page is served at `/tally/{camera}` only (`TallyPage`).
    static let files: [(route: HTTPRoute, response: HTTPResponse)] = embeddedWebFiles.filter { $0.name != TallyPage.fileName }.map { file in
        let ending = String(file.name.split(separator: ".").last ?? "")
        guard let type = contentTypes[ending], let bytes = Data(base64Encoded: file.base64) else {
            preconditionFailure("web/\(file.name): no content type for .\(ending) (see ConsolePage.contentTypes)")
        }
        let path = file.name == "index.html" ? "/" : "/" + file.name
        // Revalidated on every load (small files; a new build's page is seen at once).
        // The page needs the token (`/?token=`); its script and style are fetched without it.
        return (HTTPRoute(.get, path, name: "console_page", needsToken: file.name == "index.html"),
                HTTPResponse(status: 200, contentType: type, body: Array(bytes), headers: [("Cache-Control", "no-cache")]))
    }

    static var routes: [HTTPRoute] { files.map(\.route) }

    /// The file a route serves; nil for another route.
    static func answer(_ call: HTTPCall) -> HTTPResponse? {
        files.first { $0.route == call.route }?.response
    }
}
