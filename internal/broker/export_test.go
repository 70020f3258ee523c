package broker

// InFlightReads reports how many times the hub has read the transactions in
// flight.
func InFlightReads(b *Broker) uint64 { return b.inFlightReads.Load() }
