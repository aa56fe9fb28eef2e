import Testing
import StudioCore

/// The output-kind table: which URL is which kind, what each is muxed into, what is refused and why,
/// and what is masked.
@Suite struct OutputKindTests {
    @Test func eachURLFindsItsKind() {
        #expect(OutputKind.of("rtmp://a.rtmp.youtube.com/live2/key") == .rtmp)
        #expect(OutputKind.of("RTMPS://live-api-s.facebook.com:443/rtmp/key") == .rtmps)
        #expect(OutputKind.of("srt://127.0.0.1:9000?streamid=x") == .srt)
        #expect(OutputKind.of("/var/lib/studio/program.mkv") == .file && OutputKind.of("file:/tmp/p.flv") == .file)
        #expect(OutputKind.of("http://host/live/key") == nil && OutputKind.of("udp://239.0.0.1:1234") == nil)
        #expect(OutputKind.srt.container == "mpegts" && OutputKind.rtmps.container == "flv")
        #expect(OutputKind.file.container(for: "/r/p.flv") == "flv" && OutputKind.file.container(for: "/r/p.mkv") == "matroska")
        #expect(OutputKind.networkSchemes == "rtmp://, rtmps:// or srt://")
    }

    @Test func malformedURLsAreRefusedWithTheReasonAndWithoutTheKey() {
        #expect(OutputKind.rtmp.problem(with: "rtmp://host/app/key") == nil)
        #expect(OutputKind.rtmp.problem(with: "rtmp:///app/SECRETKEY") == "expected rtmp://host/app/stream-key: the URL has no host")
        #expect(OutputKind.rtmp.problem(with: "rtmp://host-only-SECRETKEY") == "expected rtmp://host/app/stream-key (a host, then a path)")
        #expect(OutputKind.rtmp.problem(with: "rtmp://host/app/SECRET KEY")?.contains("no spaces") == true)
        #expect(OutputKind.srt.problem(with: "srt://127.0.0.1:9000?streamid=a&passphrase=b") == nil)
        #expect(OutputKind.srt.problem(with: "srt://127.0.0.1?streamid=a") == "expected srt://host:port?streamid=NAME: an SRT output needs the listener's port")
        #expect(OutputKind.srt.problem(with: "srt://127.0.0.1:99999") != nil)
        #expect(OutputKind.srt.problem(with: "srt://127.0.0.1:9000?mode=listener")?.contains("mode must be caller") == true)
        #expect(OutputKind.srt.problem(with: "srt://127.0.0.1:9000?mode=caller") == nil)
        for url in ["rtmp:///app/SECRETKEY", "rtmp://host-only-SECRETKEY", "rtmp://host/app/SECRET KEY"] {
            #expect(OutputKind.rtmp.problem(with: url)?.contains("SECRET") == false)
        }
    }

    @Test func secretsAreMaskedByKind() {
        #expect(OutputKind.srt.masked("srt://host:9000?streamid=#!::r=live/key,m=publish&passphrase=longsecret&latency=200")
                == "srt://host:9000?streamid=****&passphrase=****&latency=200")
        #expect(OutputKind.rtmp.masked("rtmp://user:pw@host:1935/app/key?token=x") == "rtmp://****@host:1935/app/****?****")
        #expect(OutputKind.file.masked("/r/session-1-program.mkv") == "/r/session-1-program.mkv")
        #expect(SecretMasking.maskURL("srt://host:9000?passphrase=longsecret") == "srt://host:9000?passphrase=****")
        #expect(SecretMasking.maskURL("http://host/app/key") == "http://host/app/****", "a scheme no kind takes: masked like RTMP")
        let url = "srt://host:9000?streamid=anna-contrib&passphrase=longsecret"
        #expect(OutputKind.srt.redact("libsrt: anna-contrib refused (passphrase longsecret) at \(url)", url: url)
                == "libsrt: **** refused (passphrase ****) at srt://host:9000?streamid=****&passphrase=****")
        #expect(OutputKind.rtmp.redact("publish live/abcdef refused", url: "rtmp://host/live/abcdef") == "publish live/**** refused")
    }

    /// A library's log line names the URL it failed on (libavformat's SRT protocol: passphrase and all).
    @Test func urlsInALogLineAreMasked() {
        #expect(SecretMasking.maskURLs(in: "[srt @ 0x7f] Connection to srt://127.0.0.1:9710?passphrase=very-secret-pass&streamid=pc2/cam1 failed: I/O error")
                == "[srt @ 0x7f] Connection to srt://127.0.0.1:9710?passphrase=****&streamid=**** failed: I/O error")
        #expect(SecretMasking.maskURLs(in: "rtmp://host/live/abcdef\tand rtmp://h/a/k") == "rtmp://host/live/****\tand rtmp://h/a/****")
        #expect(SecretMasking.maskURLs(in: "no URL here: 3 frames  late") == "no URL here: 3 frames  late")
    }
}
