import StudioCore
import StudioConfig
import StudioServer
import StudioCLI
import Control
#if canImport(Glibc)
import Glibc
#endif

// The server's options from the `studio serve` flags (StudioCLI's `ServeFlags`): here, beside the server,
// because `ServerOptions` is StudioServer's and `studio` itself does not link it.

extension ServeSettings {
    /// The server's options: paths resolved, `${NAME}` in output URLs replaced from `environment`
    /// (`StreamKeys`), test-pattern cameras counted. Test-pattern cameras (`--demo`, `--cameras N`)
    /// stand in for the real ones: the real backends are looked at only when `--backends` asks for
    /// them too.
    public func serverOptions(environment: [String: String]) throws -> ServerOptions {
        var configuration = configuration
        // Every output is a thread, a queue and a connection, and they all drain at once when the server
        // stops: a stated limit keeps that within the stop's budget.
        guard configuration.outputs.count <= StudioConfiguration.maxOutputs else {
            throw ClientFailure("\(configuration.outputs.count) outputs is more than the \(StudioConfiguration.maxOutputs) a server pushes to (--rtmp, outputs:)", exitCode: 2)
        }
        for index in configuration.outputs.indices {
            configuration.outputs[index].url = try StreamKeys.expand(configuration.outputs[index].url, environment: environment)
        }
        let socket = ControlSocketPath.resolve(flag: socketFlag, configured: configuration.socketPath, environment: environment, uid: getuid())
        let database = DatabasePath.resolve(flag: databaseFlag, configured: configuration.databasePath, environment: environment)
        var options = ServerOptions(configuration: configuration, databasePath: database, socketPath: socket)
        if demo { options.testCameraCount = configuration.cameras.demoCount }
        if let cameraCount { options.testCameraCount = cameraCount }
        if options.testCameraCount > 0 { options.configuration.cameras.backends = [] }
        if let backends { options.configuration.cameras.backends = backends }
        options.testCameraSize = cameraSize.map { ($0.width, $0.height) }
        options.testCameraNoise = cameraNoise ?? 0
        options.injectEncoderFaultAfterFrames = injectEncoderFaultAfterFrames
        options.injectClockOffsetMilliseconds = injectClockOffsetMilliseconds ?? 0
        return options
    }
}

extension ServeFlags {
    /// What `studio serve` runs with: `settings(arguments)`'s options, with the config file's path and
    /// how to read it again the same way (the file, then the same flags on top) for `studio reload` and SIGHUP.
    public static func serverOptions(_ arguments: ParsedArguments, environment: [String: String]) throws -> ServerOptions {
        var options = try settings(arguments).serverOptions(environment: environment)
        guard let path = try arguments.parse("config", .path) else { return options }
        options.configPath = path
        options.rereadConfiguration = { try settings(arguments).serverOptions(environment: environment).configuration }
        return options
    }
}
