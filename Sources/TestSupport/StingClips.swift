import Foundation

/// Stinger clips made with the ffmpeg CLI: every picture grey, its luma telling its number
/// (`40 + 7 * (N mod 25)`), its left half opaque and its right half transparent, in the format the
/// encoder `arguments` name (`-pix_fmt argb -c:v qtrle`, ProRes 4444, VP9 with alpha...). With `flash`,
/// that picture is opaque white all over; with `beep`, the clip has a stereo 48 kHz sound (PCM, for MOV)
/// that is silence but for a 1 kHz tone at half scale, `beepSeconds` long, from picture `beep`'s time.
public enum StingClips {
    /// A file name and the encoder arguments for each kind of clip with alpha studio reads.
    public static let formats: [(file: String, arguments: [String])] = [
        ("qtrle.mov", ["-pix_fmt", "argb", "-c:v", "qtrle"]),
        ("png.mov", ["-pix_fmt", "rgba", "-c:v", "png"]),
        ("prores4444.mov", ["-c:v", "prores_ks", "-profile:v", "4444", "-pix_fmt", "yuva444p10le"]),
        ("vp9alpha.webm", ["-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", "-b:v", "2M"]),
    ]

    /// The luma of picture `number`.
    public static func luma(_ number: Int) -> Int { 40 + 7 * (number % 25) }

    public static func make(_ path: String, _ arguments: [String], fps: Int = 25, seconds: Double = 1, size: String = "320x180",
                            flash: Int? = nil, beep: Int? = nil, beepSeconds: Double = 0.1) throws {
        let white = flash.map { "if(eq(N\\,\($0))\\,235\\," } ?? "", opaque = flash.map { "if(eq(N\\,\($0))\\,255\\," } ?? ""
        let close = flash == nil ? "" : ")"
        let source = "color=c=black:s=\(size):r=\(fps):d=\(seconds),format=yuva444p,"
            + "geq=lum='\(white)40+7*mod(N\\,25)\(close)':cb=128:cr=128:a='\(opaque)if(lt(X\\,W/2)\\,255\\,0)\(close)'"
        var inputs = ["-f", "lavfi", "-i", source]
        if let beep {
            let from = Double(beep) / Double(fps), to = from + beepSeconds
            let tone = "if(between(t\\,\(from)\\,\(to))\\,0.5*sin(2*PI*1000*(t-\(from)))\\,0)"
            inputs += ["-f", "lavfi", "-i", "aevalsrc='\(tone)|\(tone)':s=48000:d=\(seconds)", "-c:a", "pcm_s16le"]
        }
        let process = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: ["-v", "error"] + inputs + arguments + ["-y", path])
        guard process.wait(timeout: 60) == .exited(0) else { throw NumberedClipError("ffmpeg could not make \(path): \(process.errorText())") }
    }
}
