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
        #expect(SecretMasking.maskURL("rtmp://host/app/KEY/") == "rtmp://host/app/****/")
        #expect(SecretMasking.maskURL("rtmp://host/KEY") == "rtmp://host/****")
        #expect(SecretMasking.maskURL("rtmp://host") == "rtmp://host")
    }
}

@Suite struct RateLimitsTests {
    @Test func absurdRatesAreRefusedNotTrapped() {
        for bad in ["3000000000", "3e9", "2147483.648", "2000000000/66666667", "30/0", "0/1", "1001/1", "5000"] {
            #expect(Rational(parsingRate: bad) == nil, "\(bad)")
            #expect(ProgramFormat(parsing: "1280x720@\(bad)") == nil, "\(bad)")
        }
        #expect(Rational(parsingRate: "60000/2002") == Rational(30000, 1001))
    }

    @Test func timestampsDoNotOverflowOnLongShows() {
        // A month at 1000 fps with a large denominator: far beyond 64-bit intermediate products.
        let rate = Rational(1_000_000, 999_999)
        let count: Int64 = 30 * 24 * 3600 * 1000
        let t = MediaTime(count: count, rate: rate)
        let exact = Double(count) * 999_999 / 1_000_000
        #expect(abs(t.seconds - exact) < 1e-5)
    }
}
