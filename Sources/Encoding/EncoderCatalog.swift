import CFFmpeg

/// Which encoders this machine's libavcodec offers (for `studio doctor`).
public enum EncoderCatalog {
    public static func isAvailable(_ name: String) -> Bool { avcodec_find_encoder_by_name(name) != nil }
}
