print("studio: not wired yet")
