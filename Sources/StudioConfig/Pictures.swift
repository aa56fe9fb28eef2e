import StudioCore

// A camera pin's `picture:` — the switcher's picture settings for that camera, applied when it appears
// (`studio picture` changes them live, without writing the file):
//
//     cameras:
//       pins:
//         - match: C920
//           name: cam1
//           picture:
//             crop: [0.1, 0, 0.8, 1]   # x, y, width, height: fractions of the camera's picture
//             mirror: true
//             flip: false
//             rotate: 0                # 0, 90, 180, 270
//             brightness: 0.05         # -1 to 1
//             contrast: 1.1            # 0 to 4
//             saturation: 1            # 0 to 4
//             gamma: 1                 # 0.1 to 10
//             beauty: 40               # 0 to 100

/// A pin's `picture:` mapping; its keys are `PictureSettings.Key`'s, a bad value is refused at its line
/// with `PictureSettings.problem`'s words.
/// (The snapshot writes the settings as `PictureSettings` encodes them: every key, the same names.)
struct PictureEntry: Decodable {
    var settings: PictureSettings

    init(from decoder: any Decoder) throws {
        typealias Key = PictureSettings.Key
        let keys = try decoder.rewording({ "expected a mapping of picture settings (\(Key.allCases.map(\.rawValue).joined(separator: ", "))), got \($0)" }) {
            try decoder.container(keyedBy: Key.self)
        }
        settings = PictureSettings()
        if keys.contains(.crop) {
            if try keys.decodeNil(forKey: .crop) || (try? keys.parse(.crop, .text())) == "none" {
                settings.crop = nil
            } else if let crop = try keys.parseList(.crop, .number) {
                guard crop.count == 4 else { throw decoder.failure("expected [x, y, width, height] in fractions of the picture", at: Key.crop) }
                settings.crop = RelativeRect(x: crop[0], y: crop[1], width: crop[2], height: crop[3])
            }
        }
        try keys.update(&settings.mirror, .mirror, .boolean)
        try keys.update(&settings.flip, .flip, .boolean)
        try keys.update(&settings.rotation, .rotate, .wholeNumber)
        try keys.update(&settings.brightness, .brightness, .number)
        try keys.update(&settings.contrast, .contrast, .number)
        try keys.update(&settings.saturation, .saturation, .number)
        try keys.update(&settings.gamma, .gamma, .number)
        try keys.update(&settings.beauty, .beauty, .wholeNumber)
        for key in Key.allCases {
            if let problem = settings.problem(key) { throw decoder.failure(problem, at: key) }
        }
    }
}

extension ValueSyntax where Value == Int {
    /// A whole number (`90`, `-3`; `90.0` too).
    public static var wholeNumber: Self {
        Self("a whole number") { (text: String) throws(ValueError) -> Int in
            if let value = Int(text) { return value }
            guard let value = Double(text), value == value.rounded(), abs(value) < 1e9 else {
                throw ValueError("expected a whole number, got \(quoted(text))")
            }
            return Int(value)
        }
    }
}

extension ValueSyntax where Value == RelativeRect? {
    /// A crop as `studio picture --crop` takes it: `X,Y,W,H` in fractions of the picture, or `none`.
    public static var crop: Self {
        Self("a crop") { (text: String) throws(ValueError) -> RelativeRect? in
            if text.lowercased() == "none" { return nil }
            let numbers = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard numbers.count == 4, let x = numbers[0], let y = numbers[1], let w = numbers[2], let h = numbers[3] else {
                throw ValueError("expected X,Y,W,H in fractions of the picture (e.g. 0.1,0,0.8,1) or none, got \(quoted(text))")
            }
            return RelativeRect(x: x, y: y, width: w, height: h)
        }
    }
}
