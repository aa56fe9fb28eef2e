import Testing
import StudioCore

@Suite struct MediaTimeTests {
    @Test func frameTimesComeFromTheCountWithoutDrift() {
        let ntsc = Rational(30000, 1001)
        // Ten hours of 29.97 fps: the millisecond timestamp is still exact to within rounding.
        let frames: Int64 = 10 * 3600 * 30000 / 1001
        let t = MediaTime(count: frames, rate: ntsc)
        let exact = Double(frames) * 1001.0 / 30000.0
        #expect(abs(t.seconds - exact) < 1e-6)
        #expect(MediaTime(count: 3, rate: Rational(30)).milliseconds == 100)
        #expect(MediaTime(count: 1024, rate: Rational(48000)).microseconds == 21333)
    }

    @Test func parsesProgramFormats() throws {
        #expect(ProgramFormat(parsing: "1280x720@30") == ProgramFormat(width: 1280, height: 720, frameRate: Rational(30)))
        #expect(ProgramFormat(parsing: "1920x1080@29.97")?.frameRate == Rational(30000, 1001))
        #expect(ProgramFormat(parsing: "640x360@30000/1001")?.frameRate == Rational(30000, 1001))
        for bad in ["", "1280x720", "1280@30", "1281x720@30", "0x0@30", "1280x720@0", "axb@c", "1280x720@-5"] {
            #expect(ProgramFormat(parsing: bad) == nil, "\(bad) should be rejected")
        }
    }

    @Test func cameraNamesSortNumerically() {
        let sorted = [CameraID("cam10"), "cam2", "cam1"].sorted()
        #expect(sorted.map(\.name) == ["cam1", "cam2", "cam10"])
    }

    @Test func streamKeysAreMasked() {
        #expect(SecretMasking.maskURL("rtmp://a.rtmp.youtube.com/live2/abcd-efgh-1234") == "rtmp://a.rtmp.youtube.com/live2/****")
        #expect(SecretMasking.maskURL("rtmp://user:pw@host:1935/app/key?token=x") == "rtmp://****@host:1935/app/****?****")
        #expect(!SecretMasking.maskURL("rtmp://127.0.0.1:1935/live/secretkey").contains("secretkey"))
    }
}
