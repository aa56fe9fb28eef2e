// The replies and the history's views are StudioServer's answers: whoever uses the server uses them.
@_exported import StudioViews
