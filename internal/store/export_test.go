package store

// ConnectFailed marks err as a failure to open a session, as the
// PostgreSQL connector does.
func ConnectFailed(err error) error { return connectFailed{err} }
