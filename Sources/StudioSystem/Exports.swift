@_exported import StudioCore
