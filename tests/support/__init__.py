"""What the tests share: the node oracle, a live server, stream readers and the quiet-logging fixtures."""
