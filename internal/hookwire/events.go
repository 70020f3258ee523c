package hookwire

// Event names, as webhooks, e-mails and subscriptions carry them.
const (
	EventDepositPending    = "deposit.pending"
	EventDepositSuccess    = "deposit.success"
	EventDepositFailed     = "deposit.failed"
	EventDepositRefunded   = "deposit.refunded"
	EventSwapPending       = "swap.pending"
	EventSwapSuccess       = "swap.success"
	EventSwapFailed        = "swap.failed"
	EventWithdrawalPending = "withdrawal.pending"
	EventWithdrawalSuccess = "withdrawal.success"
	EventWithdrawalFailed  = "withdrawal.failed"
)

// EventTypes lists every event name, in the contract's order. Treat it as
// read-only; ValidEventName does not consult it.
var EventTypes = []string{
	EventDepositPending,
	EventDepositSuccess,
	EventDepositFailed,
	EventDepositRefunded,
	EventSwapPending,
	EventSwapSuccess,
	EventSwapFailed,
	EventWithdrawalPending,
	EventWithdrawalSuccess,
	EventWithdrawalFailed,
}

// ValidEventName reports whether name is one of the ten event names. The
// match is exact: case and surrounding spaces count.
func ValidEventName(name string) bool {
	switch name {
	case EventDepositPending, EventDepositSuccess, EventDepositFailed, EventDepositRefunded,
		EventSwapPending, EventSwapSuccess, EventSwapFailed,
		EventWithdrawalPending, EventWithdrawalSuccess, EventWithdrawalFailed:
		return true
	}
	return false
}
