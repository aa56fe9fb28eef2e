/// A failure of the server or of its files, said in the operator's words.
public struct ServerError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
