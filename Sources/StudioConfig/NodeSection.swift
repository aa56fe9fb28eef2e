import StudioCore

/// `node:`: this server is a capture node (`NodeSettings`), a mapping of `name` (the node's, as the
/// switcher lists it), `send` (the switcher's SRT listener, `srt://HOST:PORT`), `passphrase`
/// (optional) and `video` (each camera's `bitrate` and `size` on the network; default 2500k, the
/// camera's own size), `tally_from` (the switcher's HTTP API, `http://HOST:PORT`, whose tally the
/// node's cameras show) and `token` (its HTTP token). `serve --node NAME --send URL` says the same.
/// `video.cameras` is a list of cameras sent otherwise: `{name: cam1, bitrate: 6000k, size: 1920x1080}`.
struct NodeSection: Decodable {
    var settings: NodeSettings

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, send, passphrase, video
        case tallyFrom = "tally_from", token
    }

    enum VideoKeys: String, CodingKey, CaseIterable {
        case bitRate = "bitrate", size, cameras
    }

    enum CameraKeys: String, CodingKey, CaseIterable {
        case name, bitRate = "bitrate", size
    }

    /// `video.cameras`: each a camera's name and its own bit rate or size; a name listed twice is refused.
    struct CameraList: Decodable {
        var cameras: [String: NodeSettings.CameraVideo] = [:]

        init(from decoder: any Decoder) throws {
            var items = try decoder.rewording({ "expected a list of cameras ({name: cam1, bitrate: 6000k, size: 1920x1080}), got \($0)" }) {
                try decoder.unkeyedContainer()
            }
            while !items.isAtEnd {
                let item = try items.superDecoder()
                let keys = try item.rewording({ "expected a mapping with name and bitrate or size, got \($0)" }) {
                    try item.container(keyedBy: CameraKeys.self)
                }
                guard let name = try keys.parse(.name, .name) else {
                    throw item.failure("missing: the camera's name on this node (cam1)", at: CameraKeys.name)
                }
                guard cameras[name] == nil else { throw item.failure("\(name) is listed twice", at: CameraKeys.name) }
                var video = NodeSettings.CameraVideo(bitRate: try keys.parse(.bitRate, .videoBitRate))
                if let size = try keys.parse(.size, .evenSize) { (video.width, video.height) = (size.width, size.height) }
                guard video.bitRate != nil || video.width != nil else {
                    throw item.failure("\(name): give its bitrate or size (or leave it out: it is sent as the others)", at: CameraKeys.name)
                }
                cameras[name] = video
            }
        }
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with name and send, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        // Both read before either is missing: a bad value is named first.
        let name = try keys.parse(.name, .name), send = try keys.parse(.send, .nodeSend)
        guard let name else {
            throw decoder.failure("missing: the node's name, as the switcher's network.srt.nodes lists it", at: CodingKeys.name)
        }
        guard let send else {
            throw decoder.failure("missing: the switcher's SRT listener (srt://HOST:PORT)", at: CodingKeys.send)
        }
        settings = NodeSettings(name: name, send: send, passphrase: try keys.parse(.passphrase, .srtPassphrase))
        if settings.passphrase != nil, send.lowercased().contains("passphrase=") {
            throw decoder.failure("the passphrase is given twice (here and in send's URL); give it once", at: CodingKeys.passphrase)
        }
        settings.tallyFrom = try keys.parse(.tallyFrom, .switcherHTTP)
        settings.tallyToken = try keys.parse(.token, .httpToken)
        if settings.tallyToken != nil, settings.tallyFrom == nil {
            throw decoder.failure("a token without tally_from: it is the switcher's HTTP token for tally_from; give both or neither", at: CodingKeys.token)
        }
        if keys.contains(.video) {
            let video = try keys.nestedContainer(keyedBy: VideoKeys.self, forKey: .video)
            try video.update(&settings.bitRate, .bitRate, .videoBitRate)
            if let size = try video.parse(.size, .evenSize) { (settings.width, settings.height) = (size.width, size.height) }
            settings.cameras = try video.decodeIfPresent(CameraList.self, forKey: .cameras)?.cameras ?? [:]
        }
    }
}

extension NodeSettings: Encodable {
    /// For the snapshot: the passphrase never reaches the database.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: NodeSection.CodingKeys.self)
        try keys.encode(name, forKey: .name)
        try keys.encode(SecretMasking.maskURL(send), forKey: .send)
        if passphrase != nil { try keys.encode("****", forKey: .passphrase) }
        if let tallyFrom { try keys.encode("http://\(tallyFrom)", forKey: .tallyFrom) }
        if tallyToken != nil { try keys.encode("****", forKey: .token) }
        var video = keys.nestedContainer(keyedBy: NodeSection.VideoKeys.self, forKey: .video)
        try video.encode(BitRate.describe(bitRate), forKey: .bitRate)
        if let width, let height { try video.encode("\(width)x\(height)", forKey: .size) }
        guard !cameras.isEmpty else { return }
        var list = video.nestedUnkeyedContainer(forKey: .cameras)
        for (name, own) in cameras.sorted(by: { $0.key < $1.key }) {
            var camera = list.nestedContainer(keyedBy: NodeSection.CameraKeys.self)
            try camera.encode(name, forKey: .name)
            if let bitRate = own.bitRate { try camera.encode(BitRate.describe(bitRate), forKey: .bitRate) }
            if let width = own.width, let height = own.height { try camera.encode("\(width)x\(height)", forKey: .size) }
        }
    }
}

extension ValueSyntax where Value == String {
    /// Where a capture node sends its cameras: the switcher's SRT listener (`NodeSettings.problem`).
    public static var nodeSend: Self { checked("a string") { NodeSettings.problem(withSend: $0) } }
}

extension ValueSyntax where Value == ListenAddress {
    /// The switcher's HTTP API a node takes its tally from: `http://HOST:PORT` (`NodeSettings.tallyAddress`).
    public static var switcherHTTP: Self {
        Self("a URL") { (url: String) throws(ValueError) -> ListenAddress in
            switch NodeSettings.tallyAddress(url) {
            case .success(let address): return address
            case .failure(let error): throw ValueError(error.description)
            }
        }
    }
}
