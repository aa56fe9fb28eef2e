import StudioCore
