import StudioConfig
import StudioSystem
import Control
import HTTPConsole
import LivePictures

extension StudioServer {
    /// The HTTP console on `http.listen` with its token (see `HTTPToken`), stopped before control.
    /// It serves the commands' routes (`HTTPBridge`), the tiles' pictures (`TileRoutes`), the page
    /// (`ConsolePage`), the RTMP server's callbacks (`IngestDesk`), the wall clock nodes measure (`ClockRoute`) and the recording files (`RecordingFileRoutes`).
    static func startHTTP(options: ServerOptions, router: ControlRouter<StudioServer>, events: HTTPEventStream,
                                  tiles: TilePictures, tileRequests: TileRequestCounts, ingest: IngestDesk, files: RecordingFileRoutes, services: ServiceGroup,
                                  log: ServerLog) throws -> HTTPConsole? {
        let settings = options.configuration.http
        guard settings.enabled else { return nil }
        let token = try HTTPToken.resolve(settings, databasePath: options.databasePath)
        var consoleSettings = HTTPConsoleSettings(listen: settings.listen, token: token)
        if let tls = settings.tls {
            // Read now, at start (the config's check read them too; they may have changed since).
            let files: (certificate: [UInt8], key: [UInt8])
            do { files = try tls.read() } catch { throw ServerError("cannot serve the HTTP API over TLS: \(error)") }
            if let exposure = tls.keyExposure { log.info("warning: \(exposure)") }
            consoleSettings.tls = HTTPTLSCredentials(certificatePEM: files.certificate, keyPEM: files.key,
                                                     certificateName: tls.certificate, keyName: tls.key)
        }
        let commands = HTTPBridge.handler(router, commands: ServerCommands.all)
        let console = HTTPConsole(settings: consoleSettings,
                                  routes: HTTPBridge.routes(ServerCommands.all) + TileRoutes.all + TimelineRoute.all + ConsolePage.routes + TallyPage.all + IngestDesk.all + ClockRoute.all + RecordingFileRoutes.all, events: events,
                                  handler: { call, respond in
                                      if let answer = TileRoutes.answer(call, tiles: tiles, counts: tileRequests) ?? ConsolePage.answer(call) ?? ingest.answer(call)
                                          ?? ClockRoute.answer(call) ?? files.answer(call) { return respond(answer) }
                                      if TimelineRoute.answer(call, router: router, respond: respond) { return }
                                      if TallyPage.answer(call, router: router, respond: respond) { return }
                                      commands(call, respond)
                                  })
        try services.start("http", {
            do { try console.start() } catch let error as HTTPConsoleError where error.concernsTLS {
                throw ServerError("cannot serve the HTTP API over TLS: \(error) (http.tls_cert and http.tls_key in the config; or --no-http)")
            } catch {
                throw ServerError("cannot serve the HTTP API: \(error) (choose another with --http ADDR:PORT, or --no-http)")
            }
        }, stop: { console.stop() })
        let access = token == nil ? "no token (loopback)" : settings.token != nil ? "token from http.token"
            : "token in \(HTTPToken.path(databasePath: options.databasePath))"
        let tlsNote = settings.tls.map { "; TLS with \($0.certificate)" } ?? ""
        log.info("HTTP API on \(StartSummary.consoleURL(settings, port: console.port))api/v1/ (\(access)\(tlsNote))")
        return console
    }
}
